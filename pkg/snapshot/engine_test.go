package snapshot

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// table t(k int primary key, v int) held in memory: the engine's logic
// alone, without a database (the sources' tests in integration/ run it
// on the real ones).
var memTable = &change.Table{ID: change.TableID{Schema: "s", Name: "t"}, Key: []int{0},
	Columns: []change.Column{{Name: "k"}, {Name: "v"}}}

type memDB struct {
	mu    sync.Mutex
	rows  map[int64]int64 // k → v
	marks chan string     // the "log": watermarks in write order
	// beforeHigh runs after the chunk is read, before the high mark:
	// a change that lands in the window.
	beforeHigh func()
	// moved is how many chunk reads fail with ErrShapeMoved first.
	moved int
}

func (d *memDB) Session(context.Context) (Session, error) { return d, nil }
func (d *memDB) Close() error                             { return nil }
func (d *memDB) Estimate(context.Context, string) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return int64(len(d.rows)), nil
}

func (d *memDB) WriteWatermark(_ context.Context, mark string) error {
	if d.beforeHigh != nil && len(mark) > 5 && mark[len(mark)-5:] == ":high" {
		d.beforeHigh()
	}
	d.marks <- mark
	return nil
}

func (d *memDB) ReadChunk(_ context.Context, _ string, after, until Key, limit int) ([]Row, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.moved > 0 {
		d.moved--
		return nil, fmt.Errorf("column \"gone\" does not exist: %w", ErrShapeMoved)
	}
	from, to := int64(0), int64(1<<16)
	if after != nil {
		from, _ = strconv.ParseInt(string(after[0]), 10, 64)
	}
	if until != nil {
		to, _ = strconv.ParseInt(string(until[0]), 10, 64)
	}
	var out []Row
	for k := from + 1; k <= to && len(out) < limit; k++ {
		v, ok := d.rows[k]
		if !ok {
			continue
		}
		out = append(out, Row{Key: Key{[]byte(strconv.FormatInt(k, 10))},
			Event: &change.Event{Table: memTable, Op: change.OpRead, After: change.Row{change.IntValue(k), change.IntValue(v)}}})
	}
	return out, nil
}

