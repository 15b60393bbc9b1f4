package debezium

import (
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Debezium 3.6.1's PostgreSQL connector with provide.transaction.metadata
// wrote this END (JsonConverter, schemas on) for a transaction of four
// changes, two in each table: its tables in a java.util.HashMap's order,
// not the order they were first changed.
const (
	dbzEndKey   = `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"}],"optional":false,"name":"io.debezium.connector.common.TransactionMetadataKey","version":1},"payload":{"id":"364507:11392568024"}}`
	dbzEndValue = `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"status"},{"type":"string","optional":false,"field":"id"},{"type":"int64","optional":true,"field":"event_count"},{"type":"array","items":{"type":"struct","fields":[{"type":"string","optional":false,"field":"data_collection"},{"type":"int64","optional":false,"field":"event_count"}],"optional":true,"name":"event.collection","version":1},"optional":true,"field":"data_collections"},{"type":"int64","optional":false,"field":"ts_ms"}],"optional":false,"name":"io.debezium.connector.common.TransactionMetadataValue","version":1},"payload":{"status":"END","id":"364507:11392568024","event_count":4,"data_collections":[{"data_collection":"public.tx_b","event_count":2},{"data_collection":"public.tx_a","event_count":2}],"ts_ms":1796553774961}}`
)

func TestTxMarkEnd(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "p"})
	m := &change.TxMark{End: true, ID: "364507:11392568024", CommitMicros: 1796553774961123, Count: 4,
		Tables: []change.TxTable{{Name: "public.tx_a", Count: 2}, {Name: "public.tx_b", Count: 2}}}
	b, v := e.AppendTxMark([]byte("x"), m)
	if got := string(b[1:v]); got != dbzEndKey {
		t.Errorf("key\n got %s\nwant %s", got, dbzEndKey)
	}
	if got := string(b[v:]); got != dbzEndValue {
		t.Errorf("value\n got %s\nwant %s", got, dbzEndValue)
	}
	if e.TransactionTopic() != "p.transaction" {
		t.Errorf("topic %q", e.TransactionTopic())
	}
}

func TestTxMarkBeginNoSchemas(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "p", Format: Format{NoSchemas: true}})
	b, v := e.AppendTxMark(nil, &change.TxMark{ID: "0-1-156938", CommitMicros: 1796553804000000})
	if got, want := string(b[:v]), `{"id":"0-1-156938"}`; got != want {
		t.Errorf("key %s, want %s", got, want)
	}
	want := `{"status":"BEGIN","id":"0-1-156938","event_count":null,"data_collections":null,"ts_ms":1796553804000}`
	if got := string(b[v:]); got != want {
		t.Errorf("value %s, want %s", got, want)
	}
}

// The END lists its tables as Debezium's HashMap iterates them: by
// bucket, and by insertion within one; past 12 tables the map has 32
// buckets.
func TestJavaHashOrder(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"public.tx_a", "public.tx_b"}, []string{"public.tx_b", "public.tx_a"}},
		{[]string{"it_txdmy_14084_0245.tx_a", "it_txdmy_14084_0245.tx_b"}, []string{"it_txdmy_14084_0245.tx_b", "it_txdmy_14084_0245.tx_a"}},
		// java: "a".hashCode() 97 (bucket 1), "b" 98 (2), "q" 113 (1 of 16); "é" 233 (9)
		{[]string{"b", "q", "a", "é"}, []string{"q", "a", "b", "é"}},
	} {
		var tables []change.TxTable
		for _, n := range c.in {
			tables = append(tables, change.TxTable{Name: n})
		}
		var got []string
		for _, tb := range javaHashOrder(tables) {
			got = append(got, tb.Name)
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%v: got %v, want %v", c.in, got, c.want)
		}
	}
	var many []change.TxTable
	for _, n := range "abcdefghijklmnopq" { // 17 tables: 32 buckets, "a".."q" in buckets 1..17
		many = append(many, change.TxTable{Name: string(n)})
	}
	if got := javaHashOrder(many); got[0].Name != "a" || got[16].Name != "q" {
		t.Errorf("17 tables: %v", got)
	}
}

// A change's transaction block, as Debezium writes it; none: null.
func TestTxBlockInValue(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "p", Format: Format{NoSchemas: true}})
	ev := goldenUpdateEvent()
	ev.Tx = change.Tx{ID: "364507:11392567408", Total: 3, Table: 2}
	b, err := e.AppendValue(nil, ev, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := `,"transaction":{"id":"364507:11392567408","total_order":3,"data_collection_order":2},"op":`; !strings.Contains(string(b), want) {
		t.Errorf("value %s\nlacks %s", b, want)
	}
	ev.Tx = change.Tx{}
	if b, _ = e.AppendValue(nil, ev, 1); !strings.Contains(string(b), `,"transaction":null,"op":`) {
		t.Errorf("value %s: transaction not null", b)
	}
}
