package debezium

import (
	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium/route"
)

// routing is where a table's messages go and what keys them, from the
// sink settings destination.topic and destination.key_columns.
type routing struct {
	// topic, when set, is the one topic of every table (destination.topic);
	// schema names still come from the logical name (<prefix>.<schema>.<table>),
	// so consumers tell the tables apart by the key and value schema names
	// and by source.schema / source.table.
	topic string
	// keyColumns is, per table ("schema.table" or "db.table"), the columns
	// of the message key instead of the primary key (message.key.columns).
	keyColumns map[string][]string
	// routes are the RegexRouter and ByLogicalTableRouter transforms
	// (transforms.route, transforms.reroute); nil: none.
	routes *route.Routes
}

// topicOf returns a table's topic and the base of its schema names.
func (e *Encoder) topicOf(id change.TableID) (topic, schemaBase string) {
	r := e.routeOf(id)
	return r.Topic, r.SchemaBase
}

// routeOf is where a table's records go: destination.topic, or the
// default topic as the routing transforms rename it.
func (e *Encoder) routeOf(id change.TableID) route.Routed {
	base := id.Topic(e.prefix)
	if e.routing.topic != "" {
		return route.Routed{Topic: e.routing.topic, SchemaBase: base}
	}
	return e.routing.routes.Route(base)
}

// keyOf returns the indexes of the table's key columns: the configured
// key_columns when the table has them, in their order, else its primary
// key. A configured column the table does not have is an error naming it.
func (e *Encoder) keyOf(t *change.Table) ([]int, error) {
	cols, ok := e.routing.keyColumns[t.ID.String()]
	if !ok {
		return t.Key, nil
	}
	key := make([]int, 0, len(cols))
	for _, name := range cols {
		i := columnIndex(t, name)
		if i < 0 {
			return nil, &EncodeError{Table: tableName(t), Column: name, Err: ErrTable,
				Detail: "destination.key_columns names column " + name + ", which the table does not have"}
		}
		key = append(key, i)
	}
	return key, nil
}

func columnIndex(t *change.Table, name string) int {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return i
		}
	}
	return -1
}
