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

func (d *tablesDB) ReadChunk(_ context.Context, table string, after Key, limit int) ([]Row, error) {
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

// playSnapshot queues tables as the initial snapshot (after restoring
// from, when set), runs the workers and plays the stream until no table
// is pending; after each watermark it calls check (when set). It returns
// what was emitted as "<table>:<k>=<source.snapshot>".
func playSnapshot(t *testing.T, db *tablesDB, parallelism, chunk int, tables []string, from *State, check func(e *Engine, emitted []string)) []string {
	t.Helper()
	e := New(db, Config{Parallelism: parallelism, ChunkRows: chunk, IDPrefix: "t", TableName: memName})
	if from != nil {
		e.Restore(*from)
	} else {
		e.Queue(tables, true)
	}
	var got []string
	emit := func(_ context.Context, ev *change.Event) error {
		got = append(got, fmt.Sprintf("%s:%d=%s", ev.Table.ID.Name, ev.After[0].Int, ev.Source.Snapshot))
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait := e.Start(ctx, func(err error) { t.Errorf("the snapshot failed: %v", err) })
	deadline := time.After(10 * time.Second)
	for e.Pending() {
		select {
		case m := <-db.marks:
			if ok, err := e.Watermark(ctx, m, emit); !ok || err != nil {
				t.Fatalf("Watermark(%q) = %v, %v", m, ok, err)
			}
			if check != nil {
				check(e, got)
			}
		case <-deadline:
			t.Fatalf("the snapshot did not finish; emitted %v", got)
		}
	}
	cancel()
	wait()
	return got
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
		name   string
		rows   map[string][]int64
		chunk  int
		want   string
		tables []string
	}{
		{"last table empty", map[string][]int64{"s.a": {1, 2, 3}, "s.b": nil}, 2,
			"[a:1=first a:2=true a:3=last]", nil},
		{"two last tables empty", map[string][]int64{"s.a": {1, 2}, "s.b": {1, 2, 3}, "s.c": nil, "s.d": nil}, 10,
			"[a:1=first a:2=last_in_data_collection b:1=first_in_data_collection b:2=true b:3=last]", nil},
		{"chunks filled exactly", map[string][]int64{"s.a": {1, 2, 3, 4}, "s.b": {1, 2}}, 2,
			"[a:1=first a:2=true a:3=true a:4=last_in_data_collection b:1=first_in_data_collection b:2=last]", nil},
		{"one row", map[string][]int64{"s.a": {1}, "s.b": nil}, 2, "[a:1=last]", nil},
		{"first table empty", map[string][]int64{"s.a": nil, "s.b": {1, 2}}, 2, "[b:1=first b:2=last]", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tables []string
			for name := range tc.rows {
				tables = append(tables, name)
			}
			slices.Sort(tables)
			got := playSnapshot(t, newTablesDB(tc.rows), 1, tc.chunk, tables, nil, nil)
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
		got := playSnapshot(t, newTablesDB(rows), 2, 2, []string{"s.a", "s.b", "s.c"}, nil, nil)
		if len(got) != 9 || !strings.HasSuffix(got[len(got)-1], "=last") || strings.Count(fmt.Sprint(got), "=last ")+strings.Count(fmt.Sprint(got), "=last]") != 1 {
			t.Fatalf("emitted %v: want 9 rows, the last of them (only) marked last", got)
		}
		for _, last := range []string{"a:5=", "b:4="} {
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
	var st []byte
	check := func(e *Engine, emitted []string) {
		if p := e.Progress(); st == nil && p[0].Done && !p[1].Done {
			st = e.State() // s.a read to its end, s.b not yet
		}
	}
	playSnapshot(t, newTablesDB(rows), 1, 2, []string{"s.a", "s.b"}, nil, check)
	s, err := DecodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	got := playSnapshot(t, newTablesDB(rows), 1, 2, nil, &s, nil)
	if fmt.Sprint(got) != "[a:3=last]" {
		t.Errorf("state %s: the restart emitted %v, want [a:3=last]", st, got)
	}
}

// TestHeldRowBeforeItsChange: a change the stream reads to a row held
// back for its marker comes after that row, never before: the row is
// emitted first (its image is older; the change's may lack values only
// the row has, see touch.go), and only once.
func TestHeldRowBeforeItsChange(t *testing.T) {
	db := newTablesDB(map[string][]int64{"s.a": {1, 2, 3}, "s.b": {1}})
	e := New(db, Config{Parallelism: 1, ChunkRows: 10, IDPrefix: "t", TableName: memName})
	e.Queue([]string{"s.a", "s.b"}, true)
	var got []string
	emit := func(_ context.Context, ev *change.Event) error {
		got = append(got, fmt.Sprintf("%s:%s%d=%s", ev.Table.ID.Name, ev.Op, ev.After[0].Int, ev.Source.Snapshot))
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait := e.Start(ctx, func(err error) { t.Errorf("the snapshot failed: %v", err) })
	changed := false
	for deadline := time.After(10 * time.Second); e.Pending(); {
		select {
		case m := <-db.marks:
			if ok, err := e.Watermark(ctx, m, emit); !ok || err != nil {
				t.Fatalf("Watermark(%q) = %v, %v", m, ok, err)
			}
			if !changed && len(got) == 2 { // a:1 and a:2 out, a:3 held
				changed = true
				upd := &change.Event{Table: db.shapes["s.a"], Op: change.OpUpdate, After: change.Row{change.IntValue(3), change.IntValue(33)}}
				if err := e.Observe(ctx, upd, emit); err != nil {
					t.Fatal(err)
				}
				_ = emit(ctx, upd)
			}
		case <-deadline:
			t.Fatalf("the snapshot did not finish; emitted %v", got)
		}
	}
	cancel()
	wait()
	if want := "[a:r1=first a:r2=true a:r3=last_in_data_collection a:u3= b:r1=last]"; fmt.Sprint(got) != want {
		t.Errorf("emitted %v, want %s", got, want)
	}
}

// TestHeldRowOutWhenLastTableDropped: when the tables after a held row are
// dropped before they are read, no chunk ends the initial snapshot: the
// stream's next change emits the held row, "last", ahead of itself.
func TestHeldRowOutWhenLastTableDropped(t *testing.T) {
	db := newTablesDB(map[string][]int64{"s.a": {1, 2}, "s.b": {1}, "s.c": {1}})
	e := New(db, Config{Parallelism: 1, ChunkRows: 10, IDPrefix: "t", TableName: memName})
	e.Queue([]string{"s.a", "s.b"}, true)
	var got []string
	emit := func(_ context.Context, ev *change.Event) error {
		got = append(got, fmt.Sprintf("%s:%s%d=%s", ev.Table.ID.Name, ev.Op, ev.After[0].Int, ev.Source.Snapshot))
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait := e.Start(ctx, func(err error) { t.Errorf("the snapshot failed: %v", err) })
	for deadline := time.After(10 * time.Second); len(got) < 1; {
		select {
		case m := <-db.marks:
			if ok, err := e.Watermark(ctx, m, emit); !ok || err != nil {
				t.Fatalf("Watermark(%q) = %v, %v", m, ok, err)
			}
		case <-deadline:
			t.Fatalf("s.a was not read; emitted %v", got)
		}
	}
	e.Drop("s.b") // a:1 out, a:2 held
	ins := &change.Event{Table: db.shapes["s.c"], Op: change.OpCreate, After: change.Row{change.IntValue(7), change.IntValue(7)}}
	if err := e.Observe(ctx, ins, emit); err != nil {
		t.Fatal(err)
	}
	cancel()
	wait()
	if want := "[a:r1=first a:r2=last]"; fmt.Sprint(got) != want {
		t.Errorf("emitted %v, want %s", got, want)
	}
	if st, _ := DecodeState(e.State()); st.Pending() {
		t.Errorf("state %+v after the snapshot, want nothing pending", st)
	}
}
