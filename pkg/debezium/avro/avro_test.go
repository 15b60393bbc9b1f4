package avro_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro/avrotest"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
)

// registryURL is the Confluent API of the test registry (make services-up).
func registryURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("TRIBUTARY_TEST_SCHEMA_REGISTRY")
	if u == "" {
		u = "http://127.0.0.1:8081/apis/ccompat/v7"
	}
	resp, err := http.Get(u + "/subjects")
	if err != nil {
		t.Fatalf("the test schema registry does not answer at %s (make services-up starts it): %v", u, err)
	}
	resp.Body.Close()
	return u
}

func typ(k change.Kind, precision, scale int) change.Type {
	return change.Type{Kind: k, Precision: precision, Scale: scale, Length: -1}
}

// wide is a table with a column of each kind the PostgreSQL source maps,
// nullable and not, with defaults.
func wide(name string) *change.Table {
	elem := typ(change.KindInt32, -1, -1)
	dflt := change.IntValue(7)
	ddec := change.TextValue("1.50")
	return &change.Table{
		ID: change.TableID{DB: "shop", Schema: "public", Name: name},
		Columns: []change.Column{
			{Name: "id", Type: typ(change.KindInt64, -1, -1)},
			{Name: "b", Type: typ(change.KindBool, -1, -1), Optional: true},
			{Name: "i16", Type: typ(change.KindInt16, -1, -1), Optional: true, Default: &dflt},
			{Name: "i32", Type: typ(change.KindInt32, -1, -1)},
			{Name: "f32", Type: typ(change.KindFloat32, -1, -1), Optional: true},
			{Name: "f64", Type: typ(change.KindFloat64, -1, -1)},
			{Name: "dec", Type: typ(change.KindDecimal, 10, 2), Default: &ddec},
			{Name: "vdec", Type: typ(change.KindDecimal, -1, -1), Optional: true},
			{Name: "s", Type: typ(change.KindString, -1, -1), Optional: true},
			{Name: "j", Type: typ(change.KindJSON, -1, -1), Optional: true},
			{Name: "u", Type: typ(change.KindUUID, -1, -1), Optional: true},
			{Name: "by", Type: typ(change.KindBytes, -1, -1), Optional: true},
			{Name: "d", Type: typ(change.KindDate, -1, -1), Optional: true},
			{Name: "t", Type: typ(change.KindTime, 6, -1), Optional: true},
			{Name: "ts", Type: typ(change.KindTimestamp, 3, -1), Optional: true},
			{Name: "tstz", Type: typ(change.KindTimestampTZ, 6, -1), Optional: true},
			{Name: "arr", Type: change.Type{Kind: change.KindArray, Precision: -1, Scale: -1, Length: -1, Elem: &elem}, Optional: true},
			{Name: "odd name-1", Type: typ(change.KindString, -1, -1), Optional: true},
		},
		Key: []int{0},
	}
}

