package debezium

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// customers is inventory.customers from Debezium's tutorial database:
//
//	CREATE TABLE customers (id SERIAL PRIMARY KEY, first_name VARCHAR(255) NOT NULL,
//	  last_name VARCHAR(255) NOT NULL, email VARCHAR(255) NOT NULL UNIQUE);
func customers() *change.Table {
	varchar := change.Type{Kind: change.KindString, Name: "varchar", Precision: -1, Scale: -1, Length: 255}
	return &change.Table{
		ID: change.TableID{DB: "postgres", Schema: "inventory", Name: "customers"},
		Columns: []change.Column{
			{Name: "id", Type: change.Type{Kind: change.KindInt32, Name: "int4", Precision: -1, Scale: -1, Length: -1}},
			{Name: "first_name", Type: varchar},
			{Name: "last_name", Type: varchar},
			{Name: "email", Type: varchar},
		},
		Key:     []int{0},
		Version: 1,
	}
}

func customerRow(id int64, first, last, email string) change.Row {
	return change.Row{change.IntValue(id), change.TextValue(first), change.TextValue(last), change.TextValue(email)}
}

// goldenUpdateValue is the value of an UPDATE on inventory.customers as
// Debezium 3.1.3.Final's PostgreSQL connector emitted it through
// JsonConverter (schemas.enable=true) in the Debezium tutorial setup
// (debezium-examples tutorial/docker-compose-postgres.yaml, pgoutput,
// topic.prefix=dbserver1), copied from a captured kafka-console-consumer
// line quoted in a public CDC walkthrough. Three deliberate edits:
//   - the id field's schema has no "default":0 (Debezium emits column
//     defaults; we do not yet);
//   - source.version is our Version, 3.6.1.Final;
//   - the top-level ts_ns ends in 000 (we take processing time in µs;
//     Debezium's was ...873428925).
//
// Everything else — key order, envelope version 2, source schema version 1,
// the snapshot enum, the transaction block, null xmin — is as captured
// (origin and origin_lsn, new in 3.6, added from integration/debezium's output).
const goldenUpdateValue = `{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"first_name"},{"type":"string","optional":false,"field":"last_name"},{"type":"string","optional":false,"field":"email"}],"optional":true,"name":"dbserver1.inventory.customers.Value","field":"before"},{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"first_name"},{"type":"string","optional":false,"field":"last_name"},{"type":"string","optional":false,"field":"email"}],"optional":true,"name":"dbserver1.inventory.customers.Value","field":"after"},{"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},{"type":"string","optional":false,"field":"connector"},{"type":"string","optional":false,"field":"name"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},"default":"false","field":"snapshot"},{"type":"string","optional":false,"field":"db"},{"type":"string","optional":true,"field":"sequence"},{"type":"int64","optional":true,"field":"ts_us"},{"type":"int64","optional":true,"field":"ts_ns"},{"type":"string","optional":false,"field":"schema"},{"type":"string","optional":false,"field":"table"},{"type":"int64","optional":true,"field":"txId"},{"type":"int64","optional":true,"field":"lsn"},{"type":"int64","optional":true,"field":"xmin"},{"type":"string","optional":true,"field":"origin"},{"type":"int64","optional":true,"field":"origin_lsn"}],"optional":false,"name":"io.debezium.connector.postgresql.Source","version":1,"field":"source"},{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"},{"type":"int64","optional":false,"field":"total_order"},{"type":"int64","optional":false,"field":"data_collection_order"}],"optional":true,"name":"event.block","version":1,"field":"transaction"},{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"},{"type":"int64","optional":true,"field":"ts_us"},{"type":"int64","optional":true,"field":"ts_ns"}],"optional":false,"name":"dbserver1.inventory.customers.Envelope","version":2},"payload":{"before":{"id":1006,"first_name":"Liam","last_name":"Han","email":"liam2@example.com"},"after":{"id":1006,"first_name":"Liam","last_name":"Han","email":"liam3@example.com"},"source":{"version":"3.6.1.Final","connector":"postgresql","name":"dbserver1","ts_ms":1766925059528,"snapshot":"false","db":"postgres","sequence":"[\"34389280\",\"34389336\"]","ts_us":1766925059528750,"ts_ns":1766925059528750000,"schema":"inventory","table":"customers","txId":779,"lsn":34389336,"xmin":null,"origin":null,"origin_lsn":null},"transaction":null,"op":"u","ts_ms":1766925059873,"ts_us":1766925059873428,"ts_ns":1766925059873428000}}`

