package snapshot

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// tablesDB holds several tables s.<name>(k int primary key, v int) in
// memory, each read in key order.
type tablesDB struct {
	mu     sync.Mutex
	rows   map[string][]int64 // table → its keys, ascending
	marks  chan string
	shapes map[string]*change.Table
}

func newTablesDB(rows map[string][]int64) *tablesDB {
	d := &tablesDB{rows: rows, marks: make(chan string, 64), shapes: map[string]*change.Table{}}
	for name := range rows {
		d.shapes[name] = &change.Table{ID: change.TableID{Schema: "s", Name: strings.TrimPrefix(name, "s.")}, Key: []int{0},
			Columns: []change.Column{{Name: "k"}, {Name: "v"}}}
	}
	return d
}

func (d *tablesDB) Session(context.Context) (Session, error)         { return d, nil }
func (d *tablesDB) Close() error                                     { return nil }
func (d *tablesDB) Estimate(context.Context, string) (int64, error)  { return 0, nil }
func (d *tablesDB) WriteWatermark(_ context.Context, m string) error { d.marks <- m; return nil }
func (d *tablesDB) Split(context.Context, string, Key, int64, int) ([]Key, error) {
	return nil, nil
}

func (d *tablesDB) ReadChunk(_ context.Context, table string, after, until Key, limit int) ([]Row, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	from := int64(0)
	if after != nil {
		from, _ = strconv.ParseInt(string(after[0]), 10, 64)
	}
	var out []Row
	for _, k := range d.rows[table] {
		if k > from && len(out) < limit {
			out = append(out, Row{Key: Key{[]byte(strconv.FormatInt(k, 10))},
				Event: &change.Event{Table: d.shapes[table], Op: change.OpRead, After: change.Row{change.IntValue(k), change.IntValue(k)}}})
		}
	}
	return out, nil
}

// play is an engine's snapshot on db with the stream played by the test:
// got is what the stream emitted, "<table>:<op><k>=<source.snapshot>".
type play struct {
	t   *testing.T
	e   *Engine
	db  *tablesDB
	ctx context.Context
	got []string
}

// startPlay queues tables as the initial snapshot (or restores from, when
// set) and starts the workers; stop stops them.
func startPlay(t *testing.T, db *tablesDB, parallelism, chunk int, tables []string, from *State) (p *play, stop func()) {
	e := New(db, Config{Parallelism: parallelism, ChunkRows: chunk, IDPrefix: "t", TableName: memName})
	if from != nil {
		e.Restore(*from)
	} else {
		e.Queue(tables, true)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p = &play{t: t, e: e, db: db, ctx: ctx}
	wait := e.Start(ctx, func(err error) { t.Errorf("the snapshot failed: %v", err) })
	return p, func() { cancel(); wait() }
}

func (p *play) emit(_ context.Context, ev *change.Event) error {
	p.got = append(p.got, fmt.Sprintf("%s:%s%d=%s", ev.Table.ID.Name, ev.Op, ev.After[0].Int, ev.Source.Snapshot))
	return nil
}

// until hands the watermarks the workers write to Watermark until done
// (asked before each).
func (p *play) until(done func() bool) {
	p.t.Helper()
	for deadline := time.After(10 * time.Second); !done(); {
		select {
		case m := <-p.db.marks:
			if ok, err := p.e.Watermark(p.ctx, m, p.emit); !ok || err != nil {
				p.t.Fatalf("Watermark(%q) = %v, %v", m, ok, err)
			}
		case <-deadline:
			p.t.Fatalf("the stream did not get there; emitted %v", p.got)
		}
	}
}

// change is the stream's: observed, then emitted.
func (p *play) change(ev *change.Event) {
	p.t.Helper()
	if err := p.e.Observe(p.ctx, ev, p.emit); err != nil {
		p.t.Fatal(err)
	}
	_ = p.emit(p.ctx, ev)
}

// playSnapshot runs the snapshot until nothing is pending and returns
// what it emitted.
func playSnapshot(t *testing.T, db *tablesDB, parallelism, chunk int, tables []string, from *State) []string {
	t.Helper()
	p, stop := startPlay(t, db, parallelism, chunk, tables, from)
	defer stop()
	p.until(func() bool { return !p.e.Pending() })
	return p.got
}

// TestLastMarkWhenLastTableEmpty: the initial snapshot's very last row is
// "last" however the snapshot ends, as Debezium marks it (its
// BufferingSnapshotChangeRecordReceiver holds each record back until the
// next, and marks the one it holds at the end "last"): when the last
// tables are empty, "last" is the last row of an earlier table; when a
// table's rows fill its chunks exactly (its last chunk is empty), its last
// row is still last_in_data_collection; a snapshot of one row marks it
// "last" (Debezium: LAST before FIRST). Without it a consumer waiting for
// "last" waits forever.
func TestLastMarkWhenLastTableEmpty(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rows  map[string][]int64
		chunk int
		want  string
	}{
		{"last table empty", map[string][]int64{"s.a": {1, 2, 3}, "s.b": nil}, 2,
			"[a:r1=first a:r2=true a:r3=last]"},
		{"two last tables empty", map[string][]int64{"s.a": {1, 2}, "s.b": {1, 2, 3}, "s.c": nil, "s.d": nil}, 10,
			"[a:r1=first a:r2=last_in_data_collection b:r1=first_in_data_collection b:r2=true b:r3=last]"},
		{"chunks filled exactly", map[string][]int64{"s.a": {1, 2, 3, 4}, "s.b": {1, 2}}, 2,
			"[a:r1=first a:r2=true a:r3=true a:r4=last_in_data_collection b:r1=first_in_data_collection b:r2=last]"},
		{"one row", map[string][]int64{"s.a": {1}, "s.b": nil}, 2, "[a:r1=last]"},
		{"first table empty", map[string][]int64{"s.a": nil, "s.b": {1, 2}}, 2, "[b:r1=first b:r2=last]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tables []string
			for name := range tc.rows {
				tables = append(tables, name)
			}
			slices.Sort(tables)
			got := playSnapshot(t, newTablesDB(tc.rows), 1, tc.chunk, tables, nil)
			if fmt.Sprint(got) != tc.want {
				t.Errorf("emitted %v, want %s", got, tc.want)
			}
		})
	}
}