func wideRow(id int64, nulls bool) change.Row {
	if nulls {
		return change.Row{change.IntValue(id), {}, {}, change.IntValue(-5), {}, change.FloatValue(math.Inf(-1)), change.TextValue("-0.01"),
			{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}
	}
	return change.Row{change.IntValue(id), change.IntValue(1), change.IntValue(-32768), change.IntValue(math.MaxInt32), change.FloatValue(1.1),
		change.FloatValue(math.NaN()), change.TextValue("12345678.99"), change.TextValue("-3.14159"), change.TextValue("héllo \"q\" \u2603"),
		change.TextValue(`{"a":1}`), change.TextValue("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), change.BinaryValue([]byte{0, 1, 255}),
		change.IntValue(19675), change.IntValue(45296000001), change.IntValue(1700000000123000), change.IntValue(1700000000123456),
		{Kind: change.Array, Elems: []change.Value{change.IntValue(1), {}, change.IntValue(-3)}}, change.TextValue("x")}
}

// TestRecodeDecodesLikeJSON encodes changes of every kind as Debezium JSON,
// recodes them as Avro against the test registry, and decodes each record
// with the registered schema (fetched by id, as a consumer does) with an
// independent Avro library: every field equals the JSON payload's.
func TestRecodeDecodesLikeJSON(t *testing.T) {
	url := registryURL(t)
	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	rec := &avro.Recoder{Registry: reg, Key: true, Value: true}
	prefix := fmt.Sprintf("avrounit%d", time.Now().UnixNano())
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: prefix})
	tbl := wide("wide")
	src := change.Source{Block: postgres.SourceBlock, Name: prefix, DB: "shop", CommitMicros: 1_700_000_000_000_000}
	src.Ints[postgres.SourceBlock.Slot("lsn")] = 1
	src.Ints[postgres.SourceBlock.Slot("txId")] = 2
	events := []*change.Event{
		{Table: tbl, Op: change.OpCreate, After: wideRow(1, false), Source: src},
		{Table: tbl, Op: change.OpCreate, After: wideRow(2, true), Source: src},
		{Table: tbl, Op: change.OpUpdate, Before: wideRow(1, false), After: wideRow(1, true), Source: src},
		{Table: tbl, Op: change.OpDelete, Before: wideRow(2, true), Source: src},
	}
	ctx := context.Background()
	topic := enc.Topic(tbl)
	for i, ev := range events {
		key, ok, err := enc.AppendKey(nil, ev)
		if err != nil || !ok {
			t.Fatalf("event %d: key: %v %v", i, ok, err)
		}
		value, err := enc.AppendValue(nil, ev, 1_700_000_000_500_000)
		if err != nil {
			t.Fatalf("event %d: value: %v", i, err)
		}
		for _, m := range []struct {
			what string
			json []byte
			fn   func(context.Context, string, []byte) ([]byte, error)
		}{{"key", key, rec.RecodeKey}, {"value", value, rec.RecodeValue}} {
			out, err := m.fn(ctx, topic, m.json)
			if err != nil {
				t.Fatalf("event %d %s: %v", i, m.what, err)
			}
			checkRecord(t, reg, m.json, out, fmt.Sprintf("event %d %s", i, m.what))
		}
	}
	if n := rec.Registrations(); n != 2 {
		t.Errorf("%d registrations for one key and one value schema, want 2 (no registry call per record)", n)
	}
}

