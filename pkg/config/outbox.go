package config

import (
	"reflect"
	"slices"
	"strings"

	"github.com/tributary-cdc/tributary/pkg/debezium/route"
)

// Outbox is Debezium's outbox event router
// (io.debezium.transforms.outbox.EventRouter), applied, as Debezium
// applies it, to every captured table: list only the outbox table in
// source.tables. Each key is the transform's option with '.' written '_'.
type Outbox struct {
	// Enabled turns the router on. Default false.
	Enabled bool `yaml:"enabled" json:"enabled"`
	// TableFieldEventID (table.field.event.id): the event id column,
	// published as the header "id". Default id.
	TableFieldEventID string `yaml:"table_field_event_id" json:"table_field_event_id"`
	// TableFieldEventKey (table.field.event.key): the key column.
	// Default aggregateid.
	TableFieldEventKey string `yaml:"table_field_event_key" json:"table_field_event_key"`
	// TableFieldEventPayload (table.field.event.payload): the value
	// column. Default payload.
	TableFieldEventPayload string `yaml:"table_field_event_payload" json:"table_field_event_payload"`
	// RouteByField (route.by.field): the column whose value names the
	// topic. Default aggregatetype.
	RouteByField string `yaml:"route_by_field" json:"route_by_field"`
	// RouteTopicRegex (route.topic.regex), matched against the route-by
	// value. Default (?<routedByValue>.*).
	RouteTopicRegex string `yaml:"route_topic_regex" json:"route_topic_regex"`
	// RouteTopicReplacement (route.topic.replacement). Default
	// outbox.event.${routedByValue}.
	RouteTopicReplacement string `yaml:"route_topic_replacement" json:"route_topic_replacement"`
	// TableOpInvalidBehavior (table.op.invalid.behavior): what an update
	// of the outbox table does: warn (default), error (both logged, the
	// update dropped) or fatal (the pipeline stops).
	TableOpInvalidBehavior string `yaml:"table_op_invalid_behavior" json:"table_op_invalid_behavior"`
	// TableFieldsAdditionalPlacement (table.fields.additional.placement):
	// column:header[:alias] or column:envelope[:alias]. Default none.
	TableFieldsAdditionalPlacement []string `yaml:"table_fields_additional_placement" json:"table_fields_additional_placement"`
	// RouteTombstoneOnEmptyPayload (route.tombstone.on.empty.payload): an
	// event with a null or blank payload has no value. Default false.
	RouteTombstoneOnEmptyPayload bool `yaml:"route_tombstone_on_empty_payload" json:"route_tombstone_on_empty_payload"`
	// TableExpandJSONPayload (table.expand.json.payload): a string payload
	// holding a JSON object is published as that object, with a schema
	// inferred from it (with Avro values, registered as Debezium's
	// AvroConverter registers it). Default false.
	TableExpandJSONPayload bool `yaml:"table_expand_json_payload" json:"table_expand_json_payload"`
}

// The outbox router's defaults, Debezium's.
const (
	DefaultOutboxEventID           = "id"
	DefaultOutboxEventKey          = "aggregateid"
	DefaultOutboxPayload           = "payload"
	DefaultOutboxRouteBy           = "aggregatetype"
	DefaultOutboxTopicRegex        = "(?<routedByValue>.*)"
	DefaultOutboxTopicReplacement  = "outbox.event.${routedByValue}"
	DefaultOutboxOpInvalidBehavior = "warn"
)

var outboxInvalidBehaviors = []string{"warn", "error", "fatal"}

// Effective returns o with every key left out set to its default.
func (o Outbox) Effective() Outbox {
	setDefault(&o.TableFieldEventID, DefaultOutboxEventID)
	setDefault(&o.TableFieldEventKey, DefaultOutboxEventKey)
	setDefault(&o.TableFieldEventPayload, DefaultOutboxPayload)
	setDefault(&o.RouteByField, DefaultOutboxRouteBy)
	setDefault(&o.RouteTopicRegex, DefaultOutboxTopicRegex)
	setDefault(&o.RouteTopicReplacement, DefaultOutboxTopicReplacement)
	setDefault(&o.TableOpInvalidBehavior, DefaultOutboxOpInvalidBehavior)
	return o
}

// OutboxPlacement is one parsed entry of table_fields_additional_placement.
type OutboxPlacement struct {
	Column   string
	Envelope bool
	Alias    string
}

// Placements parses TableFieldsAdditionalPlacement (valid entries only).
func (o Outbox) Placements() []OutboxPlacement {
	var out []OutboxPlacement
	for _, e := range o.TableFieldsAdditionalPlacement {
		if p, ok := parsePlacement(e); ok {
			out = append(out, p)
		}
	}
	return out
}

func parsePlacement(e string) (OutboxPlacement, bool) {
	parts := strings.Split(e, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
		return OutboxPlacement{}, false
	}
	p := OutboxPlacement{Column: parts[0], Alias: parts[0]}
	switch parts[1] {
	case "envelope":
		p.Envelope = true
	case "header":
	default:
		return OutboxPlacement{}, false
	}
	if len(parts) == 3 && parts[2] != "" {
		p.Alias = parts[2]
	}
	return p, true
}

// OutboxTopic compiles the effective route_topic_regex and replacement;
// nil when they are wrong (Validate reports it).
func (o Outbox) OutboxTopic() *route.Rename {
	e := o.Effective()
	r, err := route.NewRename(e.RouteTopicRegex, e.RouteTopicReplacement)
	if err != nil {
		return nil
	}
	return r
}

func (v validator) outbox(c *Config) {
	o := c.Transforms.Outbox
	const f = "transforms.outbox."
	if !o.Enabled {
		rest := o
		rest.TableFieldsAdditionalPlacement = nil
		if len(o.TableFieldsAdditionalPlacement) > 0 || !reflect.DeepEqual(rest, Outbox{}) {
			v.add(f+"enabled", "the outbox settings apply only with enabled: true")
		}
		return
	}
	e := o.Effective()
	if c.Transforms.Reroute.set() || c.Transforms.Route.set() || c.Destination.Topic != "" {
		v.add("transforms.outbox", "names each event's topic itself; remove transforms.reroute, transforms.route and destination.topic")
	}
	if c.Format.Unwrap {
		v.add("transforms.outbox", "writes the payload column as the value: remove format.unwrap")
	}
	if len(c.Destination.PartitionColumn) > 0 {
		v.add("transforms.outbox", "keys each event by its key column: remove destination.partition_column")
	}
	if !slices.Contains(outboxInvalidBehaviors, e.TableOpInvalidBehavior) {
		v.add(f+"table_op_invalid_behavior", "must be %s", oneOf(outboxInvalidBehaviors))
	}
	if _, err := route.NewRename(e.RouteTopicRegex, e.RouteTopicReplacement); err != nil {
		var re *route.Error
		if asRouteError(err, &re) && re.Part == route.PartRegex {
			v.add(f+"route_topic_regex", "%s", err.Error())
		} else {
			v.add(f+"route_topic_replacement", "%s", err.Error())
		}
	}
	for i, p := range o.TableFieldsAdditionalPlacement {
		if _, ok := parsePlacement(p); !ok {
			v.add(f+"table_fields_additional_placement", "entry %d, %s, must be column:header or column:envelope, with an optional :alias", i+1, v.quote(f+"table_fields_additional_placement", p))
		}
	}
}
