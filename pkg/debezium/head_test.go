package debezium

import (
	"bytes"
	"hash/crc32"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// TestValueHead: the Head AppendValueHead returns is a prefix that two
// different rows of a table share, and its CRC is that prefix's CRC32C,
// for every connector's envelope and for format.unwrap: the producer's
// receipt continues from it instead of hashing the prefix. A
// wrong Head would make the receipt disagree with what a consumer reads.
func TestValueHead(t *testing.T) {
	table := &change.Table{
		ID: change.TableID{DB: "shop", Schema: "public", Name: "orders"},
		Columns: []change.Column{
			{Name: "id", Type: change.Type{Kind: change.KindInt64, Precision: -1, Scale: -1, Length: -1}},
			{Name: "note", Type: change.Type{Kind: change.KindString, Precision: -1, Scale: -1, Length: -1}, Optional: true},
		},
		Key: []int{0},
	}
	row := func(id int64, note string) change.Row {
		return change.Row{change.IntValue(id), change.TextValue(note)}
	}
	events := func(connector string) []*change.Event {
		src := change.Source{Block: blocks[connector], Name: "p", CommitMicros: 1_700_000_000_000_000}
		if connector == "postgresql" {
			src = with(src, "txId", 7, "lsn", 99)
		} else {
			src = with(src, "file", "bin.000001", "pos", 4)
		}
		return []*change.Event{
			{Table: table, Op: change.OpCreate, After: row(1, "a"), Source: src},
			{Table: table, Op: change.OpUpdate, Before: row(2, "b"), After: row(2, "bb"), Source: src},
			{Table: table, Op: change.OpDelete, Before: row(3, "c"), Source: src},
		}
	}
	for _, c := range []struct {
		name      string
		f         Format
		connector string
		headEnd   string // what the head ends with
	}{
		{"postgresql", Format{}, "postgresql", `"io.debezium.connector.postgresql.Source"`},
		{"mysql", Format{}, "mysql", `"io.debezium.connector.mysql.Source"`},
		{"mariadb", Format{}, "mariadb", `"io.debezium.connector.mariadb.Source"`},
		{"no schemas", Format{NoSchemas: true}, "postgresql", ""},
		{"unwrap", Format{Unwrap: true, DeleteHandling: DeleteRewrite}, "postgresql", ""},
		{"unwrap mysql", Format{Unwrap: true, DeleteHandling: DeleteRewrite, AddFields: []string{"op"}}, "mysql", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := NewEncoder(Options{TopicPrefix: "p", Format: c.f})
			var first []byte
			for i, ev := range events(c.connector) {
				// Len counts from the value, not from dst.
				dst := []byte("key bytes before the value")
				out, h, err := e.AppendValueHead(dst, ev, 1_700_000_000_500_000)
				if err != nil {
					t.Fatal(err)
				}
				v := out[len(dst):]
				if plain, err := e.AppendValue(nil, ev, 1_700_000_000_500_000); err != nil || !bytes.Equal(plain, v) {
					t.Fatalf("AppendValue %s, %v; AppendValueHead's value %s", plain, err, v)
				}
				if h.Len <= 0 || h.Len >= len(v) {
					t.Fatalf("event %d: head of %d bytes, value of %d", i, h.Len, len(v))
				}
				if want := crc32.Checksum(v[:h.Len], castagnoli); h.CRC != want {
					t.Errorf("event %d: head CRC %#x, the CRC32C of its %d bytes is %#x", i, h.CRC, h.Len, want)
				}
				if !c.f.NoSchemas && !bytes.Contains(v[:h.Len], []byte(`"schema":`)) {
					t.Errorf("event %d: head %q lacks the schema", i, v[:h.Len])
				}
				if c.headEnd != "" && !bytes.Contains(v[:h.Len], []byte(c.headEnd)) {
					t.Errorf("event %d: head lacks %s", i, c.headEnd)
				}
				if first == nil {
					first = bytes.Clone(v[:h.Len])
				} else if !bytes.Equal(v[:h.Len], first) {
					t.Errorf("event %d: head\n%s\ndiffers from the first event's\n%s", i, v[:h.Len], first)
				}
			}
		})
	}

	// A value with no shared prefix has a Head of Len 0: format.unwrap's
	// delete under delete_handling tombstone is its constant whole.
	e := NewEncoder(Options{TopicPrefix: "p", Format: Format{Unwrap: true}})
	if _, h, err := e.AppendValueHead(nil, events("postgresql")[2], 0); err != nil || h != (Head{}) {
		t.Errorf("unwrapped delete: head %+v, %v", h, err)
	}
	// A failed encoding has none either.
	bad := &change.Event{Table: table, Op: change.OpCreate, After: change.Row{change.IntValue(1)}, Source: change.Source{Block: blocks["postgresql"]}}
	for _, f := range []Format{{}, {Unwrap: true}} {
		e := NewEncoder(Options{TopicPrefix: "p", Format: f})
		if _, h, err := e.AppendValueHead(nil, bad, 0); err == nil || h != (Head{}) {
			t.Errorf("%+v, short row: head %+v, %v", f, h, err)
		}
	}
}