// Split cuts the keys after after into parts ranges of about the same
// rows, as a source's split query does.
func (d *memDB) Split(_ context.Context, _ string, after Key, _ int64, parts int) ([]Key, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	from := int64(0)
	if after != nil {
		from, _ = strconv.ParseInt(string(after[0]), 10, 64)
	}
	var keys []int64
	for k := range d.rows {
		if k > from {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []Key
	for i := 1; i < parts; i++ {
		if at := i*len(keys)/parts - 1; at >= 0 {
			out = append(out, Key{[]byte(strconv.FormatInt(keys[at], 10))})
		}
	}
	return out, nil
}

// memName names a table as source.tables does.
func memName(id change.TableID) string { return id.Schema + "." + id.Name }

// streamUntilDone plays the stream: it hands every watermark the engine
// writes to Watermark, with emit, until the one queued table is done.
func streamUntilDone(t *testing.T, ctx context.Context, e *Engine, marks <-chan string, emit func(context.Context, *change.Event) error, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for !func() bool { p := e.Progress(); return len(p) == 1 && p[0].Done }() {
		select {
		case m := <-marks:
			if ok, err := e.Watermark(ctx, m, emit); !ok || err != nil {
				t.Fatalf("Watermark(%q) = %v, %v", m, ok, err)
			}
		case <-deadline:
			t.Fatalf("the snapshot did not finish within %v", within)
		}
	}
}

// snapshotTable queues s.t, runs the engine's workers and plays the
// stream with emit until the table is done, then stops the workers.
func snapshotTable(t *testing.T, e *Engine, marks <-chan string, emit func(context.Context, *change.Event) error, within time.Duration) {
	t.Helper()
	e.Queue([]string{"s.t"}, true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait := e.Start(ctx, func(err error) { t.Errorf("the snapshot failed: %v", err) })
	streamUntilDone(t, ctx, e, marks, emit, within)
	cancel()
	wait()
}

// TestWindowDropsKeysChangedInIt: a key deleted and a key updated while
// their chunk is in its window are not emitted from the chunk (the
// stream's messages are the newer ones); the others are, in key order,
// after the changes the stream emitted before the high watermark; the
// state resumes after the last key.
func TestWindowDropsKeysChangedInIt(t *testing.T) {
	db := &memDB{rows: map[int64]int64{}, marks: make(chan string, 16)}
	for k := int64(1); k <= 10; k++ {
		db.rows[k] = k
	}
	e := New(db, Config{Parallelism: 1, ChunkRows: 6, IDPrefix: "t", TableName: memName})
	var stream []*change.Event // what the stream emits, in order
	emit := func(_ context.Context, ev *change.Event) error { stream = append(stream, ev); return nil }
	changed := false
	db.beforeHigh = func() {
		if changed {
			return
		}
		changed = true
		// In the first window: delete k=2, update k=3 (v=33); the stream
		// sees both before the high watermark.
		del := &change.Event{Table: memTable, Op: change.OpDelete, Before: change.Row{change.IntValue(2), change.IntValue(2)}}
		upd := &change.Event{Table: memTable, Op: change.OpUpdate, After: change.Row{change.IntValue(3), change.IntValue(33)}}
		for _, ev := range []*change.Event{del, upd} {
			if err := e.Observe(context.Background(), ev, emit); err != nil {
				t.Error(err)
			}
		}
		stream = append(stream, del, upd)
	}
	snapshotTable(t, e, db.marks, emit, 10*time.Second)

	var got []string
	for _, ev := range stream {
		row := ev.After
		if row == nil {
			row = ev.Before
		}
		got = append(got, ev.Op.String()+strconv.FormatInt(row[0].Int, 10))
	}
	want := []string{"d2", "u3", "r1", "r4", "r5", "r6", "r7", "r8", "r9", "r10"}
	if len(got) != len(want) {
		t.Fatalf("stream %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("stream %v, want %v", got, want)
		}
	}
	if s := stream[2].Source.Snapshot; s != "first" {
		t.Errorf("first r row: snapshot %q, want first", s)
	}
	if s := stream[len(stream)-1].Source.Snapshot; s != "last" {
		t.Errorf("last r row: snapshot %q, want last", s)
	}
	if p := e.Progress()[0]; p.Rows != 8 || p.Estimated != 10 {
		t.Errorf("progress %+v, want 8 rows of an estimated 10", p)
	}
	st, err := DecodeState(e.State())
	if err != nil || len(st.Tables) != 0 || len(st.Done) != 1 {
		t.Errorf("state after the snapshot %+v, %v: want s.t done", st, err)
	}
}

// TestShapeMovedReadsAgain: a chunk read that meets an ALTER TABLE the
// stream has not reached (ErrShapeMoved) is read again once the stream
// may have got there, instead of failing the pipeline (found by the soak:
// a dropped column stopped every restart until the stream passed the DDL).
func TestShapeMovedReadsAgain(t *testing.T) {
	db := &memDB{rows: map[int64]int64{1: 1, 2: 2, 3: 3}, marks: make(chan string, 16), moved: 2}
	e := New(db, Config{Parallelism: 1, ChunkRows: 2, IDPrefix: "t", TableName: memName})
	var reads []int64
	emit := func(_ context.Context, ev *change.Event) error { reads = append(reads, ev.After[0].Int); return nil }
	snapshotTable(t, e, db.marks, emit, 20*time.Second)
	if fmt.Sprint(reads) != "[1 2 3]" {
		t.Errorf("read rows %v, want [1 2 3]", reads)
	}
}

// TestParallelChunksHoldDefaultRows: with n workers chunk queries ask for
// at most ChunkRows/n rows (after a table's first chunks, each up to
// chunkGrowth times the one before), so that the chunks held at once (two
// per worker, one read ahead) add up to what one worker holds.
func TestParallelChunksHoldDefaultRows(t *testing.T) {
	t.Setenv(chunkRowsEnv, "")
	for _, tc := range []struct{ parallelism, want int }{{1, ChunkRows}, {2, ChunkRows / 2}, {4, ChunkRows / 4}, {8, ChunkRows / 8}} {
		rows := map[int64]int64{}
		for k := int64(1); k <= 2*ChunkRows; k++ {
			rows[k] = k
		}
		db := &limitDB{memDB: memDB{rows: rows, marks: make(chan string, 16)}}
		e := New(db, Config{Parallelism: tc.parallelism, IDPrefix: "t", TableName: memName})
		snapshotTable(t, e, db.marks, func(context.Context, *change.Event) error { return nil }, 10*time.Second)
		if got := slices.Max(db.limits); got != tc.want {
			t.Errorf("snapshot_parallelism %d: chunk queries of up to %d rows (%v), want %d", tc.parallelism, got, db.limits, tc.want)
		}
	}
}

// TestSourceDefaultChunkRows: a source's DefaultChunkRows replaces ChunkRows
// as the chunk of an idle stream, divided among the workers as ChunkRows
// is, and the tests' override still wins over it.
func TestSourceDefaultChunkRows(t *testing.T) {
	for _, tc := range []struct {
		env               string
		parallelism, want int
	}{{"", 1, 3000}, {"", 2, 1500}, {"40", 2, 20}} {
		t.Setenv(chunkRowsEnv, tc.env)
		rows := map[int64]int64{}
		for k := int64(1); k <= 7000; k++ {
			rows[k] = k
		}
		db := &limitDB{memDB: memDB{rows: rows, marks: make(chan string, 16)}}
		e := New(db, Config{Parallelism: tc.parallelism, DefaultChunkRows: 3000, IDPrefix: "t", TableName: memName})
		snapshotTable(t, e, db.marks, func(context.Context, *change.Event) error { return nil }, 10*time.Second)
		if got := slices.Max(db.limits); got != tc.want {
			t.Errorf("%s=%q, snapshot_parallelism %d: chunk queries of up to %d rows (%v), want %d", chunkRowsEnv, tc.env, tc.parallelism, got, db.limits, tc.want)
		}
	}
}

// TestSmallChunksWhileStreaming: once the stream carries changes, the
// next chunk query asks for StreamingChunkRows rows, not ChunkRows; when
// the stream is quiet again, chunks are full size again (after the
// table's first chunk, of firstChunkRows rows, and chunks growing by
// chunkGrowth from there).
func TestSmallChunksWhileStreaming(t *testing.T) {
	t.Setenv(chunkRowsEnv, "")
	db := &limitDB{memDB: memDB{rows: map[int64]int64{}, marks: make(chan string, 16)}}
	for k := int64(1); k <= 3*ChunkRows; k++ {
		db.rows[k] = k
	}
	e := New(db, Config{Parallelism: 1, IDPrefix: "t", TableName: memName})
	chunk := 0
	db.beforeHigh = func() {
		chunk++
		if chunk == 5 { // the stream publishes a change during chunk 5 (4,096 rows)
			ev := &change.Event{Table: memTable, Op: change.OpCreate, After: change.Row{change.IntValue(99999), change.IntValue(1)}}
			if err := e.Observe(context.Background(), ev, func(context.Context, *change.Event) error { return nil }); err != nil {
				t.Error(err)
			}
		}
	}
	snapshotTable(t, e, db.marks, func(context.Context, *change.Event) error { return nil }, 10*time.Second)
	if want := []int{firstChunkRows, 64, 256, 1024, 4096, StreamingChunkRows, chunkGrowth * StreamingChunkRows, ChunkRows}; len(db.limits) < len(want) || !slices.Equal(db.limits[:len(want)], want) {
		t.Errorf("chunk queries of %v rows, want %v first", db.limits, want)
	}
}

// TestChunksHoldBytesNotOnlyRows: a table of large rows is read in chunks
// of at most ChunkBytes (after a first chunk of firstChunkRows rows, their
// size unknown before it), not of ChunkRows rows: 2,500 rows of 900 KB
// held a whole 1.3 GB table in memory. Every row is still emitted once.
func TestChunksHoldBytesNotOnlyRows(t *testing.T) {
	t.Setenv(chunkRowsEnv, "")
	const rows, valueBytes, budget = 100, 4000, 40_000
	db := &bigDB{limitDB: limitDB{memDB: memDB{rows: map[int64]int64{}, marks: make(chan string, 16)}}, size: valueBytes}
	for k := int64(1); k <= rows; k++ {
		db.rows[k] = k
	}
	e := New(db, Config{Parallelism: 1, ChunkBytes: budget, IDPrefix: "t", TableName: memName})
	emittedOnce(t, e, db.marks, rows, 10*time.Second)
	perRow := valueBytes + 2*16
	if db.limits[0] != firstChunkRows {
		t.Errorf("first chunk query of %d rows, want %d", db.limits[0], firstChunkRows)
	}
	for _, n := range db.limits[1:] {
		if n < 1 || n*perRow > budget {
			t.Errorf("chunk queries of %v rows: %d rows of %d bytes exceed the %d-byte chunk", db.limits, n, perRow, budget)
			break
		}
	}
}

// sizedDB is a bigDB whose session tells its rows' size (Sizer) before
// reading any: rowBytes, or 0 for "unknown".
type sizedDB struct {
	bigDB
	rowBytes int
}

func (d *sizedDB) Session(context.Context) (Session, error) { return d, nil }

func (d *sizedDB) RowBytes(context.Context, string) (int, error) { return d.rowBytes, nil }

// TestSizerSizesFirstChunk: a session that knows a table's row size from
// its statistics (Sizer) has the first chunk read at full size, bounded by
// ChunkBytes at that size, not firstChunkRows rows and growing from there
// (each small chunk costs a query and a watermark's round trip); one that
// does not know (0) starts small as before. Every row is emitted once
// either way.
func TestSizerSizesFirstChunk(t *testing.T) {
	t.Setenv(chunkRowsEnv, "")
	const rows, valueBytes = 3 * ChunkRows, 100
	perRow := valueBytes + 2*16
	for _, tc := range []struct {
		name               string
		rowBytes, budget   int
		first, wantQueries int
	}{
		{"rows", perRow, ChunkBytes, ChunkRows, 4},                   // 3 full chunks and the empty one
		{"bytes", perRow, 1000 * perRow, 1000, 3*ChunkRows/1000 + 1}, // ChunkBytes bounds it
		{"unknown", 0, ChunkBytes, firstChunkRows, 4 + 2 + 1},        // 16, 64, … 4096, then full
		{"rows larger than said", 10, 1000 * perRow, ChunkRows, 0},   // then sized by the rows read
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := &sizedDB{bigDB: bigDB{limitDB: limitDB{memDB: memDB{rows: map[int64]int64{}, marks: make(chan string, 16)}}, size: valueBytes}, rowBytes: tc.rowBytes}
			for k := int64(1); k <= rows; k++ {
				db.rows[k] = k
			}
			e := New(db, Config{Parallelism: 1, ChunkBytes: tc.budget, IDPrefix: "t", TableName: memName})
			emittedOnce(t, e, db.marks, rows, 10*time.Second)
			if db.limits[0] != tc.first {
				t.Errorf("first chunk query of %d rows (%v), want %d", db.limits[0], db.limits, tc.first)
			}
			if tc.wantQueries > 0 && len(db.limits) > tc.wantQueries {
				t.Errorf("%d chunk queries (%v), want at most %d", len(db.limits), db.limits, tc.wantQueries)
			}
			for _, n := range db.limits[1:] {
				if n*perRow > tc.budget {
					t.Errorf("chunk queries of %v rows: %d rows of %d bytes exceed the %d-byte chunk", db.limits, n, perRow, tc.budget)
					break
				}
			}
		})
	}
}

// TestChunksStopAtBytesAfterSmallRows: a table whose first rows are tiny
// and the rest large gets a chunk sized for tiny rows; the source keeps
// no row past ChunkBytes (Session.ReadChunk), and the engine reads on
// after the last row it kept rather than taking the short chunk for the
// table's end. Every row is emitted once.
func TestChunksStopAtBytesAfterSmallRows(t *testing.T) {
	t.Setenv(chunkRowsEnv, "")
	const small, big, valueBytes = firstChunkRows, 40, 600 << 10
	db := &cappedDB{limitDB: limitDB{memDB: memDB{rows: map[int64]int64{}, marks: make(chan string, 64)}}, from: small + 1, size: valueBytes}
	for k := int64(1); k <= small+big; k++ {
		db.rows[k] = k
	}
	e := New(db, Config{Parallelism: 1, IDPrefix: "t", TableName: memName})
	emittedOnce(t, e, db.marks, small+big, 20*time.Second)
	if len(db.limits) < 3 || db.limits[1] <= big {
		t.Errorf("chunk queries of %v rows: the second should be sized for the tiny rows, and stopped by bytes", db.limits)
	}
}

// cappedDB is limitDB whose rows from key from on carry a value of size
// bytes, and which keeps no row past ChunkBytes, as Session.ReadChunk says
// a source does.
type cappedDB struct {
	limitDB
	from int64
	size int
}

func (d *cappedDB) Session(context.Context) (Session, error) { return d, nil }

func (d *cappedDB) ReadChunk(ctx context.Context, table string, after, until Key, limit int) ([]Row, error) {
	out, err := d.limitDB.ReadChunk(ctx, table, after, until, limit)
	var fill ChunkFill
	for i, r := range out {
		if r.Event.After[0].Int >= d.from {
			r.Event.After[1] = change.BinaryValue(make([]byte, d.size))
		}
		if fill.Keep(r); fill.Full() {
			out = out[:i+1]
			break
		}
	}
	return out, err
}

// TestChunksAfterRunsOfTinyRows: a table whose key order alternates runs
// of tiny rows and runs of large ones is read with little more than its
// bytes: a chunk grows at most chunkGrowth times the one before, so a
// chunk sized on a run of tiny rows does not ask for 2,500 rows whose
// large ones the source reads and drops past ChunkBytes (a review measured
// 20 times the table's bytes sent by MariaDB before).
func TestChunksAfterRunsOfTinyRows(t *testing.T) {
	t.Setenv(chunkRowsEnv, "")
	const runs, tiny, large, size = 40, 200, 10, 896 << 10
	db := &runsDB{memDB: memDB{rows: map[int64]int64{}, marks: make(chan string, 64)}, tiny: tiny, large: large, size: size}
	for k := int64(1); k <= runs*(tiny+large); k++ {
		db.rows[k] = k
	}
	e := New(db, Config{Parallelism: 1, IDPrefix: "t", TableName: memName})
	emittedOnce(t, e, db.marks, len(db.rows), 30*time.Second)
	table := runs * (tiny + large*size)
	if db.read > 3*table {
		t.Errorf("the chunk queries read %d bytes for a table of %d (%.1f times)", db.read, table, float64(db.read)/float64(table))
	}
	t.Logf("read %.2f times the table's bytes in %d chunk queries", float64(db.read)/float64(table), db.queries)
}

// runsDB is memDB whose keys come in runs of tiny rows (1 byte) and runs
// of large rows (size bytes), and which, as a source does, reads every row
// a query asks for but keeps none past ChunkBytes; read counts the bytes
// of every row read, kept or dropped.
type runsDB struct {
	memDB
	tiny, large, size int
	read, queries     int
}

func (d *runsDB) Session(context.Context) (Session, error) { return d, nil }

func (d *runsDB) ReadChunk(ctx context.Context, table string, after, until Key, limit int) ([]Row, error) {
	all, err := d.memDB.ReadChunk(ctx, table, after, until, limit)
	d.queries++
	var fill ChunkFill
	n := len(all)
	for i, r := range all {
		b := 1
		if int(r.Event.After[0].Int-1)%(d.tiny+d.large) >= d.tiny {
			b = d.size
		}
		d.read += b
		if !fill.Full() {
			r.Event.After[1] = change.BinaryValue(make([]byte, b))
			if fill.Keep(r); fill.Full() {
				n = i + 1
			}
		}
	}
	return all[:n], err
}

// emittedOnce snapshots table s.t with e and fails unless its rows 1..n
// were each emitted once.
func emittedOnce(t *testing.T, e *Engine, marks chan string, n int, timeout time.Duration) {
	t.Helper()
	seen := map[int64]int{}
	snapshotTable(t, e, marks, func(_ context.Context, ev *change.Event) error {
		seen[ev.After[0].Int]++
		return nil
	}, timeout)
	for k := int64(1); k <= int64(n); k++ {
		if seen[k] != 1 {
			t.Errorf("row %d emitted %d times, want once", k, seen[k])
		}
	}
	if len(seen) != n {
		t.Errorf("%d distinct rows emitted, want %d", len(seen), n)
	}
}

// bigDB is limitDB whose rows carry a value of size bytes.
type bigDB struct {
	limitDB
	size int
}

func (d *bigDB) Session(context.Context) (Session, error) { return d, nil }

func (d *bigDB) ReadChunk(ctx context.Context, table string, after, until Key, limit int) ([]Row, error) {
	out, err := d.limitDB.ReadChunk(ctx, table, after, until, limit)
	for _, r := range out {
		r.Event.After[1] = change.BinaryValue(make([]byte, d.size))
	}
	return out, err
}

// limitDB records the limit of the chunk queries.
type limitDB struct {
	memDB
	limit  int
	limits []int
}

func (d *limitDB) Session(context.Context) (Session, error) { return d, nil }

func (d *limitDB) ReadChunk(ctx context.Context, table string, after, until Key, limit int) ([]Row, error) {
	d.mu.Lock()
	d.limit = limit
	d.limits = append(d.limits, limit)
	d.mu.Unlock()
	return d.memDB.ReadChunk(ctx, table, after, until, limit)
}

// TestPacedByBacklog: while the destination still has more than half a
// chunk of read rows to acknowledge (with the stream publishing), no new
// chunk starts, so the stream's changes never queue behind a full buffer
// of snapshot rows; once it drains, the snapshot goes on.
func TestPacedByBacklog(t *testing.T) {
	db := &memDB{rows: map[int64]int64{1: 1, 2: 2, 3: 3}, marks: make(chan string, 16)}
	var backlog atomic.Int64
	backlog.Store(5)
	e := New(db, Config{Parallelism: 1, ChunkRows: 4, IDPrefix: "t", Backlog: backlog.Load,
		TableName: memName})
	e.Queue([]string{"s.t"}, true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait := e.Start(ctx, func(err error) { t.Errorf("the snapshot failed: %v", err) })
	select {
	case m := <-db.marks:
		t.Fatalf("a chunk started (%s) with 5 read rows unacknowledged, more than half its 4", m)
	case <-time.After(300 * time.Millisecond):
	}
	backlog.Store(2)
	emit := func(context.Context, *change.Event) error { return nil }
	streamUntilDone(t, ctx, e, db.marks, emit, 10*time.Second)
	cancel()
	wait()
}

// TestRestoreReadsOnAfterKey: a position's state, restored, resumes the
// table after its key; a table queued since and not in it starts over.
func TestRestoreReadsOnAfterKey(t *testing.T) {
	e := New(&memDB{}, Config{TableName: func(change.TableID) string { return "" }})
	e.Queue([]string{"s.later"}, false)
	raw, _ := json.Marshal(State{Tables: []TableState{{Table: "s.t", Key: Key{[]byte("k\xe9")}, Rows: 5, Initial: true}}, Done: []string{"s.u"}})
	st, err := DecodeState(raw)
	if err != nil {
		t.Fatal(err)
	}
	e.Restore(st)
	back, err := DecodeState(e.State())
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Tables) != 2 || back.Tables[0].Table != "s.t" || string(back.Tables[0].Key[0]) != "k\xe9" || back.Tables[0].Rows != 5 ||
		back.Tables[1].Table != "s.later" || back.Tables[1].Key != nil || len(back.Done) != 1 {
		t.Errorf("restored state %+v", back)
	}
}

// TestRestoreKeepsRequeuedFinishedTable: a table queued before the state
// is restored (a backfill requested while the pipeline was stopped) is
// read again from its start even though the state has it finished.
func TestRestoreKeepsRequeuedFinishedTable(t *testing.T) {
	e := New(&memDB{}, Config{TableName: func(change.TableID) string { return "" }})
	e.Queue([]string{"s.t"}, false)
	e.Restore(State{Done: []string{"s.t", "s.u"}})
	back, err := DecodeState(e.State())
	if err != nil {
		t.Fatal(err)
	}
	if !e.Pending() || len(back.Tables) != 1 || back.Tables[0].Table != "s.t" || back.Tables[0].Key != nil || back.Tables[0].Rows != 0 ||
		len(back.Done) != 1 || back.Done[0] != "s.u" {
		t.Errorf("restored state %+v, want s.t queued from its start and s.u done", back)
	}
}

// TestRestoreReadsRequeuedUnfinishedTableAgain: a table queued before the
// state is restored (a backfill requested while the pipeline was
// stopped) whose snapshot the state has unfinished is read again from its
// first row, not on after the state's key: the request asks for every
// row. A reconnect's Restore of the same state, once that snapshot has
// begun in this engine, reads on after the key.
func TestRestoreReadsRequeuedUnfinishedTableAgain(t *testing.T) {
	unfinished := State{Tables: []TableState{{Table: "s.t", Key: Key{[]byte("5")}, Rows: 5, Started: 1000}}}
	e := New(&memDB{}, Config{TableName: func(change.TableID) string { return "" }})
	e.Queue([]string{"s.t"}, false)
	e.Restore(unfinished)
	back, err := DecodeState(e.State())
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Tables) != 1 || back.Tables[0].Table != "s.t" || back.Tables[0].Key != nil || back.Tables[0].Rows != 0 {
		t.Errorf("restored state %+v, want s.t queued from its start", back)
	}

	e = New(&memDB{}, Config{TableName: func(change.TableID) string { return "" }})
	e.Restore(unfinished)
	e.Restore(unfinished)
	if back, _ = DecodeState(e.State()); len(back.Tables) != 1 || string(back.Tables[0].Key[0]) != "5" || back.Tables[0].Rows != 5 {
		t.Errorf("restored again %+v, want s.t read on after key 5", back)
	}
}