// goldenUpdateKey is the matching key, shaped as in Debezium's PostgreSQL
// connector documentation ("Change event keys": a struct named
// <topic>.Key holding the primary key columns, optional false), again
// without the column default.
const goldenUpdateKey = `{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"dbserver1.inventory.customers.Key"},"payload":{"id":1006}}`

func goldenUpdateEvent() *change.Event {
	return &change.Event{
		Table:  customers(),
		Op:     change.OpUpdate,
		Before: customerRow(1006, "Liam", "Han", "liam2@example.com"),
		After:  customerRow(1006, "Liam", "Han", "liam3@example.com"),
		Source: with(change.Source{
			Block:        blocks["postgresql"],
			Name:         "dbserver1",
			DB:           "postgres",
			Schema:       "inventory",
			Table:        "customers",
			CommitMicros: 1766925059528750,
			Sequence:     `["34389280","34389336"]`,
		}, "txId", 779, "lsn", 34389336),
	}
}

func TestGoldenPostgresUpdate(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "dbserver1"})
	ev := goldenUpdateEvent()
	if got := e.Topic(ev.Table); got != "dbserver1.inventory.customers" {
		t.Errorf("topic %q", got)
	}
	key, ok, err := e.AppendKey(nil, ev)
	if err != nil || !ok {
		t.Fatalf("AppendKey: ok=%v err=%v", ok, err)
	}
	value, err := e.AppendValue(nil, ev, 1766925059873428)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"key", string(key), goldenUpdateKey},
		{"value", string(value), goldenUpdateValue},
	} {
		// Structure first, for a readable failure...
		var g, w any
		if err := json.Unmarshal([]byte(c.got), &g); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := json.Unmarshal([]byte(c.want), &w); err != nil {
			t.Fatalf("golden %s: %v", c.name, err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s differs in structure:\n got %s\nwant %s", c.name, c.got, c.want)
			continue
		}
		// ...then bytes, which also pins key order and number formatting.
		if c.got != c.want {
			i := 0
			for i < len(c.got) && i < len(c.want) && c.got[i] == c.want[i] {
				i++
			}
			t.Errorf("%s differs in bytes at %d:\n got …%s\nwant …%s", c.name, i, tail(c.got, i), tail(c.want, i))
		}
	}
}

func tail(s string, i int) string {
	s = s[max(0, i-40):]
	return s[:min(len(s), 120)]
}

// canonicalSchemaKeys is JsonConverter.asJsonSchema's key order.
var canonicalSchemaKeys = []string{"type", "fields", "optional", "name", "version", "doc", "parameters", "default", "field"}

// TestSchemaKeyOrder walks every schema object of a value with many column
// types and checks its keys come in JsonConverter's order.
func TestSchemaKeyOrder(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "shop"})
	ev := benchEvent()
	value, err := e.AppendValue(nil, ev, 1)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := e.AppendKey(nil, ev)
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range [][]byte{value, key} {
		if !json.Valid(msg) {
			t.Fatalf("invalid JSON: %s", msg)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(msg, &top); err != nil {
			t.Fatal(err)
		}
		if k := objectKeys(t, msg); !reflect.DeepEqual(k, []string{"schema", "payload"}) {
			t.Errorf("top-level keys %v", k)
		}
		n := checkSchemaOrder(t, top["schema"])
		if n < 2 {
			t.Errorf("only %d schema objects checked", n)
		}
	}
}

