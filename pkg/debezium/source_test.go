package debezium

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// docBlock is the source block of a connector this package has never
// heard of, declared as a driver would: a replica set, the collection as
// the table, an order within the second, a session id, a transaction
// number and a wall time, one always null.
var docBlock = &change.SourceBlock{
	Connector:  "docstore",
	SchemaName: "io.example.docstore.Source",
	Fields: []change.SourceField{
		{Name: "rs", Type: change.SourceString, Slot: 0},
		{Name: "collection", Type: change.SourceString, From: change.FromTable},
		{Name: "ord", Type: change.SourceInt32, Slot: 0},
		{Name: "lsid", Type: change.SourceString, Optional: true, Slot: 1},
		{Name: "txnNumber", Type: change.SourceInt64, Optional: true, Slot: 1},
		{Name: "stripe", Type: change.SourceString, Optional: true, From: change.FromNull},
		{Name: "wallTime", Type: change.SourceInt64, Optional: true, Slot: 2},
	},
}

// TestDeclaredSourceBlock: a block the driver declares is written as
// declared, schema and payload, with and without schemas: its fields in
// order after the common ones, an optional field's zero as null, a
// required one's as zero, the table's name where the source has none.
func TestDeclaredSourceBlock(t *testing.T) {
	tbl := &change.Table{ID: change.TableID{DB: "shop", Name: "orders"},
		Columns: []change.Column{{Name: "id", Type: change.Type{Kind: change.KindInt32, Precision: -1, Scale: -1, Length: -1}}}, Key: []int{0}}
	src := change.Source{Block: docBlock, Name: "p", CommitMicros: 1_700_000_000_000_000,
		Ints: [change.SourceSlots]int64{0: 3, 2: 1_700_000_000_123}, Strings: [change.SourceSlots]string{0: "rs0"}}
	ev := &change.Event{Table: tbl, Op: change.OpCreate, After: change.Row{change.IntValue(1)}, Source: src}
	wantSource := `"source":{"version":"3.6.1.Final","connector":"docstore","name":"p","ts_ms":1700000000000,"snapshot":"false","db":"shop","sequence":null,"ts_us":1700000000000000,"ts_ns":1700000000000000000,` +
		`"rs":"rs0","collection":"orders","ord":3,"lsid":null,"txnNumber":null,"stripe":null,"wallTime":1700000000123}`
	wantSchema := `{"type":"string","optional":true,"field":"sequence"},{"type":"int64","optional":true,"field":"ts_us"},{"type":"int64","optional":true,"field":"ts_ns"},` +
		`{"type":"string","optional":false,"field":"rs"},{"type":"string","optional":false,"field":"collection"},{"type":"int32","optional":false,"field":"ord"},` +
		`{"type":"string","optional":true,"field":"lsid"},{"type":"int64","optional":true,"field":"txnNumber"},{"type":"string","optional":true,"field":"stripe"},` +
		`{"type":"int64","optional":true,"field":"wallTime"}],"optional":false,"name":"io.example.docstore.Source","version":1,"field":"source"}`
	for _, f := range []Format{{}, {NoSchemas: true}} {
		e := NewEncoder(Options{TopicPrefix: "p", Format: f})
		v, err := e.AppendValue(nil, ev, 1_700_000_000_500_000)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(v) || !strings.Contains(string(v), wantSource) {
			t.Errorf("%+v: value lacks %s\n%s", f, wantSource, v)
		}
		if strings.Contains(string(v), wantSchema) == f.NoSchemas {
			t.Errorf("%+v: schema %s present %v\n%s", f, wantSchema, f.NoSchemas, v)
		}
		// The next events of the table write the same block, from what
		// the first one built, without allocating.
		buf := make([]byte, 0, 8192)
		if n := testing.AllocsPerRun(100, func() { _, _ = e.AppendValue(buf[:0], ev, 1_700_000_000_500_000) }); n != 0 {
			t.Errorf("%+v: %v allocations per event", f, n)
		}
	}
}

// TestSourceBlockInvalid: an unusable declaration fails the event with
// ErrConnector, naming what is wrong.
func TestSourceBlockInvalid(t *testing.T) {
	tbl := &change.Table{ID: change.TableID{DB: "shop", Name: "orders"},
		Columns: []change.Column{{Name: "id", Type: change.Type{Kind: change.KindInt32, Precision: -1, Scale: -1, Length: -1}}}, Key: []int{0}}
	for want, b := range map[string]*change.SourceBlock{
		"connector is empty":           {SchemaName: "x.Source"},
		"schema name is empty":         {Connector: "x"},
		"name repeats another field":   {Connector: "x", SchemaName: "x.Source", Fields: []change.SourceField{{Name: "db", Type: change.SourceString, From: change.FromTable}}},
		"slot 4 outside 0..3":          {Connector: "x", SchemaName: "x.Source", Fields: []change.SourceField{{Name: "a", Type: change.SourceInt64, Slot: 4}}},
		"slot 0 is another field's":    {Connector: "x", SchemaName: "x.Source", Fields: []change.SourceField{{Name: "a", Type: change.SourceInt64}, {Name: "b", Type: change.SourceInt32}}},
		"always null but not optional": {Connector: "x", SchemaName: "x.Source", Fields: []change.SourceField{{Name: "a", Type: change.SourceString, From: change.FromNull}}},
		"unknown type 0":               {Connector: "x", SchemaName: "x.Source", Fields: []change.SourceField{{Name: "a"}}},
	} {
		ev := &change.Event{Table: tbl, Op: change.OpCreate, After: change.Row{change.IntValue(1)}, Source: change.Source{Block: b}}
		_, err := NewEncoder(Options{TopicPrefix: "p"}).AppendValue(nil, ev, 0)
		if !errors.Is(err, ErrConnector) || !strings.Contains(err.Error(), want) {
			t.Errorf("want ErrConnector saying %q, got %v", want, err)
		}
	}
	// A string and an integer field may share a slot number: they are in
	// different arrays.
	if err := docBlock.Validate(); err != nil {
		t.Error(err)
	}
}

// TestKeyMissingHint: the error of a change whose row image lacks a key
// column carries the source block's advice, and no other database's.
func TestKeyMissingHint(t *testing.T) {
	tbl := &change.Table{ID: change.TableID{DB: "shop", Name: "orders"},
		Columns: []change.Column{{Name: "id", Type: change.Type{Kind: change.KindInt32, Precision: -1, Scale: -1, Length: -1}}}, Key: []int{0}}
	hinted := *docBlock
	hinted.KeyMissingHint = "log whole rows"
	for b, want := range map[*change.SourceBlock]string{docBlock: "does not carry the key column", &hinted: "does not carry the key column (log whole rows)"} {
		ev := &change.Event{Table: tbl, Op: change.OpDelete, Before: change.Row{{Kind: change.Unavailable}}, Source: change.Source{Block: b}}
		_, _, err := NewEncoder(Options{TopicPrefix: "p"}).AppendKey(nil, ev)
		if !errors.Is(err, ErrKeyMissing) || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("want ErrKeyMissing ending %q, got %v", want, err)
		}
	}
}