// TestAgainRestartsBegunTable: Again reads a table whose snapshot has
// begun from its first row again, leaves one queued and not begun where
// it is, and queues a finished one again.
func TestAgainRestartsBegunTable(t *testing.T) {
	e := New(&memDB{}, Config{TableName: func(change.TableID) string { return "" }})
	e.Restore(State{Tables: []TableState{{Table: "s.t", Key: Key{[]byte("5")}, Rows: 5, Started: 1000}, {Table: "s.q"}}, Done: []string{"s.u"}})
	for _, name := range []string{"s.t", "s.q", "s.u"} {
		e.Again(name)
	}
	back, err := DecodeState(e.State())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ts := range back.Tables {
		got = append(got, fmt.Sprintf("%s key %q rows %d started %v", ts.Table, ts.Key, ts.Rows, ts.Started != 0))
	}
	want := []string{`s.q key [] rows 0 started false`, `s.t key [] rows 0 started false`, `s.u key [] rows 0 started false`}
	if !slices.Equal(got, want) || len(back.Done) != 0 {
		t.Errorf("after Again: tables %q, done %v; want %q, none done", got, back.Done, want)
	}
}

// FuzzDecodeState: positions come back from the checkpoint store.
func FuzzDecodeState(f *testing.F) {
	f.Add([]byte(`{"tables":[{"table":"s.t","key":["MQ=="],"rows":3}],"done":["s.u"]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := DecodeState(b)
		if err != nil {
			return
		}
		e := New(&memDB{}, Config{TableName: func(change.TableID) string { return "" }})
		e.Restore(st)
		if _, err := DecodeState(e.State()); err != nil {
			t.Fatalf("re-encoded state does not decode: %v", err)
		}
	})
}

// scanDB serves memTable's rows as a table without a primary key, by the
// scan Session.ReadChunk describes: after nil opens it, ReadOn reads on.
type scanDB struct {
	memDB
	afters []string // each call's after: "nil", "on" or a key
	next   int64    // the open scan's next k; 0: none open
}

func (d *scanDB) Session(context.Context) (Session, error) { return d, nil }

func (d *scanDB) Split(context.Context, string, Key, int64, int) ([]Key, error) { return nil, nil }

func (d *scanDB) ReadChunk(_ context.Context, _ string, after, until Key, limit int) ([]Row, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case after == nil:
		d.afters, d.next = append(d.afters, "nil"), 1
	case len(after) == 0 && after != nil && d.next > 0:
		d.afters = append(d.afters, "on")
	default:
		return nil, fmt.Errorf("after %q without an open scan", after)
	}
	var out []Row
	for ; d.next <= int64(len(d.rows)) && len(out) < limit; d.next++ {
		out = append(out, Row{Event: &change.Event{Table: keylessTable, Op: change.OpRead,
			After: change.Row{change.IntValue(d.next), change.IntValue(d.rows[d.next])}}})
	}
	if len(out) < limit {
		d.next = 0
	}
	return out, nil
}

var keylessTable = &change.Table{ID: memTable.ID, Columns: memTable.Columns}

// TestKeylessTableReadInChunks: a table without a primary key is read in
// chunks of the limit from one scan (ReadOn), not whole in one chunk, and
// every row is published, ranked from 0 in its ID; a restart, whose
// state has no key, reads it from the start and ranks from 0 again.
func TestKeylessTableReadInChunks(t *testing.T) {
	db := &scanDB{memDB: memDB{rows: map[int64]int64{}, marks: make(chan string, 16)}}
	for k := int64(1); k <= 7; k++ {
		db.rows[k] = 10 * k
	}
	for _, restart := range []bool{false, true} {
		db.afters = nil
		e := New(db, Config{Parallelism: 1, ChunkRows: 3, IDPrefix: "t", TableName: memName})
		if restart {
			e.Restore(State{Tables: []TableState{{Table: "s.t", Rows: 5, Initial: true, Started: 1}}})
		}
		var ids []string
		var ks []int64
		emit := func(_ context.Context, ev *change.Event) error {
			ids, ks = append(ids, ev.ID[strings.LastIndex(ev.ID, ":")+1:]), append(ks, ev.After[0].Int)
			return nil
		}
		if restart {
			ctx, cancel := context.WithCancel(context.Background())
			wait := e.Start(ctx, func(err error) { t.Errorf("the snapshot failed: %v", err) })
			streamUntilDone(t, ctx, e, db.marks, emit, 10*time.Second)
			cancel()
			wait()
		} else {
			snapshotTable(t, e, db.marks, emit, 10*time.Second)
		}
		if fmt.Sprint(ks) != "[1 2 3 4 5 6 7]" || fmt.Sprint(ids) != "[#0 #1 #2 #3 #4 #5 #6]" || fmt.Sprint(db.afters) != "[nil on on]" {
			t.Errorf("restart %v: rows %v, IDs %v, reads after %v; want every row once, ranked from #0, read by one scan in 3 chunks", restart, ks, ids, db.afters)
		}
		if p := e.Progress()[0]; p.Rows != 7 {
			t.Errorf("restart %v: progress %d rows, want 7", restart, p.Rows)
		}
	}
}

// TestReadEventIDs holds a read event's ID to the form earlier releases
// wrote, "<prefix>:r:<table>:<started>:<key>" with the key's values as
// change.Value.String writes them, comma-joined: a resumed snapshot gives a
// row its earlier ID, and consumers deduplicate on it.
func TestReadEventIDs(t *testing.T) {
	tbl := &change.Table{Key: []int{0, 1, 2}, Columns: []change.Column{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
	rows := []change.Row{
		{change.IntValue(-42), change.TextValue(`a "quoted", ünïcode ✓ text`), {Kind: change.Float, Float: 1.5}},
		{{Kind: change.Binary, Bytes: []byte{0, 0xff, ','}}, {Kind: change.Null}, {Kind: change.Array, Elems: []change.Value{change.IntValue(1), change.TextValue("x")}}},
		{change.IntValue(7)}, // a key column past the row: left out
	}
	for i, row := range rows {
		ev := &change.Event{Table: tbl, After: row}
		var parts []string
		for _, k := range tbl.Key {
			if k < len(row) {
				parts = append(parts, row[k].String())
			}
		}
		if got, want := string(appendIDKey([]byte("p:"), ev, int64(i))), "p:"+strings.Join(parts, ","); got != want {
			t.Errorf("row %d: ID %q, want %q", i, got, want)
		}
	}
	keyless := &change.Event{Table: &change.Table{}, After: rows[0]}
	if got := string(appendIDKey(nil, keyless, 12)); got != "#12" {
		t.Errorf("keyless row's ID %q, want #12", got)
	}
}
