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

// TestOutboxExpandedOrString: AppendOutbox says when it expanded the
// payload; AppendOutboxString writes the same event with the payload as
// the string (for a value format without a form for the inferred schema).
func TestOutboxExpandedOrString(t *testing.T) {
	o := outboxOptions(t)
	o.ExpandJSONPayload = true
	e := NewEncoder(Options{TopicPrefix: "shop", Outbox: o})
	ev := outboxEvent(outboxTable(), change.OpCreate, change.TextValue(`{"a":1}`))
	_, rec, err := e.AppendOutbox(nil, ev)
	if err != nil || !rec.Expanded || !strings.Contains(string(rec.Value), `"payload":{"a":1}`) {
		t.Fatalf("expanded: %v %v %s", err, rec.Expanded, rec.Value)
	}
	_, rec, err = e.AppendOutboxString(nil, ev)
	if err != nil || rec.Expanded || !strings.Contains(string(rec.Value), `"payload":"{\"a\":1}"`) || rec.Warning != "" {
		t.Fatalf("as the string: %v %v %s %q", err, rec.Expanded, rec.Value, rec.Warning)
	}
	_, rec, _ = e.AppendOutbox(nil, outboxEvent(outboxTable(), change.OpCreate, change.TextValue(`{oops`)))
	if rec.Expanded {
		t.Errorf("invalid JSON: Expanded")
	}
}

// TestOutboxExpandJSONPayload: with ExpandJSONPayload a payload holding a
// JSON object is written as that object with the schema EventRouter
// infers (nested structs named by their path, int32/int64/float64 by the
// number, a null field and an empty array left out of the schema, an
// array of objects' fields merged); one that cannot be expanded stays the
// string, with a warning that does not quote it.
func TestOutboxExpandJSONPayload(t *testing.T) {
	o := outboxOptions(t)
	o.ExpandJSONPayload = true
	e := NewEncoder(Options{TopicPrefix: "shop", Outbox: o})
	payload := `{"n":{"x":1,"y":null},"arr":[{"a":1},{"a":2,"b":"s\u00e9\n"}],"same":[{"a":1},null],"i":2147483648,"f":12345678.9,"t":true,"e":[],"o":{},"aa":[[{"k":{"v":1}}]],"":null}`
	_, rec, err := e.AppendOutbox(nil, outboxEvent(outboxTable(), change.OpCreate, change.TextValue(payload)))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":{"type":"struct","fields":[` +
		`{"type":"struct","fields":[{"type":"int32","optional":true,"field":"x"}],"optional":true,"name":"payload.n","field":"n"},` +
		`{"type":"array","items":{"type":"struct","fields":[{"type":"int32","optional":true,"field":"a"},{"type":"string","optional":true,"field":"b"}],"optional":false,"name":"payload.arr"},"optional":true,"field":"arr"},` +
		`{"type":"array","items":{"type":"struct","fields":[{"type":"int32","optional":true,"field":"a"}],"optional":true,"name":"payload.same"},"optional":true,"field":"same"},` +
		`{"type":"int64","optional":true,"field":"i"},{"type":"double","optional":true,"field":"f"},{"type":"boolean","optional":true,"field":"t"},` +
		`{"type":"struct","fields":[],"optional":true,"name":"payload.o","field":"o"},` +
		`{"type":"array","items":{"type":"array","items":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":true,"field":"v"}],"optional":true,"name":"k","field":"k"}],"optional":true},"optional":true},"optional":true,"field":"aa"}` +
		`],"optional":true,"name":"payload"},"payload":` +
		`{"n":{"x":1},"arr":[{"a":1,"b":null},{"a":2,"b":"sé\n"}],"same":[{"a":1},null],"i":2147483648,"f":1.23456789E7,"t":true,"o":{},"aa":[[{"k":{"v":1}}]]}}`
	if string(rec.Value) != want || rec.Warning != "" {
		t.Errorf("expanded value\n%s\nwant\n%s\nwarning %q", rec.Value, want, rec.Warning)
	}

	for _, bad := range []string{`{"a": `, `secret text`, `{"m":[1,"x"]}`, `{"m":[1,3000000000]}`, `{"m":[null]}`, `[{"a":1}]`, `{"m":[{"a":1},{"b":2},null]}`, `{"":{"":1}}`, `{"big":99999999999999999999}`} {
		_, rec, err := e.AppendOutbox(nil, outboxEvent(outboxTable(), change.OpCreate, change.TextValue(bad)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(rec.Value), `{"type":"string","optional":true},"payload":`) || rec.Warning == "" || strings.Contains(rec.Warning, "secret") {
			t.Errorf("%s: value %s, warning %q", bad, rec.Value, rec.Warning)
		}
	}
	// Nested past Jackson's depth limit: the string, and the warning says
	// why (the text is valid JSON); at the limit it is expanded.
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	if _, rec, _ = e.AppendOutbox(nil, outboxEvent(outboxTable(), change.OpCreate, change.TextValue(deep(1001)))); !strings.Contains(rec.Warning, "nested deeper than 1000 levels") {
		t.Errorf("1,001 levels: warning %q", rec.Warning)
	}
	emptyObject := `{"x":` + strings.Repeat("[", 999) + "{}" + strings.Repeat("]", 999) + "}"
	if _, rec, _ = e.AppendOutbox(nil, outboxEvent(outboxTable(), change.OpCreate, change.TextValue(emptyObject))); !strings.Contains(rec.Warning, "nested deeper than 1000 levels") {
		t.Errorf("1,001 levels ending in an empty object: warning %q", rec.Warning)
	}
	if _, rec, _ = e.AppendOutbox(nil, outboxEvent(outboxTable(), change.OpCreate, change.TextValue(deep(1000)))); rec.Warning != "" {
		t.Errorf("1,000 levels: warning %q", rec.Warning)
	}
	// A null payload is a null, without a warning.
	if _, rec, _ = e.AppendOutbox(nil, outboxEvent(outboxTable(), change.OpCreate, change.Value{Kind: change.Null})); rec.Warning != "" {
		t.Errorf("null payload: warning %q", rec.Warning)
	}

	// With envelope fields the value struct's schema is named after the
	// route-by value of the first event with that payload schema.
	o.Additional = []OutboxField{{Column: "type", Envelope: true, Alias: "eventType"}}
	e = NewEncoder(Options{TopicPrefix: "shop", Outbox: o})
	ev := outboxEvent(outboxTable(), change.OpCreate, change.TextValue(`{"a":1}`))
	e.AppendOutbox(nil, ev)
	ev.After[1] = change.TextValue("customer")
	_, rec, _ = e.AppendOutbox(nil, ev)
	want = `{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":true,"field":"a"}],"optional":true,"name":"payload","field":"payload"},` +
		`{"type":"string","optional":false,"field":"eventType"}],"optional":false,"name":"shop.public.outbox.order.Value"},"payload":{"payload":{"a":1},"eventType":"Created"}}`
	if rec.Topic != "outbox.event.customer" || string(rec.Value) != want {
		t.Errorf("envelope: %s\n%s\nwant\n%s", rec.Topic, rec.Value, want)
	}
	e = NewEncoder(Options{TopicPrefix: "shop", Outbox: o, Format: Format{NoSchemas: true}})
	if _, rec, _ = e.AppendOutbox(nil, ev); string(rec.Value) != `{"payload":{"a":1},"eventType":"Created"}` {
		t.Errorf("without schemas: %s", rec.Value)
	}
}
