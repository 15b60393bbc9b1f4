package config

import (
	"errors"
	"strings"
	"testing"
)

// The outbox router's defaults are Debezium's.
func TestOutboxDefaults(t *testing.T) {
	cfg := mustParse(t, validYAML+"transforms:\n  outbox:\n    enabled: true\n    table_fields_additional_placement: ['type:header:eventType', 'aggregateid:envelope']\n")
	o := cfg.Transforms.Outbox.Effective()
	if o.TableFieldEventID != "id" || o.TableFieldEventKey != "aggregateid" || o.TableFieldEventPayload != "payload" ||
		o.RouteByField != "aggregatetype" || o.TableOpInvalidBehavior != "warn" {
		t.Errorf("defaults %+v", o)
	}
	if topic, ok := cfg.Transforms.Outbox.OutboxTopic().Apply("order"); !ok || topic != "outbox.event.order" {
		t.Errorf("topic %q %v", topic, ok)
	}
	p := cfg.Transforms.Outbox.Placements()
	if len(p) != 2 || p[0] != (OutboxPlacement{Column: "type", Alias: "eventType"}) || p[1] != (OutboxPlacement{Column: "aggregateid", Envelope: true, Alias: "aggregateid"}) {
		t.Errorf("placements %+v", p)
	}
}

// Every wrong outbox setting is named.
func TestOutboxRules(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      map[string]string
	}{
		{"settings without enabled", "transforms:\n  outbox:\n    route_by_field: kind\n", map[string]string{
			"transforms.outbox.enabled": "apply only with enabled: true"}},
		{"bad values", "transforms:\n  outbox:\n    enabled: true\n    table_op_invalid_behavior: ignore\n    route_topic_regex: '(x'\n" +
			"    table_fields_additional_placement: ['type:partition', 'x']\n", map[string]string{
			"transforms.outbox.table_op_invalid_behavior":         "must be warn, error or fatal",
			"transforms.outbox.route_topic_regex":                 "not a valid regular expression",
			"transforms.outbox.table_fields_additional_placement": `entry 2, "x", must be column:header or column:envelope`,
		}},
		{"bad replacement", "transforms:\n  outbox:\n    enabled: true\n    route_topic_replacement: 'events.${t}'\n", map[string]string{
			"transforms.outbox.route_topic_replacement": "no group named t"}},
		{"with other transforms", "transforms:\n  outbox:\n    enabled: true\n  route:\n    regex: a\n    replacement: b\nformat:\n  unwrap: true\n", map[string]string{
			"transforms.outbox": "remove format.unwrap"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse([]byte(validYAML+tc.doc), testEnv)
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error %v", err)
			}
			got := map[string][]string{}
			for _, p := range errs.Problems {
				got[p.Field] = append(got[p.Field], p.Message)
			}
			for f, msg := range tc.want {
				if !strings.Contains(strings.Join(got[f], "\n"), msg) {
					t.Errorf("%s: %q, want it to say %q (all: %v)", f, got[f], msg, err)
				}
			}
		})
	}
}

// The outbox router with Avro keys and values: taken (the records are
// recoded as Debezium's AvroConverter writes the router's).
func TestOutboxWithAvro(t *testing.T) {
	doc := validYAML + "transforms:\n  outbox:\n    enabled: true\n" +
		"format:\n  key: avro\n  value: avro\n  schema_registry: {type: confluent, url: 'http://127.0.0.1:8080'}\n"
	c, err := parse([]byte(doc), testEnv)
	if err != nil || !c.Transforms.Outbox.Enabled || !c.Format.AvroValue() {
		t.Fatalf("outbox with avro: %v", err)
	}
}

// table_expand_json_payload: taken with JSON values and with Avro values.
func TestOutboxExpandJSONPayload(t *testing.T) {
	doc := validYAML + "transforms:\n  outbox:\n    enabled: true\n    table_expand_json_payload: true\n"
	if c, err := parse([]byte(doc), testEnv); err != nil || !c.Transforms.Outbox.TableExpandJSONPayload {
		t.Fatalf("expand with JSON: %v", err)
	}
	c, err := parse([]byte(doc+"format:\n  value: avro\n  schema_registry: {type: confluent, url: 'http://127.0.0.1:8080'}\n"), testEnv)
	if err != nil || !c.Transforms.Outbox.TableExpandJSONPayload || !c.Format.AvroValue() {
		t.Errorf("expand with Avro values: %v", err)
	}
}
