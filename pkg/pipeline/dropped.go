package pipeline

import "github.com/tributary-cdc/tributary/pkg/change"

// reportDropped warns about the columns the encoder leaves out of t's
// messages and sets tributary_columns_dropped, once per table version:
// at the first event of each table after start-up and after every schema
// change (sources make a new *change.Table only then). No column goes
// missing silently.
func (p *Pipeline) reportDropped(t *change.Table) {
	if p.reported == nil {
		p.reported = map[*change.Table]bool{}
	}
	if p.reported[t] {
		return
	}
	p.reported[t] = true
	dropped := p.Encoder.Dropped(t)
	for _, c := range dropped {
		p.Log.Warn("column left out of messages: Tributary cannot encode its type (set source.include_unknown_types to publish it as text)",
			"table", t.ID.String(), "column", c.Name, "type", c.Type.Name)
	}
	p.Metrics.ColumnsDropped(t.ID.String(), len(dropped))
}

// reportNoColumns warns, once per table, that t's rows are not published:
// a table without columns (PostgreSQL allows one, and rows in it), or
// whose every column is excluded, has no row to put in a message and no
// key, as Debezium, which skips its snapshot, has none either. Its changes pass without a record; a column
// added later makes a new shape, whose rows are published.
func (p *Pipeline) reportNoColumns(t *change.Table) {
	id := t.ID.String()
	if p.noColumns[id] {
		return
	}
	if p.noColumns == nil {
		p.noColumns = map[string]bool{}
	}
	p.noColumns[id] = true
	p.Log.Warn("table has no columns to publish (it has none, or source.exclude_columns leaves out every one): its rows are not published", "table", id)
}

// reportBareUpdate warns, once per table, that an update was published
// with a null before: its old row (REPLICA IDENTITY FULL) holds a value
// the format cannot write (NaN or ±Infinity in a NOT NULL numeric under
// decimal_handling precise), while its new row can be written.
func (p *Pipeline) reportBareUpdate(t *change.Table) {
	id := t.ID.String()
	if p.bareUpdates[id] {
		return
	}
	if p.bareUpdates == nil {
		p.bareUpdates = map[string]bool{}
	}
	p.bareUpdates[id] = true
	p.Log.Warn("an update is published with before null: its old row holds NaN or Infinity in a NOT NULL numeric, which decimal_handling precise cannot write (string or double can); its new row is published",
		"table", id)
}