func checkRecord(t *testing.T, reg *avro.Confluent, jsonMsg, rec []byte, what string) {
	t.Helper()
	id, body, err := avro.ParseConfluent(rec)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	schema, err := reg.SchemaByID(context.Background(), id)
	if err != nil {
		t.Fatalf("%s: schema %d: %v", what, id, err)
	}
	decoded, s, err := avrotest.Decode(schema, body)
	if err != nil {
		t.Fatalf("%s: %v\nschema: %s", what, err, schema)
	}
	_, payload, err := avro.Split(jsonMsg)
	if err != nil {
		t.Fatal(err)
	}
	if err := avrotest.Compare(payload, s, decoded); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestSchemaAsDebeziumAvroConverter checks the derived schema of the
// envelope against what Kafka Connect's AvroData makes of the same Connect
// schema: record names, connect.* properties, unions and defaults.
func TestSchemaAsDebeziumAvroConverter(t *testing.T) {
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: "dbserver1"})
	tbl := wide("w")
	ev := &change.Event{Table: tbl, Op: change.OpCreate, After: wideRow(1, false),
		Source: change.Source{Block: postgres.SourceBlock, Name: "dbserver1", DB: "shop"}}
	value, err := enc.AppendValue(nil, ev, 0)
	if err != nil {
		t.Fatal(err)
	}
	cs, _, err := avro.Split(value)
	if err != nil {
		t.Fatal(err)
	}
	s, err := avro.FromConnect(cs)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(s.JSON), &doc); err != nil {
		t.Fatalf("schema is not JSON: %v\n%s", err, s.JSON)
	}
	for _, want := range []string{
		`{"type":"record","name":"Envelope","namespace":"dbserver1.public.w","fields":[{"name":"before","type":["null",{"type":"record","name":"Value","fields":[{"name":"id","type":"long"},`,
		`{"name":"i16","type":[{"type":"int","connect.default":7,"connect.type":"int16"},"null"],"default":7}`,
		// 1.50 is the unscaled 150: bytes 00 96, as ISO-8859-1 characters.
		strings.ReplaceAll(`{"name":"dec","type":{"type":"bytes","scale":2,"precision":10,"connect.version":1,"connect.parameters":{"scale":"2","connect.decimal.precision":"10"},"connect.default":"\u0000<96>","connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"},"default":"\u0000<96>"}`, "<96>", "\u0096"),
		`{"name":"vdec","type":["null",{"type":"record","name":"VariableScaleDecimal","namespace":"io.debezium.data","fields":[{"name":"scale","type":"int"},{"name":"value","type":"bytes"}],"connect.doc":"Variable scaled decimal","connect.version":1,"connect.name":"io.debezium.data.VariableScaleDecimal"}],"default":null}`,
		`{"name":"d","type":["null",{"type":"int","connect.version":1,"connect.name":"io.debezium.time.Date"}],"default":null}`,
		`{"name":"arr","type":["null",{"type":"array","items":["null","int"]}],"default":null}`,
		`{"name":"odd_name_1","type":["null","string"],"default":null}`,
		`"connect.name":"dbserver1.public.w.Value"}],"default":null},{"name":"after","type":["null","Value"],"default":null},{"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.postgresql"`,
		`{"name":"snapshot","type":[{"type":"string","connect.version":1,"connect.parameters":{"allowed":"true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},"connect.default":"false","connect.name":"io.debezium.data.Enum"},"null"],"default":"false"}`,
		`{"name":"transaction","type":["null",{"type":"record","name":"block","namespace":"event","fields":[{"name":"id","type":"string"},{"name":"total_order","type":"long"},{"name":"data_collection_order","type":"long"}],"connect.version":1,"connect.name":"event.block"}],"default":null}`,
		`"connect.version":2,"connect.name":"dbserver1.public.w.Envelope"}`,
	} {
		if !strings.Contains(s.JSON, want) {
			t.Errorf("schema lacks\n%s\nschema:\n%s", want, s.JSON)
		}
	}
}

// TestTopLevelOptionalStruct: an optional struct as the whole value (an
// outbox payload expanded from JSON, which Debezium infers optional) is
// registered as its record, as the converter's serializer registers a
// record value's own schema, and its values encode and decode with it; a
// nested optional struct (also in an envelope, where the record without a
// namespace says so) and an optional top-level string keep their unions
// with null.
func TestTopLevelOptionalStruct(t *testing.T) {
	s, err := avro.FromConnect([]byte(`{"type":"struct","fields":[{"type":"int32","optional":true,"field":"a"},
		{"type":"struct","fields":[{"type":"string","optional":true,"field":"c"}],"optional":true,"name":"payload.b","field":"b"}],
		"optional":true,"name":"payload"}`))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"type":"record","name":"payload","fields":[{"name":"a","type":["null","int"],"default":null},` +
		`{"name":"b","type":["null",{"type":"record","name":"b","namespace":"payload","fields":[{"name":"c","type":["null","string"],"default":null}],"connect.name":"payload.b"}],"default":null}],"connect.name":"payload"}`
	if s.JSON != want {
		t.Fatalf("schema\n%s\nwant\n%s", s.JSON, want)
	}
	roundTrips(t, s, `{"a":1,"b":{"c":"x"}}`)
	// As an envelope's field the payload is [null, record], the record in
	// no namespace inside the envelope's.
	env, err := avro.FromConnect([]byte(`{"type":"struct","fields":[{"type":"struct","fields":[],"optional":true,"name":"payload","field":"payload"}],"optional":false,"name":"shop.public.outbox.order.Value"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"payload","type":["null",{"type":"record","name":"payload","namespace":"","fields":[],"connect.name":"payload"}],"default":null}`; !strings.Contains(env.JSON, want) {
		t.Errorf("envelope schema lacks\n%s\nschema:\n%s", want, env.JSON)
	}
	str, err := avro.FromConnect([]byte(`{"type":"string","optional":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if str.JSON != `["null","string"]` {
		t.Errorf("optional string: %s", str.JSON)
	}
}