// TestLastMarkParallel: with two tables read at once, the snapshot still
// ends with exactly one "last", on the last row emitted, and each table's
// last row is marked last_in_data_collection (or "last").
func TestLastMarkParallel(t *testing.T) {
	for range 20 {
		rows := map[string][]int64{"s.a": {1, 2, 3, 4, 5}, "s.b": {1, 2, 3, 4}, "s.c": nil}
		got := playSnapshot(t, newTablesDB(rows), 2, 2, []string{"s.a", "s.b", "s.c"}, nil)
		if len(got) != 9 || !strings.HasSuffix(got[len(got)-1], "=last") || strings.Count(fmt.Sprint(got), "=last ")+strings.Count(fmt.Sprint(got), "=last]") != 1 {
			t.Fatalf("emitted %v: want 9 rows, the last of them (only) marked last", got)
		}
		for _, last := range []string{"a:r5=", "b:r4="} {
			for _, g := range got {
				if strings.HasPrefix(g, last) && !strings.HasSuffix(g, "=last_in_data_collection") && !strings.HasSuffix(g, "=last") {
					t.Fatalf("emitted %v: %s is its table's last row, marked %s", got, last, g)
				}
			}
		}
	}
}

// TestHeldRowResumes: a position made while a table's last row waits for
// its marker reads that row again on a restart (the row is not published
// yet: a crash or a SIGTERM then must not lose it), and the restarted
// snapshot marks it "last".
func TestHeldRowResumes(t *testing.T) {
	rows := map[string][]int64{"s.a": {1, 2, 3}, "s.b": nil}
	p, stop := startPlay(t, newTablesDB(rows), 1, 2, []string{"s.a", "s.b"}, nil)
	p.until(func() bool { pr := p.e.Progress(); return pr[0].Done && !pr[1].Done }) // s.a read to its end, s.b not yet
	st := p.e.State()
	stop()
	s, err := DecodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	got := playSnapshot(t, newTablesDB(rows), 1, 2, nil, &s)
	if fmt.Sprint(got) != "[a:r3=last]" {
		t.Errorf("state %s: the restart emitted %v, want [a:r3=last]", st, got)
	}
}

// TestHeldRowBeforeItsChange: a change the stream reads to a row held
// back for its marker comes after that row, never before: the row is
// emitted first (its image is older; the change's may lack values only
// the row has, see touch.go), and only once.
func TestHeldRowBeforeItsChange(t *testing.T) {
	p, stop := startPlay(t, newTablesDB(map[string][]int64{"s.a": {1, 2, 3}, "s.b": {1}}), 1, 10, []string{"s.a", "s.b"}, nil)
	defer stop()
	p.until(func() bool { return len(p.got) == 2 }) // a:1 and a:2 out, a:3 held
	p.change(&change.Event{Table: p.db.shapes["s.a"], Op: change.OpUpdate, After: change.Row{change.IntValue(3), change.IntValue(33)}})
	p.until(func() bool { return !p.e.Pending() })
	if want := "[a:r1=first a:r2=true a:r3=last_in_data_collection a:u3= b:r1=last]"; fmt.Sprint(p.got) != want {
		t.Errorf("emitted %v, want %s", p.got, want)
	}
}

// TestHeldRowOutWhenLastTableDropped: when the tables after a held row are
// dropped before they are read, no chunk ends the initial snapshot: the
// stream's next change emits the held row, "last", ahead of itself.
func TestHeldRowOutWhenLastTableDropped(t *testing.T) {
	p, stop := startPlay(t, newTablesDB(map[string][]int64{"s.a": {1, 2}, "s.b": {1}, "s.c": {1}}), 1, 10, []string{"s.a", "s.b"}, nil)
	defer stop()
	p.until(func() bool { return len(p.got) == 1 }) // a:1 out, a:2 held
	p.e.Drop("s.b")
	p.change(&change.Event{Table: p.db.shapes["s.c"], Op: change.OpCreate, After: change.Row{change.IntValue(7), change.IntValue(7)}})
	if want := "[a:r1=first a:r2=last c:c7=]"; fmt.Sprint(p.got) != want {
		t.Errorf("emitted %v, want %s", p.got, want)
	}
	if st, _ := DecodeState(p.e.State()); st.Pending() {
		t.Errorf("state %+v after the snapshot, want nothing pending", st)
	}
}