// checkSchemaOrder checks one schema object and, recursively, its fields;
// it returns how many schema objects it checked.
func checkSchemaOrder(t *testing.T, raw json.RawMessage) int {
	t.Helper()
	keys := objectKeys(t, raw)
	pos := 0
	for _, k := range keys {
		for pos < len(canonicalSchemaKeys) && canonicalSchemaKeys[pos] != k {
			pos++
		}
		if pos == len(canonicalSchemaKeys) {
			t.Errorf("schema keys %v not in JsonConverter order %v: %s", keys, canonicalSchemaKeys, raw)
			return 1
		}
	}
	var s struct {
		Fields []json.RawMessage `json:"fields"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	n := 1
	for _, f := range s.Fields {
		n += checkSchemaOrder(t, f)
	}
	return n
}

// objectKeys returns the keys of a JSON object in document order.
func objectKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var keys []string
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func decodePayload(t *testing.T, msg []byte) map[string]any {
	t.Helper()
	var m struct {
		Payload map[string]any `json:"payload"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	return m.Payload
}

func TestDeleteAndSnapshotRead(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "dbserver1"})
	// A delete under REPLICA IDENTITY DEFAULT: the old row has the key only.
	del := &change.Event{
		Table:  customers(),
		Op:     change.OpDelete,
		Before: change.Row{change.IntValue(7), {}, {}, {}},
		Source: with(change.Source{Block: blocks["postgresql"], CommitMicros: 2_000_000}, "txId", 5, "lsn", 99),
	}
	key, ok, err := e.AppendKey(nil, del)
	if err != nil || !ok || !strings.HasSuffix(string(key), `"payload":{"id":7}}`) {
		t.Fatalf("delete key %s ok=%v err=%v", key, ok, err)
	}
	value, err := e.AppendValue(nil, del, 3_000_001)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(value), `"payload":{"before":{"id":7,"first_name":"","last_name":"","email":""},"after":null,"source":{`) {
		t.Errorf("delete payload: %s", value)
	}
	p := decodePayload(t, value)
	if p["op"] != "d" || p["ts_ms"] != 3000.0 || p["ts_us"] != 3000001.0 {
		t.Errorf("delete envelope: %v", p)
	}
	src := p["source"].(map[string]any)
	// Empty source names fall back to the prefix and the table's ID.
	want := map[string]any{"version": Version, "connector": "postgresql", "name": "dbserver1", "ts_ms": 2000.0, "snapshot": "false",
		"db": "postgres", "sequence": nil, "ts_us": 2e6, "ts_ns": 2e9, "schema": "inventory", "table": "customers",
		"txId": 5.0, "lsn": 99.0, "xmin": nil, "origin": nil, "origin_lsn": nil}
	if !reflect.DeepEqual(src, want) {
		t.Errorf("source block\n got %v\nwant %v", src, want)
	}

	read := &change.Event{
		Table:  customers(),
		Op:     change.OpRead,
		After:  customerRow(1, "Sally", "Thomas", "sally.thomas@acme.com"),
		Source: change.Source{Block: blocks["postgresql"], Snapshot: "last", CommitMicros: -1500}, // before 1970: floor
	}
	value, err = e.AppendValue(nil, read, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(value), `"source":{"version":"3.6.1.Final","connector":"postgresql","name":"dbserver1","ts_ms":-2,"snapshot":"last","db":"postgres","sequence":null,"ts_us":-1500,"ts_ns":-1500000,`) ||
		!strings.Contains(string(value), `"txId":null,"lsn":null,"xmin":null,"origin":null,"origin_lsn":null},"transaction":null,"op":"r","ts_ms":0,"ts_us":0,"ts_ns":0}}`) ||
		!strings.Contains(string(value), `"before":null,"after":{"id":1,`) {
		t.Errorf("snapshot read: %s", value)
	}
}

func TestNoPrimaryKey(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "p"})
	tbl := customers()
	tbl.Key = nil
	ev := &change.Event{Table: tbl, Op: change.OpCreate, After: customerRow(1, "a", "b", "c"), Source: pgSource}
	dst := []byte("prefix")
	out, ok, err := e.AppendKey(dst, ev)
	if ok || err != nil || string(out) != "prefix" {
		t.Errorf("got %q ok=%v err=%v", out, ok, err)
	}
	// The value still encodes.
	if _, err := e.AppendValue(nil, ev, 0); err != nil {
		t.Error(err)
	}
}

