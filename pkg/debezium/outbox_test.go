package debezium

import (
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium/route"
)

// outboxTable is Debezium's outbox table with a text payload.
func outboxTable() *change.Table {
	varchar := change.Type{Kind: change.KindString, Name: "varchar", Precision: -1, Scale: -1, Length: 255}
	text := change.Type{Kind: change.KindString, Name: "text", Precision: -1, Scale: -1, Length: -1}
	return &change.Table{
		ID: change.TableID{DB: "shop", Schema: "public", Name: "outbox"},
		Columns: []change.Column{
			{Name: "id", Type: varchar},
			{Name: "aggregatetype", Type: varchar},
			{Name: "aggregateid", Type: varchar},
			{Name: "type", Type: varchar},
			{Name: "payload", Type: text, Optional: true},
		},
		Key:     []int{0},
		Version: 1,
	}
}

func outboxEvent(t *change.Table, op change.Op, payload change.Value) *change.Event {
	row := change.Row{change.TextValue("e-1"), change.TextValue("order"), change.TextValue("17"), change.TextValue("Created"), payload}
	return &change.Event{Table: t, Op: op, After: row,
		Source: change.Source{Block: blocks["postgresql"], Name: "shop", DB: "shop", Schema: "public", Table: "outbox"}}
}

func outboxOptions(t *testing.T) *Outbox {
	r, err := route.NewRename(`(?<routedByValue>.*)`, `outbox.event.${routedByValue}`)
	if err != nil {
		t.Fatal(err)
	}
	return &Outbox{EventID: "id", EventKey: "aggregateid", Payload: "payload", RouteBy: "aggregatetype", Topic: r}
}

// TestOutboxRecord: the defaults' record (topic, key with the key
// column's schema, the payload with its schema, the id header), envelope
// fields and header fields, without schemas, and a blank payload as a
// record without a value.
func TestOutboxRecord(t *testing.T) {
	o := outboxOptions(t)
	e := NewEncoder(Options{TopicPrefix: "shop", Outbox: o})
	_, rec, err := e.AppendOutbox(nil, outboxEvent(outboxTable(), change.OpCreate, change.TextValue(`{"a":1}`)))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Topic != "outbox.event.order" ||
		string(rec.Key) != `{"schema":{"type":"string","optional":false},"payload":"17"}` ||
		string(rec.Value) != `{"schema":{"type":"string","optional":true},"payload":"{\"a\":1}"}` ||
		len(rec.Headers) != 1 || rec.Headers[0].Key != "id" || string(rec.Headers[0].Value) != "e-1" {
		t.Errorf("record %s %s %s %+v", rec.Topic, rec.Key, rec.Value, rec.Headers)
	}

	o.Additional = []OutboxField{{Column: "type", Envelope: true, Alias: "eventType"}, {Column: "type", Alias: "eventType"}}
	e = NewEncoder(Options{TopicPrefix: "shop", Outbox: o})
	_, rec, err = e.AppendOutbox(nil, outboxEvent(outboxTable(), change.OpCreate, change.TextValue(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":{"type":"struct","fields":[{"type":"string","optional":true,"field":"payload"},{"type":"string","optional":false,"field":"eventType"}],"optional":false,"name":"shop.public.outbox.order.Value"},"payload":{"payload":"{}","eventType":"Created"}}`
	if string(rec.Value) != want || len(rec.Headers) != 2 || string(rec.Headers[1].Value) != "Created" {
		t.Errorf("envelope value\n%s\nwant\n%s\nheaders %+v", rec.Value, want, rec.Headers)
	}

	e = NewEncoder(Options{TopicPrefix: "shop", Outbox: o, Format: Format{NoSchemas: true}})
	_, rec, _ = e.AppendOutbox(nil, outboxEvent(outboxTable(), change.OpCreate, change.TextValue(`{}`)))
	if string(rec.Key) != `"17"` || string(rec.Value) != `{"payload":"{}","eventType":"Created"}` {
		t.Errorf("without schemas: %s %s", rec.Key, rec.Value)
	}

	o.Additional, o.TombstoneOnEmptyPayload = nil, true
	e = NewEncoder(Options{TopicPrefix: "shop", Outbox: o})
	for _, v := range []change.Value{{Kind: change.Null}, change.TextValue("  ")} {
		if _, rec, err = e.AppendOutbox(nil, outboxEvent(outboxTable(), change.OpCreate, v)); err != nil || rec.Value != nil || rec.Key == nil {
			t.Errorf("empty payload %v: %s %s %v", v, rec.Key, rec.Value, err)
		}
	}
}

// TestOutboxRefusals: a column the options name that the table lacks,
// and a topic Kafka refuses, stop with the setting to fix.
func TestOutboxRefusals(t *testing.T) {
	o := outboxOptions(t)
	o.Payload = "body"
	e := NewEncoder(Options{TopicPrefix: "shop", Outbox: o})
	if _, _, err := e.AppendOutbox(nil, outboxEvent(outboxTable(), change.OpCreate, change.TextValue("{}"))); err == nil ||
		!strings.Contains(err.Error(), "table_field_event_payload names column body, which the table does not have") {
		t.Errorf("missing column: %v", err)
	}
	tb := outboxTable()
	ev := outboxEvent(tb, change.OpCreate, change.TextValue("{}"))
	ev.After[1] = change.TextValue("no spaces allowed")
	e = NewEncoder(Options{TopicPrefix: "shop", Outbox: outboxOptions(t)})
	if _, _, err := e.AppendOutbox(nil, ev); err == nil || !strings.Contains(err.Error(), `"outbox.event.no spaces allowed" is not one Kafka allows`) {
		t.Errorf("bad topic: %v", err)
	}
}
