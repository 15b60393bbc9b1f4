package debezium

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

func TestBinlogValue(t *testing.T) {
	tbl := &change.Table{
		ID: change.TableID{DB: "shop", Name: "orders"},
		Columns: []change.Column{
			{Name: "id", Type: change.Type{Kind: change.KindInt64, Precision: -1, Scale: -1, Length: -1}},
			{Name: "y", Type: change.Type{Kind: change.KindYear, Precision: -1, Scale: -1, Length: -1}, Optional: true},
			{Name: "e", Type: change.Type{Kind: change.KindEnum, Values: "a,b", Precision: -1, Scale: -1, Length: -1}, Optional: true},
			{Name: "b", Type: change.Type{Kind: change.KindBits, Length: 12, Precision: -1, Scale: -1}, Optional: true},
		},
		Key: []int{0},
	}
	enc := NewEncoder(Options{TopicPrefix: "p"})
	for _, connector := range []string{"mysql", "mariadb"} {
		ev := &change.Event{Table: tbl, Op: change.OpCreate,
			After:  change.Row{change.IntValue(7), change.IntValue(2024), change.TextValue("b"), change.BinaryValue([]byte{1, 8})},
			Source: with(change.Source{Block: blocks[connector], CommitMicros: 1_700_000_000_000_000}, "server_id", 1, "gtid", "0-1-5", "file", "bin.000001", "pos", 42, "row", 1)}
		b, err := enc.AppendValue(nil, ev, 1_700_000_000_500_000)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Fatalf("invalid JSON: %s", b)
		}
		s := string(b)
		for _, want := range []string{
			`"name":"io.debezium.connector.` + connector + `.Source"`,
			`"source":{"version":"3.6.1.Final","connector":"` + connector + `","name":"p","ts_ms":1700000000000,"snapshot":"false","db":"shop","sequence":null,"ts_us":1700000000000000,"ts_ns":1700000000000000000,"table":"orders","server_id":1,"gtid":"0-1-5","file":"bin.000001","pos":42,"row":1,"thread":null,"query":null}`,
			`{"type":"int32","optional":true,"name":"io.debezium.time.Year","version":1,"field":"y"}`,
			`{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"a,b"},"field":"e"}`,
			`{"type":"bytes","optional":true,"name":"io.debezium.data.Bits","version":1,"parameters":{"length":"12"},"field":"b"}`,
			`"after":{"id":7,"y":2024,"e":"b","b":"AQg="}`,
			`{"type":"string","optional":true,"field":"table"},{"type":"int64","optional":false,"field":"server_id"},{"type":"string","optional":true,"field":"gtid"},{"type":"string","optional":false,"field":"file"},{"type":"int64","optional":false,"field":"pos"},{"type":"int32","optional":false,"field":"row"},{"type":"int64","optional":true,"field":"thread"},{"type":"string","optional":true,"field":"query"}`,
		} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: value lacks %s\n%s", connector, want, s)
			}
		}
	}
}

// TestBinlogUnknownIncluded: with IncludeUnknownTypes a MySQL/MariaDB
// column of a type the encoder cannot map is published as bytes, its
// schema type "bytes" as in PostgreSQL's messages (it was "": the binlog
// value head built its schema without the encoder's unknown-type rule).
func TestBinlogUnknownIncluded(t *testing.T) {
	tbl := &change.Table{
		ID: change.TableID{DB: "shop", Name: "odd"},
		Columns: []change.Column{
			{Name: "id", Type: change.Type{Kind: change.KindInt32, Precision: -1, Scale: -1, Length: -1}},
			{Name: "v", Type: change.Type{Kind: change.KindUnknown, Name: "vector", Precision: -1, Scale: -1, Length: -1}, Optional: true},
		},
		Key: []int{0},
	}
	enc := NewEncoder(Options{TopicPrefix: "p", IncludeUnknownTypes: true})
	for _, connector := range []string{"mysql", "mariadb"} {
		ev := &change.Event{Table: tbl, Op: change.OpCreate,
			After:  change.Row{change.IntValue(1), change.BinaryValue([]byte{1, 2})},
			Source: with(change.Source{Block: blocks[connector], CommitMicros: 1_700_000_000_000_000}, "file", "bin.000001", "pos", 4)}
		b, err := enc.AppendValue(nil, ev, 1_700_000_000_500_000)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, want := range []string{`{"type":"bytes","optional":true,"field":"v"}`, `"after":{"id":1,"v":"AQI="}`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: value lacks %s\n%s", connector, want, s)
			}
		}
	}
}

// TestBinlogSnapshotTimestampFraction: a MySQL/MariaDB TIMESTAMP(n) is
// written as Debezium's binlog connectors write it, byte for byte: n
// fractional digits in binlog rows and the schema default, the fraction's
// trailing zeros dropped (none for a zero fraction) in snapshot reads, key
// included. PostgreSQL's snapshot keeps the column's digits.
func TestBinlogSnapshotTimestampFraction(t *testing.T) {
	ts := change.Column{Name: "ts", Type: change.Type{Kind: change.KindTimestampTZ, Name: "timestamp", Precision: 3, Scale: -1, Length: -1}}
	tbl := &change.Table{ID: change.TableID{DB: "shop", Name: "t"}, Columns: []change.Column{ts}, Key: []int{0}}
	enc := NewEncoder(Options{TopicPrefix: "p"})
	for _, c := range []struct {
		connector string
		op        change.Op
		micros    int64
		want      string
	}{
		{"mariadb", change.OpRead, 951825600_000000, `"2000-02-29T12:00:00Z"`},
		{"mariadb", change.OpRead, 951825600_120000, `"2000-02-29T12:00:00.12Z"`},
		{"mysql", change.OpRead, 951825600_001000, `"2000-02-29T12:00:00.001Z"`},
		{"mariadb", change.OpCreate, 951825600_000000, `"2000-02-29T12:00:00.000Z"`},
		{"mysql", change.OpUpdate, 951825600_120000, `"2000-02-29T12:00:00.120Z"`},
		{"postgresql", change.OpRead, 951825600_120000, `"2000-02-29T12:00:00.120Z"`},
	} {
		src := change.Source{Block: blocks[c.connector], CommitMicros: 1}
		if c.connector != "postgresql" {
			src = with(src, "file", "f", "pos", 4)
		}
		ev := &change.Event{Table: tbl, Op: c.op, After: change.Row{change.IntValue(c.micros)}, Source: src}
		if c.op == change.OpUpdate {
			ev.Before = ev.After
		}
		v, err := enc.AppendValue(nil, ev, 1)
		if err != nil {
			t.Fatal(err)
		}
		if want := `"after":{"ts":` + c.want + `}`; !strings.Contains(string(v), want) {
			t.Errorf("%s %s: value lacks %s\n%s", c.connector, c.op, want, v)
		}
		k, _, err := enc.AppendKey(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		if want := `"payload":{"ts":` + c.want + `}`; !strings.Contains(string(k), want) {
			t.Errorf("%s %s: key lacks %s\n%s", c.connector, c.op, want, k)
		}
	}
}