// TestUnnamedAndClashingRecords: structs without a name (an expanded
// payload's objects inside an array of arrays) are records named as
// AvroData names them, ConnectDefault, ConnectDefault2, …, an equal one
// reusing the earlier record; two different structs of one name (the
// payload keys "a.b" and "a" holding "b") have no Avro schema, and say so.
func TestUnnamedAndClashingRecords(t *testing.T) {
	const x = `{"type":"array","items":{"type":"array","items":{"type":"struct","fields":[{"type":"int32","optional":true,"field":"x"}],"optional":true},"optional":true},"optional":true`
	s, err := avro.FromConnect([]byte(`{"type":"struct","fields":[` + x + `,"field":"a"},` +
		`{"type":"array","items":{"type":"array","items":{"type":"struct","fields":[{"type":"string","optional":true,"field":"y"}],"optional":true},"optional":true},"optional":true,"field":"b"},` +
		x + `,"field":"c"}],"optional":true,"name":"payload"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[{"name":"x","type":["null","int"],"default":null}]}`,
		`{"type":"record","name":"ConnectDefault2","namespace":"io.confluent.connect.avro","fields":[{"name":"y","type":["null","string"],"default":null}]}`,
		`{"name":"c","type":["null",{"type":"array","items":["null",{"type":"array","items":["null","io.confluent.connect.avro.ConnectDefault"]}]}],"default":null}`,
	} {
		if !strings.Contains(s.JSON, want) {
			t.Errorf("schema lacks\n%s\nschema:\n%s", want, s.JSON)
		}
	}
	roundTrips(t, s, `{"a":[[{"x":1}]],"b":[[{"y":"s"}]],"c":[[{"x":2},null]]}`)
	_, err = avro.FromConnect([]byte(`{"type":"struct","fields":[` +
		`{"type":"struct","fields":[{"type":"int32","optional":true,"field":"p"}],"optional":true,"name":"payload.a.b","field":"a.b"},` +
		`{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":true,"field":"q"}],"optional":true,"name":"payload.a.b","field":"b"}],"optional":true,"name":"payload.a","field":"a"}],` +
		`"optional":true,"name":"payload"}`))
	if err == nil || !strings.Contains(err.Error(), "payload.a.b") {
		t.Errorf("two records named payload.a.b: %v", err)
	}
}

// roundTrips checks that payload, written with s, decodes by s's schema
// text to the same values.
func roundTrips(t *testing.T, s *avro.Schema, payload string) {
	t.Helper()
	body, err := s.AppendPayload(nil, []byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	decoded, hs, err := avrotest.Decode(s.JSON, body)
	if err != nil {
		t.Fatal(err)
	}
	if err := avrotest.Compare([]byte(payload), hs, decoded); err != nil {
		t.Errorf("decoded %v: %v", decoded, err)
	}
}

// TestRefusedSchemaWaits: a schema the registry refuses (incompatible with
// the subject's compatibility rule) is not skipped: RecodeValue waits,
// logging the registry's reason, until the registry takes it.
func TestRefusedSchemaWaits(t *testing.T) {
	url := registryURL(t)
	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	subject := fmt.Sprintf("avrorefused%d-value", time.Now().UnixNano())
	ctx := context.Background()
	if _, err := reg.Register(ctx, subject, `{"type":"record","name":"r","fields":[{"name":"a","type":"int"}]}`); err != nil {
		t.Fatal(err)
	}
	setCompatibility(t, url, subject, "BACKWARD")
	_, err = reg.Register(ctx, subject, `{"type":"record","name":"r","fields":[{"name":"a","type":"string"}]}`)
	var refused *avro.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(refused.Reason, "ncompatible") {
		t.Fatalf("incompatible schema: got %v, want a RefusedError with the registry's reason", err)
	}
	// Through the Recoder: it waits until ctx ends, and says so.
	rec := &avro.Recoder{Registry: reg, Value: true, RetryEvery: 50 * time.Millisecond}
	msg := `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"a"}],"optional":false,"name":"r"},"payload":{"a":"x"}}`
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	topic := strings.TrimSuffix(subject, "-value")
	if out, err := rec.RecodeValue(wctx, topic, []byte(msg)); err == nil || !errors.As(err, &refused) {
		t.Fatalf("RecodeValue = %x, %v; want it to wait and end with the refusal", out, err)
	}
	// Once the rule allows it, the same record goes through.
	setCompatibility(t, url, subject, "NONE")
	if _, err := rec.RecodeValue(ctx, topic, []byte(msg)); err != nil {
		t.Fatalf("after NONE: %v", err)
	}
}

func setCompatibility(t *testing.T, url, subject, level string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, url+"/config/"+subject, strings.NewReader(`{"compatibility":"`+level+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("setting compatibility: %v %v", err, resp)
	}
	resp.Body.Close()
}

// TestRegistryCallsBounded: a run of many records of one table, recoded
// against the test registry with the client's calls counted as the
// pipeline's metrics count them, makes one register call per subject (key
// and value), not one per record; a schema change adds one more; a
// consumer's fetch and a failed request are counted as such.
func TestRegistryCallsBounded(t *testing.T) {
	url := registryURL(t)
	calls := map[string]int{}
	failed := map[string]int{}
	count := func(kind string, f bool) {
		calls[kind]++
		if f {
			failed[kind]++
		}
	}
	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: url, Calls: count})
	if err != nil {
		t.Fatal(err)
	}
	rec := &avro.Recoder{Registry: reg, Key: true, Value: true}
	prefix := fmt.Sprintf("avrocalls%d", time.Now().UnixNano())
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: prefix})
	tbl := wide("wide")
	src := change.Source{Block: postgres.SourceBlock, Name: prefix, DB: "shop", CommitMicros: 1_700_000_000_000_000}
	ctx := context.Background()
	topic := enc.Topic(tbl)
	recode := func(tbl *change.Table, n int) (last []byte) {
		for i := range n {
			row := wideRow(int64(i), i%2 == 0)
			for len(row) < len(tbl.Columns) {
				row = append(row, change.TextValue("more"))
			}
			ev := &change.Event{Table: tbl, Op: change.OpCreate, After: row, Source: src}
			key, _, err := enc.AppendKey(nil, ev)
			if err != nil {
				t.Fatal(err)
			}
			value, err := enc.AppendValue(nil, ev, 1_700_000_000_500_000)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rec.RecodeKey(ctx, topic, key); err != nil {
				t.Fatal(err)
			}
			if last, err = rec.RecodeValue(ctx, topic, value); err != nil {
				t.Fatal(err)
			}
		}
		return last
	}
	const n = 2000
	last := recode(tbl, n)
	if calls[avro.CallRegister] != 2 || len(calls) != 1 {
		t.Errorf("%d records: registry calls %v, want register 2 (key and value, once each)", n, calls)
	}
	// A column added: one new value schema (the key's is the same).
	grown := wide("wide")
	grown.Columns = append(grown.Columns, change.Column{Name: "extra", Type: typ(change.KindString, -1, -1), Optional: true})
	recode(grown, n)
	if calls[avro.CallRegister] != 3 {
		t.Errorf("after a schema change: register calls %d, want 3", calls[avro.CallRegister])
	}
	id, _, err := avro.ParseConfluent(last)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.SchemaByID(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.SchemaByID(ctx, 1<<31-1); err == nil {
		t.Fatal("schema id 2^31-1 found")
	}
	if calls[avro.CallFetch] != 2 || failed[avro.CallFetch] != 1 || failed[avro.CallRegister] != 0 {
		t.Errorf("calls %v, failed %v; want fetch 2 with 1 failed, no failed register", calls, failed)
	}
}
