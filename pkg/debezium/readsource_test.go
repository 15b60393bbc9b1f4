package debezium

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// A snapshot read's source block is copied from the read before it while
// their sources are the same (appendEventSource). Random runs of reads and
// streamed changes of two tables, from PostgreSQL and MariaDB, each source
// field drawn from two values so that runs repeat and break on every field
// (the seed is printed; READSOURCE_SEED=<seed> replays it), give the bytes
// an encoder that has seen nothing writes for each event alone.
func TestReadSourceAsWritten(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("READSOURCE_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("READSOURCE_SEED: %v", err)
		}
	}
	t.Logf("seed %d (READSOURCE_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	pick := func(a, b string) string {
		if rng.IntN(32) == 0 {
			return b
		}
		return a
	}
	num := func(a, b int64) int64 {
		if rng.IntN(32) == 0 {
			return b
		}
		return a
	}
	orders, items := benchTable(), benchTable()
	items.ID.Name = "items"
	e := NewEncoder(Options{TopicPrefix: "shop"})
	hits := 0
	for i := range 20_000 {
		ev := benchEvent()
		ev.Table = orders
		if rng.IntN(16) == 0 {
			ev.Table = items
		}
		ev.Op = change.OpRead
		if rng.IntN(16) == 0 {
			ev.Op = change.OpCreate
		}
		ev.Source = change.Source{
			Block: blocks[pick("postgresql", "mariadb")], Name: pick("", "other"), DB: pick("shop", ""),
			Schema: pick("public", "s2"), Table: pick("", "t2"), CommitMicros: num(1_700_000_000_200_000, 1_700_000_000_300_000),
			Snapshot: pick("true", "last"), Sequence: pick("", `["1","2"]`),
			Ints:    [change.SourceSlots]int64{num(0, 7), num(123_456_789, 0), num(0, 1), num(0, 9)},
			Strings: [change.SourceSlots]string{pick("", "0-1-2"), pick("mysql-bin.000001", "mysql-bin.000002"), pick("", "INSERT")},
		}
		if r := e.codec(ev.Table).readSource.Load(); r != nil && r.src == ev.Source && ev.Op == change.OpRead {
			hits++
		}
		got, err := e.AppendValue(nil, ev, 1_700_000_001_000_000)
		if err != nil {
			t.Fatal(err)
		}
		want, err := NewEncoder(Options{TopicPrefix: "shop"}).AppendValue(nil, ev, 1_700_000_001_000_000)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("event %d (%s, %s, %+v):\n got %s\nwant %s", i, ev.Table.ID.Name, ev.Op, ev.Source, got, want)
		}
	}
	if hits < 1000 {
		t.Fatalf("only %d reads copied their source block: the runs never repeat", hits)
	}
}
