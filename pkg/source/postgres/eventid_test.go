package postgres

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source/sourcetest"
)

// TestEventIDIndependentOfCapturedSet replays one transaction that writes
// to t3, t1, t3, t1 first with both tables captured, then with t3 removed
// from source.tables (as after a restart that replays WAL already
// published): each t1 change must keep its event ID. With IDs numbered by
// rank among the published changes, the replay gave t1's second change
// the ID its first one had, and a consumer deduplicating by ID (Kafka
// header tributary-event-id) dropped it as a duplicate: a lost change.
func TestEventIDIndependentOfCapturedSet(t *testing.T) {
	rel := func(oid uint32, name string) *relation {
		return &relation{oid: oid, schema: "public", name: name, key: []string{"k"},
			columns: []catalogColumn{{name: "k", typOID: 23, typName: "int4", notNull: true}}}
	}
	t1, t3 := rel(1, "t1"), rel(3, "t3")
	type w struct {
		rel *relation
		lsn uint64
		k   int
	}
	tx := []w{{t3, 0x100, 1}, {t1, 0x200, 2}, {t3, 0x300, 3}, {t1, 0x400, 4}, {t1, 0x400, 5}}

	replay := func(captured ...*relation) map[int]string {
		s := &Source{connCfg: &pgx.ConnConfig{}, captured: map[uint32]string{},
			tables: map[uint32]*change.Table{}, rels: map[uint32]*relation{}}
		s.connCfg.Database = "db"
		for _, r := range captured {
			s.captured[r.oid] = r.fullName()
			s.tables[r.oid], s.rels[r.oid] = r.table("db", nil, nil), r
		}
		ids := map[int]string{}
		emit := func(_ context.Context, ev *change.Event) error {
			ids[int(ev.After[0].Int)] = ev.ID
			return nil
		}
		state := txState{finalLSN: 0x500}
		for _, c := range tx {
			xld := pglogrepl.XLogData{WALStart: pglogrepl.LSN(c.lsn), WALData: insertMessage(c.rel.oid, strconv.Itoa(c.k))}
			if err := s.handle(context.Background(), &state, xld, sourcetest.FuncStream(emit)); err != nil {
				t.Fatal(err)
			}
		}
		return ids
	}
	both, only := replay(t1, t3), replay(t1)
	seen := map[string]int{}
	for k, id := range both {
		if other, dup := seen[id]; dup {
			t.Errorf("changes k=%d and k=%d share the event ID %s", other, k, id)
		}
		seen[id] = k
	}
	for _, k := range []int{2, 4, 5} {
		if only[k] != both[k] {
			t.Errorf("k=%d: event ID %q after t3 left the captured set, %q before", k, only[k], both[k])
		}
	}
}

// TestEventIDFormat: an event ID and an LSN are written as they were with
// fmt and pglogrepl's LSN.String ("%X/%X"), so that IDs stay what
// consumers deduplicating by tributary-event-id have seen, and positions
// what checkpoints hold.
func TestEventIDFormat(t *testing.T) {
	lsns := []uint64{0, 1, 0xF, 0x10, 0x16B3748, 1 << 32, 0xABCDEF0123456789, math.MaxUint32, math.MaxUint64}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		lsns = append(lsns, r.Uint64()>>r.IntN(64))
	}
	for i, lsn := range lsns {
		if got, want := formatLSN(lsn), pglogrepl.LSN(lsn).String(); got != want {
			t.Errorf("formatLSN(%#x) = %q, want %q", lsn, got, want)
		}
		final, at := lsns[(i+1)%len(lsns)], i%3
		want := fmt.Sprintf("pg:%s:%s", pglogrepl.LSN(final), pglogrepl.LSN(lsn))
		if at > 0 {
			want += fmt.Sprintf(":%d", at)
		}
		if got := string(appendEventID(nil, final, lsn, at)); got != want {
			t.Errorf("eventID(%#x, %#x, %d) = %q, want %q", final, lsn, at, got, want)
		}
	}
}