// TestUnencodableKeyColumnRefused: a key column of a type the encoder
// cannot encode is never left out of the key (rows that differ only there
// would share one): the table's messages are refused, naming the table and
// the column, unless IncludeUnknownTypes publishes the column as bytes.
func TestUnencodableKeyColumnRefused(t *testing.T) {
	tbl := &change.Table{ID: change.TableID{DB: "shop", Name: "t"}, Columns: []change.Column{
		{Name: "id", Type: change.Type{Kind: change.KindInt32, Name: "int"}},
		{Name: "v", Type: change.Type{Kind: change.KindUnknown, Name: "vector", Precision: -1, Scale: -1, Length: -1}},
	}, Key: []int{0, 1}}
	ev := func(v string) *change.Event {
		return &change.Event{Table: tbl, Op: change.OpCreate, After: change.Row{change.IntValue(1), change.BinaryValue([]byte(v))}, Source: pgSource}
	}
	e := NewEncoder(Options{TopicPrefix: "p"})
	for _, only := range []bool{false, true} {
		tb := tbl
		if only { // a key made only of such columns is refused too, not published with a null key
			tb = &change.Table{ID: tbl.ID, Columns: tbl.Columns[1:], Key: []int{0}}
		}
		_, ok, err := e.AppendKey(nil, &change.Event{Table: tb, Op: change.OpCreate, After: ev("a").After[2-len(tb.Columns):], Source: pgSource})
		if ok || !errors.Is(err, ErrTable) || !strings.Contains(err.Error(), "shop.t") || !strings.Contains(err.Error(), `key column "v"`) {
			t.Errorf("key only %v: ok=%v err=%v, want ErrTable naming shop.t and column v", only, ok, err)
		}
		if _, err := e.AppendValue(nil, &change.Event{Table: tb, Op: change.OpCreate, After: ev("a").After[2-len(tb.Columns):], Source: pgSource}, 0); !errors.Is(err, ErrTable) {
			t.Errorf("key only %v: value err=%v, want ErrTable", only, err)
		}
	}
	inc := NewEncoder(Options{TopicPrefix: "p", IncludeUnknownTypes: true})
	k1, ok1, err1 := inc.AppendKey(nil, ev("a"))
	k2, ok2, err2 := inc.AppendKey(nil, ev("b"))
	if !ok1 || !ok2 || err1 != nil || err2 != nil || string(k1) == string(k2) {
		t.Errorf("include_unknown_types: keys %s / %s (%v %v %v %v), want two keys", k1, k2, ok1, ok2, err1, err2)
	}
}

func TestCompositeKeyOrder(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "p"})
	tbl := customers()
	tbl.Key = []int{2, 0} // last_name, id: key order, not column order
	ev := &change.Event{Table: tbl, Op: change.OpCreate, After: customerRow(3, "a", "b", "c"), Source: pgSource}
	key, ok, err := e.AppendKey(nil, ev)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	want := `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"last_name"},{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"p.inventory.customers.Key"},"payload":{"last_name":"b","id":3}}`
	if string(key) != want {
		t.Errorf("got  %s\nwant %s", key, want)
	}
}

