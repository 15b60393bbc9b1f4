package snapshot

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// rangesDB records the key range of every chunk query.
type rangesDB struct {
	memDB
	reads []string // "<after>..<until>", "" for nil
}

func (d *rangesDB) Session(context.Context) (Session, error) { return d, nil }

func (d *rangesDB) ReadChunk(ctx context.Context, table string, after, until Key, limit int) ([]Row, error) {
	d.mu.Lock()
	d.reads = append(d.reads, keyText(after)+".."+keyText(until))
	d.mu.Unlock()
	time.Sleep(time.Millisecond) // a query takes a while: the other worker starts meanwhile
	return d.memDB.ReadChunk(ctx, table, after, until, limit)
}

func keyText(k Key) string {
	if k == nil {
		return ""
	}
	return string(k[0])
}

// splitRun is an engine's initial snapshot of s.t with the stream played
// by the test, emitting into got.
type splitRun struct {
	t    *testing.T
	e    *Engine
	db   *rangesDB
	got  []*change.Event
	stop func()
	ctx  context.Context
}

func startSplit(t *testing.T, db *rangesDB, from *State) *splitRun {
	e := New(db, Config{Parallelism: 2, ChunkRows: 50, IDPrefix: "t", TableName: memName})
	if from != nil {
		e.Restore(*from)
	} else {
		e.Queue([]string{"s.t"}, true)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait := e.Start(ctx, func(err error) { t.Errorf("the snapshot failed: %v", err) })
	return &splitRun{t: t, e: e, db: db, ctx: ctx, stop: func() { cancel(); wait() }}
}

// play hands watermarks to the engine until done says so (asked after each).
func (r *splitRun) play(done func() bool) {
	r.t.Helper()
	emit := func(_ context.Context, ev *change.Event) error { r.got = append(r.got, ev); return nil }
	for deadline := time.After(20 * time.Second); !done(); {
		select {
		case m := <-r.db.marks:
			if ok, err := r.e.Watermark(r.ctx, m, emit); !ok || err != nil {
				r.t.Fatalf("Watermark(%q) = %v, %v", m, ok, err)
			}
		case <-deadline:
			r.t.Fatalf("the snapshot did not finish; %d rows emitted", len(r.got))
		}
	}
}

func splitDB(n int64) *rangesDB {
	db := &rangesDB{memDB: memDB{rows: map[int64]int64{}, marks: make(chan string, 64)}}
	for k := int64(1); k <= n; k++ {
		db.rows[k] = k
	}
	return db
}

// TestSplitTableReadsRangesAtOnce: one table of 2,000 rows and two
// workers is read as two key ranges at once (the second range's chunks
// start before the first's end), every row is published once, each
// range's rows in key order, with Debezium's initial snapshot markers on
// the first and last rows published; a position taken mid-way records
// both ranges.
func TestSplitTableReadsRangesAtOnce(t *testing.T) {
	db := splitDB(2000)
	r := startSplit(t, db, nil)
	defer r.stop()
	var mid State
	r.play(func() bool {
		if len(r.got) > 600 && mid.Tables == nil {
			mid, _ = DecodeState(r.e.State())
		}
		return !r.e.Pending()
	})
	r.stop()
	seen := map[int64]int{}
	var last [2]int64
	for i, ev := range r.got {
		k := ev.After[0].Int
		seen[k]++
		half := 0
		if k > 1000 {
			half = 1
		}
		if k < last[half] {
			t.Fatalf("row %d after %d in the same key range", k, last[half])
		}
		last[half] = k
		want := "true"
		switch i {
		case 0:
			want = "first"
		case len(r.got) - 1:
			want = "last"
		}
		if ev.Source.Snapshot != want {
			t.Errorf("row %d (the %dth published): snapshot %q, want %q", k, i+1, ev.Source.Snapshot, want)
		}
	}
	if len(seen) != 2000 || len(r.got) != 2000 {
		t.Fatalf("%d rows published, %d distinct, want 2000 once each", len(r.got), len(seen))
	}
	firstEnd, secondStart := -1, -1
	for i, q := range db.reads {
		if q == "..1000" || len(q) > 6 && q[len(q)-6:] == "..1000" {
			firstEnd = i
		}
		if q == "1000.." && secondStart < 0 {
			secondStart = i
		}
	}
	if secondStart < 0 || firstEnd < 0 || secondStart > firstEnd {
		t.Errorf("chunk queries %v: want the range after 1000 read while the one up to 1000 is", db.reads)
	}
	if len(mid.Tables) != 1 || len(mid.Tables[0].Parts) != 2 || keyText(mid.Tables[0].Parts[0].Until) != "1000" {
		t.Errorf("state mid-way %+v, want s.t in two key ranges, the first up to 1000", mid)
	}
}

// TestSplitTableResumes: a position taken while the two ranges are read
// resumes each after its own key: no row is lost or published twice
// across the restart, and the restored ranges are not split again.
func TestSplitTableResumes(t *testing.T) {
	for _, at := range []int{1, 333, 1500} {
		t.Run(strconv.Itoa(at), func(t *testing.T) {
			db := splitDB(2000)
			r := startSplit(t, db, nil)
			var st State
			r.play(func() bool {
				if len(r.got) >= at {
					st, _ = DecodeState(r.e.State())
					return true
				}
				return false
			})
			r.stop()
			before := len(r.got)
			if len(st.Tables) != 1 {
				t.Fatalf("state after %d rows: %+v", before, st)
			}
			// What the stream had not met is lost with the run.
			for len(db.marks) > 0 {
				<-db.marks
			}
			again := startSplit(t, db, &st)
			again.play(func() bool { return !again.e.Pending() })
			again.stop()
			seen := map[int64]int{}
			for _, ev := range append(r.got, again.got...) {
				seen[ev.After[0].Int]++
			}
			for k := int64(1); k <= 2000; k++ {
				if seen[k] != 1 {
					t.Fatalf("after a restart at %d rows: row %d published %d times", before, k, seen[k])
				}
			}
			if p := again.e.Progress()[0]; p.Rows != 2000 {
				t.Errorf("rows counted %d, want 2000", p.Rows)
			}
			if len(st.Tables[0].Parts) == 2 {
				for _, e := range again.got {
					if e.Source.Snapshot == "first" {
						t.Errorf("row %d marked first after the restart", e.After[0].Int)
					}
				}
			}
		})
	}
}

// TestSmallTableStaysWhole: a table under two ranges of splitChunks
// chunks is read by one worker, in key order.
func TestSmallTableStaysWhole(t *testing.T) {
	db := splitDB(2*splitChunks*50 - 1)
	r := startSplit(t, db, nil)
	defer r.stop()
	r.play(func() bool { return !r.e.Pending() })
	for i, ev := range r.got {
		if ev.After[0].Int != int64(i+1) {
			t.Fatalf("row %d published %dth: want key order", ev.After[0].Int, i+1)
		}
	}
	for _, q := range db.reads {
		if q[len(q)-2:] != ".." {
			t.Fatalf("chunk query %s of a table of %d rows in chunks of 50: want no split", q, len(db.rows))
		}
	}
}

// TestRestoredFirstRangeKeepsCount: a position whose only range left is
// the table's first, not yet begun (the other range published its 1,000
// rows), resumes counting from those rows: the table's count is not reset
// as a keyless table's restart from its start is (review).
func TestRestoredFirstRangeKeepsCount(t *testing.T) {
	db := splitDB(2000)
	st := State{Tables: []TableState{{Table: "s.t", Rows: 1000, Initial: true, Parts: []RangeState{{Until: Key{[]byte("1000")}}}}}}
	r := startSplit(t, db, &st)
	defer r.stop()
	r.play(func() bool { return !r.e.Pending() })
	if len(r.got) != 1000 || r.got[0].After[0].Int != 1 || r.got[999].After[0].Int != 1000 {
		t.Fatalf("published %d rows, want keys 1 to 1000", len(r.got))
	}
	if p := r.e.Progress()[0]; p.Rows != 2000 {
		t.Errorf("rows counted %d, want 2000", p.Rows)
	}
}