func TestTopic(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "shop"})
	tests := []struct {
		id   change.TableID
		want string
	}{
		{change.TableID{DB: "shop", Schema: "public", Name: "orders"}, "shop.public.orders"},
		{change.TableID{DB: "shop", Name: "orders"}, "shop.shop.orders"}, // MySQL: no schema
		{change.TableID{DB: "d", Schema: "My Schema", Name: "order$items"}, "shop.My_Schema.order_items"},
		{change.TableID{DB: "d", Schema: "public", Name: "zäh"}, "shop.public.z_h"},
		{change.TableID{DB: "d", Schema: "public", Name: "x😀"}, "shop.public.x__"}, // a surrogate pair is two Java chars
		{change.TableID{DB: "d", Schema: "public", Name: strings.Repeat("t", 300)}, ("shop.public." + strings.Repeat("t", 300))[:249]},
	}
	for _, tt := range tests {
		if got := e.Topic(&change.Table{ID: tt.id}); got != tt.want {
			t.Errorf("Topic(%v) = %q, want %q", tt.id, got, tt.want)
		}
	}
	if got := e.Topic(nil); got != "" {
		t.Errorf("Topic(nil) = %q", got)
	}
	if got := (change.TableID{Name: ".."}).Topic(""); got != "__" {
		t.Errorf(`the topic of table ".." = %q`, got)
	}
	// Schema names follow the sanitized topic, as in Debezium.
	tbl := customers()
	tbl.ID.Name = "cust omers"
	key, _, err := e.AppendKey(nil, &change.Event{Table: tbl, Op: change.OpCreate, After: customerRow(1, "a", "b", "c"), Source: pgSource})
	if err != nil || !strings.Contains(string(key), `"name":"shop.inventory.cust_omers.Key"`) {
		t.Errorf("key schema name: %s %v", key, err)
	}
}

func TestEventErrors(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "p"})
	good := func() *change.Event {
		return &change.Event{Table: customers(), Op: change.OpCreate, After: customerRow(1, "a", "b", "c"), Source: pgSource}
	}
	tests := []struct {
		name   string
		mutate func(*change.Event)
		want   error
		key    bool // AppendKey fails too
	}{
		{"nil table", func(ev *change.Event) { ev.Table = nil }, ErrTable, true},
		{"short row", func(ev *change.Event) { ev.After = ev.After[:3] }, ErrRowLength, true},
		{"long before", func(ev *change.Event) {
			ev.Op = change.OpUpdate
			ev.Before = append(customerRow(1, "", "", ""), change.IntValue(1))
		}, ErrRowLength, false},
		{"no op", func(ev *change.Event) { ev.Op = change.OpNone }, ErrOp, false},
		{"truncate op", func(ev *change.Event) { ev.Op = 't' }, ErrOp, false},
		{"source block without a connector", func(ev *change.Event) { ev.Source.Block = &change.SourceBlock{SchemaName: "x.Source"} }, ErrConnector, false},
		{"no source block", func(ev *change.Event) { ev.Source.Block = nil }, ErrConnector, false},
		{"no rows", func(ev *change.Event) { ev.After = nil }, ErrNoRow, true},
		{"bad key index", func(ev *change.Event) { ev.Table.Key = []int{9} }, ErrTable, true},
		{"bad value", func(ev *change.Event) { ev.After[0] = change.TextValue("1") }, ErrValueKind, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := good()
			tt.mutate(ev)
			dst := []byte("keep")
			out, err := e.AppendValue(dst, ev, 0)
			if !errors.Is(err, tt.want) {
				t.Fatalf("AppendValue: got %v, want %v", err, tt.want)
			}
			if string(out) != "keep" {
				t.Errorf("AppendValue changed dst: %q", out)
			}
			if !strings.HasPrefix(err.Error(), "debezium: table ") {
				t.Errorf("message %q", err)
			}
			out, ok, err := e.AppendKey(dst, ev)
			if tt.key {
				if !errors.Is(err, tt.want) || ok || string(out) != "keep" {
					t.Errorf("AppendKey: got %q ok=%v err=%v, want %v", out, ok, err, tt.want)
				}
			} else if err != nil {
				t.Errorf("AppendKey: %v", err)
			}
		})
	}
}

func TestNilEvent(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "p"})
	if _, err := e.AppendValue(nil, nil, 0); !errors.Is(err, ErrTable) {
		t.Errorf("AppendValue(nil event): %v", err)
	}
	if _, ok, err := e.AppendKey(nil, nil); ok || !errors.Is(err, ErrTable) {
		t.Errorf("AppendKey(nil event): %v", err)
	}
}

func TestAppendsToDst(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "dbserver1"})
	ev := goldenUpdateEvent()
	dst := []byte("xyz")
	out, err := e.AppendValue(dst, ev, 1766925059873428)
	if err != nil || string(out) != "xyz"+goldenUpdateValue {
		t.Fatalf("append to dst: %v", err)
	}
	out, ok, err := e.AppendKey(out[:3], ev)
	if err != nil || !ok || string(out) != "xyz"+goldenUpdateKey {
		t.Fatalf("append key to dst: %v", err)
	}
}

func TestVersionOverride(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "p", Version: `3.0.0."Beta"`})
	out, err := e.AppendValue(nil, &change.Event{Table: customers(), Op: change.OpCreate, After: customerRow(1, "a", "b", "c"), Source: pgSource}, 0)
	if err != nil || !strings.Contains(string(out), `"source":{"version":"3.0.0.\"Beta\"","connector":"postgresql","name":"shop"`) {
		t.Errorf("%s %v", out, err)
	}
}

// A new *Table is a new table version: new schema; the same *Table reuses
// the cached one.
func TestSchemaPerTableVersion(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "p"})
	v1 := customers()
	ev := &change.Event{Table: v1, Op: change.OpCreate, After: customerRow(1, "a", "b", "c"), Source: pgSource}
	if _, err := e.AppendValue(nil, ev, 0); err != nil {
		t.Fatal(err)
	}
	c1 := e.codec(v1)
	if e.codec(v1) != c1 {
		t.Error("codec rebuilt for the same *Table")
	}
	v2 := customers()
	v2.Version = 2
	v2.Columns = append(v2.Columns, change.Column{Name: "vip", Type: change.Type{Kind: change.KindBool}, Optional: true})
	ev2 := &change.Event{Table: v2, Op: change.OpCreate, After: append(customerRow(1, "a", "b", "c"), change.IntValue(1)), Source: pgSource}
	out, err := e.AppendValue(nil, ev2, 0)
	if err != nil || !strings.Contains(string(out), `{"type":"boolean","optional":true,"field":"vip"}`) || !strings.Contains(string(out), `"vip":true}`) {
		t.Errorf("v2: %s %v", out, err)
	}
	if e.codec(v2) == c1 {
		t.Error("new table version shares the old codec")
	}
}

func TestConcurrentUse(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "dbserver1"})
	tables := []*change.Table{customers(), customers(), customers()}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Go(func() {
			var buf []byte
			for i := range 200 {
				ev := goldenUpdateEvent()
				ev.Table = tables[(g+i)%len(tables)]
				var err error
				buf, err = e.AppendValue(buf[:0], ev, 1766925059873428)
				if err != nil || string(buf) != goldenUpdateValue {
					errs <- fmt.Errorf("goroutine %d: %v", g, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestKeyColumnMissing: a key column the row image does not carry (a
// delete whose old image, by the table's replica identity, has other
// columns; an unchanged TOASTed value) is an error naming the column,
// never a key written with the type's zero or a placeholder.
func TestKeyColumnMissing(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "p"})
	for name, v := range map[string]change.Value{"null": {}, "unavailable": {Kind: change.Unavailable}} {
		del := &change.Event{Table: customers(), Op: change.OpDelete, Source: pgSource,
			Before: change.Row{v, {}, {}, change.TextValue("liam@example.com")}}
		key, ok, err := e.AppendKey([]byte("x"), del)
		var ee *EncodeError
		if !errors.As(err, &ee) || !errors.Is(err, ErrKeyMissing) || ee.Column != "id" || ok || string(key) != "x" {
			t.Errorf("%s key column: key %q ok=%v err=%v; want ErrKeyMissing naming id", name, key, ok, err)
		}
	}
	// A nullable column named by key_columns may hold a real null.
	e = NewEncoder(Options{TopicPrefix: "p", KeyColumns: map[string][]string{"inventory.customers": {"email"}}})
	tbl := customers()
	tbl.Columns[3].Optional = true
	key, ok, err := e.AppendKey(nil, &change.Event{Table: tbl, Op: change.OpCreate, Source: pgSource, After: change.Row{change.IntValue(1), {}, {}, {}}})
	if err != nil || !ok || !strings.HasSuffix(string(key), `"payload":{"email":null}}`) {
		t.Errorf("null in an optional key column: %s ok=%v err=%v", key, ok, err)
	}
}
