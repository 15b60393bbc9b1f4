package snapshot

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// MarkPrefix starts every watermark the engine writes:
// "tributary-snapshot:<engine>:<n>:low|high". A source recognises
// watermarks in its log by it.
const MarkPrefix = "tributary-snapshot:"

// chunkRowsEnv overrides ChunkRows, for tests.
const chunkRowsEnv = "TRIBUTARY_SNAPSHOT_CHUNK_ROWS"

// Engine runs the snapshots of one source. Its bookkeeping outlives a
// reconnect (Run called again); its workers run inside one Run (Start).
type Engine struct {
	db   Database
	cfg  Config
	id   string // this engine's watermark namespace: others' marks are ignored
	seq  atomic.Uint64
	open atomic.Int32 // windows that note keys
	// holding is len(held), read by Observe without the lock.
	holding atomic.Int32
	// observed counts the changes the stream handed to Observe; seen is
	// its value when the last chunk was sized. A chunk read after it
	// moved is small (see StreamingChunkRows).
	observed, seen atomic.Uint64

	mu      sync.Mutex
	tables  []*table // in queue order: running, queued, and done since the last idle
	windows map[string]*window
	wake    chan struct{} // closed when a table is queued
	encoded json.RawMessage
	dirty   bool
	// held are rows of the initial snapshot read and not yet emitted, in
	// the order read: at most one per table, its last row so far, whose
	// marker waits for what follows it (see markLocked).
	held []*held
}

// held is a row of the initial snapshot held back: Debezium marks the
// snapshot's last row "last" and a table's last row
// last_in_data_collection, and which row is last is known only once the
// engine knows whether any row follows (the tables after it may be
// empty, the table's last chunk may be empty).
type held struct {
	t   *table
	ev  *change.Event
	key string // its primary key (rowKey); "" for a table without one
	// resume is its key range's key before it: a position made while it
	// is held reads it again, so that neither a crash nor a stop loses it.
	resume Key
	p      *part
}

type table struct {
	name      string
	rows      int64
	estimated int64
	started   time.Time
	initial   bool
	done      bool
	first     bool // its next published row is its first
	// parts are the table's key ranges, each read by one worker at a
	// time: one, from the start to the end, unless the table was split
	// (see Engine.split).
	parts []*part
}

// part is a key range of a table: the rows after key up to until.
type part struct {
	key     Key // the last key read: the range reads on after it
	until   Key // the range's last key (inclusive); nil: the table's end
	running bool
	done    bool
}

// whole is a table's one key range, from key to its end.
func whole(key Key) []*part { return []*part{{key: key}} }

// window is one chunk between its watermarks.
type window struct {
	t       *table
	p       *part
	open    bool             // its keys are noted (from registration on)
	changed map[string]touch // keys the stream changed since (see touch.go)
	gone    string           // the key the stream deleted last
	rows    []Row            // the chunk, set before the high watermark is written
	final   bool             // the chunk ends the table
	emitted bool             // the stream emitted the chunk at its high watermark
	closed  chan struct{}    // the stream met the high watermark
	id      string           // its watermarks' name, its key in Engine.windows
	after   Key              // the chunk reads after this key
	// prev is the table's previous chunk while its worker reads this one
	// ahead (see Engine.table); nil once placed. This chunk is emitted
	// only after prev was: a table's rows are published in key order, so
	// its resume key never passes a chunk that was not.
	prev *window
}

// New makes an Engine over db.
func New(db Database, cfg Config) *Engine {
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = DefaultParallelism
	}
	if cfg.ChunkRows <= 0 {
		cfg.ChunkRows = cmp.Or(max(0, cfg.DefaultChunkRows), ChunkRows)
		// Tests make chunks small to place a crash or a change between
		// them; not a setting (one chunk size for every source).
		if n, err := strconv.Atoi(os.Getenv(chunkRowsEnv)); err == nil && n > 0 {
			cfg.ChunkRows = n
		}
		cfg.ChunkRows = chunkRowsFor(cfg.ChunkRows, cfg.Parallelism)
	}
	if cfg.ChunkBytes <= 0 {
		cfg.ChunkBytes = chunkRowsFor(ChunkBytes, cfg.Parallelism)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	b := make([]byte, 6)
	rand.Read(b) // never fails (crypto/rand)
	return &Engine{db: db, cfg: cfg, id: hex.EncodeToString(b), windows: map[string]*window{}, wake: make(chan struct{})}
}

// chunkRowsFor is the chunk size when parallelism workers each hold up to
// two chunks (one read ahead): chunks shrink so that all of them together
// hold no more rows than one worker's two full chunks. The task's memory is
// sized for that (cmd/tributary's soft memory limit): with four or more
// full chunks held at once the collector runs nearly without pause near the
// limit, which costs more CPU per row and fewer rows/s (make bench,
// backfill-parallel).
func chunkRowsFor(rows, parallelism int) int {
	return max(1, rows/max(1, parallelism))
}

// Queue adds tables to the snapshot (a table already queued or running
// is left as it is, a finished one is read again). initial marks the
// snapshot a pipeline takes when it starts (see TableState.Initial).
func (e *Engine) Queue(tables []string, initial bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.queueLocked(tables, initial)
}

// Again has the tables' rows all read again: a table changed where the
// stream cannot show which, or one a backfill request asks for, whose
// rows must all be published after the request. A snapshot of one that
// has begun reading starts over from its first row, its rows read so far
// published again as reads; one queued and not begun stays as it is;
// otherwise it is queued as Queue queues it.
func (e *Engine) Again(names ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, name := range names {
		if i := e.indexLocked(name); i >= 0 && !e.tables[i].done && !e.tables[i].started.IsZero() {
			// Done, as Drop leaves it: a window of it that is open emits
			// nothing, and queueLocked reads the table anew.
			e.tables[i].done = true
		}
	}
	e.queueLocked(names, false)
}

func (e *Engine) queueLocked(tables []string, initial bool) {
	if e.idleLocked() {
		e.tables = nil // the last snapshots are over: their done list goes
	}
	for _, name := range tables {
		if i := e.indexLocked(name); i >= 0 {
			if !e.tables[i].done {
				continue
			}
			e.tables = slices.Delete(e.tables, i, i+1)
		}
		e.tables = append(e.tables, &table{name: name, initial: initial, first: true, parts: whole(nil)})
	}
	e.dirty = true
	e.wakeLocked()
}

// wakeLocked tells the workers waiting for work that there is some.
func (e *Engine) wakeLocked() {
	close(e.wake)
	e.wake = make(chan struct{})
}

// Restore replaces the bookkeeping with what a position recorded, before
// a Run streams from that position: every table the state names reads on
// after its key; tables queued since and not begun (not in the state,
// finished in it, or unfinished in it) start over. A table the state
// names may well be queued since: a backfill requested while the
// pipeline was stopped is queued before the Run restores its checkpoint
// (pkg/pipeline/backfillrequests.go).
func (e *Engine) Restore(s State) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*table
	for _, name := range s.Done {
		if i := e.indexLocked(name); i >= 0 && !e.tables[i].done {
			continue // queued again since: read again, from its start (below)
		}
		out = append(out, &table{name: name, done: true})
	}
	for _, ts := range s.Tables {
		if i := e.indexLocked(ts.Table); i >= 0 && !e.tables[i].done && e.tables[i].started.IsZero() {
			// Asked for again since the position and not begun (a
			// backfill requested while the pipeline was stopped): every
			// row is read again (below), not only those after the
			// unfinished snapshot's key. One this engine has begun is
			// the state's own, which a reconnect reads on.
			continue
		}
		t := &table{name: ts.Table, rows: ts.Rows, initial: ts.Initial, first: ts.Rows == 0, parts: whole(ts.Key)}
		if len(ts.Parts) > 0 {
			t.parts = nil
			for _, r := range ts.Parts {
				t.parts = append(t.parts, &part{key: r.Key, until: r.Until})
			}
		}
		if ts.Started != 0 {
			t.started = time.UnixMilli(ts.Started)
		}
		out = append(out, t)
	}
	for _, t := range e.tables {
		if !t.done && !slices.ContainsFunc(out, func(o *table) bool { return o.name == t.name }) {
			out = append(out, &table{name: t.name, initial: t.initial, first: true, parts: whole(nil)})
		}
	}
	e.tables = out
	e.windows = map[string]*window{}
	e.open.Store(0)
	e.held = nil // the state reads them again
	e.holding.Store(0)
	e.dirty = true
}

// Drop forgets a table (dropped, or no longer captured): a window of it
// that is open emits nothing.
func (e *Engine) Drop(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if i := e.indexLocked(name); i >= 0 && !e.tables[i].done {
		e.tables[i].done = true
		e.dirty = true
	}
}

// Unqueue removes the snapshots asked for (not a start's initial ones)
// that no worker has begun and whose table refuse names, and returns
// their tables.
func (e *Engine) Unqueue(refuse func(table string) bool) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	e.tables = slices.DeleteFunc(e.tables, func(t *table) bool {
		drop := !t.done && !t.initial && t.started.IsZero() && refuse(t.name)
		if drop {
			out = append(out, t.name)
		}
		return drop
	})
	if len(out) > 0 {
		e.dirty = true
	}
	return out
}

// State is the bookkeeping as a position records it, encoded; nil when no
// snapshot ran since the engine started or was restored empty.
func (e *Engine) State() json.RawMessage {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.dirty {
		return e.encoded
	}
	e.dirty = false
	if len(e.tables) == 0 {
		e.encoded = nil
		return nil
	}
	var s State
	for _, t := range e.tables {
		h := e.heldLocked(t)
		if t.done && h == nil {
			s.Done = append(s.Done, t.name)
			continue
		}
		ts := TableState{Table: t.name, Rows: t.rows, Initial: t.initial}
		if h != nil {
			ts.Rows-- // its held row is not published: read it again (below)
		}
		for _, p := range t.parts {
			r := RangeState{Key: p.key, Until: p.until}
			if h != nil && h.p == p {
				r.Key = h.resume
			} else if p.done {
				continue
			}
			ts.Parts = append(ts.Parts, r)
		}
		if len(t.parts) == 1 && t.parts[0].until == nil {
			// One range to the table's end: its key says it all.
			ts.Key, ts.Parts = ts.Parts[0].Key, nil
		}
		if !t.started.IsZero() {
			ts.Started = t.started.UnixMilli()
		}
		s.Tables = append(s.Tables, ts)
	}
	e.encoded, _ = json.Marshal(s) // strings, numbers, bytes: cannot fail
	return e.encoded
}

// Pending reports whether a table is queued or running.
func (e *Engine) Pending() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.idleLocked()
}

// Busy reports whether a table is queued or running, or a row of the
// initial snapshot is held back (a table dropped meanwhile may have ended
// the snapshot before the row that waits for the next change is emitted).
func (e *Engine) Busy() bool { return e.holding.Load() > 0 || e.Pending() }

// TableProgress is one table's snapshot, as the engine reports it (Engine.Progress).
type TableProgress struct {
	Table     string    // as source.tables writes it
	Rows      int64     // rows published (op r) by this snapshot so far
	Estimated int64     // rows the table holds, from the database's statistics; 0 when unknown
	Started   time.Time // zero while queued
	Done      bool
}

// Progress is the per-table progress (what source.Progresser reports).
func (e *Engine) Progress() []TableProgress {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]TableProgress, 0, len(e.tables))
	for _, t := range e.tables {
		out = append(out, TableProgress{Table: t.name, Rows: t.rows, Estimated: t.estimated, Started: t.started, Done: t.done})
	}
	return out
}

func (e *Engine) idleLocked() bool {
	for _, t := range e.tables {
		if !t.done {
			return false
		}
	}
	return true
}

func (e *Engine) indexLocked(name string) int {
	return slices.IndexFunc(e.tables, func(t *table) bool { return t.name == name })
}

// Start runs the workers until ctx ends; it returns at once. A worker's
// failure is handed to fail (the Run's cancel), which ends the Run.
// wait returns once every worker has ended.
func (e *Engine) Start(ctx context.Context, fail func(error)) (wait func()) {
	var wg sync.WaitGroup
	for range e.cfg.Parallelism {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.work(ctx); err != nil && ctx.Err() == nil {
				fail(err)
			}
		}()
	}
	return wg.Wait
}

// work takes tables one after the other and reads them chunk by chunk.
func (e *Engine) work(ctx context.Context) error {
	var sess Session
	defer func() {
		if sess != nil {
			sess.Close()
		}
	}()
	for {
		t, p, err := e.next(ctx)
		if err != nil {
			return err
		}
		if sess == nil {
			if sess, err = e.db.Session(ctx); err != nil {
				e.release(p)
				return fmt.Errorf("snapshot: %w", err)
			}
		}
		if err := e.table(ctx, sess, t, p); err != nil {
			e.release(p)
			if errors.Is(err, ErrNoTable) {
				e.cfg.Log.Warn("snapshot: the table is gone (dropped or renamed); its snapshot ends", "table", t.name, "err", err)
				e.Drop(t.name)
				continue
			}
			return err
		}
	}
}

// next waits for a key range of a queued table to read and marks it
// running.
func (e *Engine) next(ctx context.Context) (*table, *part, error) {
	for {
		e.mu.Lock()
		for _, t := range e.tables {
			for _, p := range t.parts {
				if !t.done && !p.done && !p.running {
					p.running = true
					e.mu.Unlock()
					return t, p, nil
				}
			}
		}
		wake := e.wake
		e.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-wake:
		}
	}
}

func (e *Engine) release(p *part) {
	e.mu.Lock()
	p.running = false
	e.mu.Unlock()
}

// table reads p, a key range of t, chunk by chunk, each in its window,
// until done. A table's first worker may split it first (Engine.split).
func (e *Engine) table(ctx context.Context, sess Session, t *table, p *part) error {
	if est, err := sess.Estimate(ctx, t.name); err == nil {
		e.mu.Lock()
		t.estimated = est
		e.mu.Unlock()
	}
	e.mu.Lock()
	one := len(t.parts) == 1
	if t.started.IsZero() {
		t.started = e.cfg.Now()
		e.dirty = true
	}
	after := p.key
	e.mu.Unlock()
	if one {
		e.cfg.Log.Info("snapshot: reading table", "table", t.name, "resume", after != nil, "estimated_rows", t.estimated)
		if err := e.split(ctx, sess, t, p); err != nil {
			return err
		}
	}
	moved := 0 // chunk reads in a row that met ErrShapeMoved
	// A table without a primary key is read by a scan the session holds
	// open (ReadOn): a chunk that cannot be read again from where it
	// began (not placed, or the shape moved under the scan) reads the
	// whole table again, as does a restart (its state has no key).
	keyless := false
	rowBytes := 0 // the last chunk's bytes per row; 0: no row read yet
	lastRows := 0 // the last chunk's rows
	if sz, ok := sess.(Sizer); ok {
		// The statistics' row size stands in for a first chunk's: the
		// first chunk is full size (still bounded by ChunkBytes, and
		// cut short by the source at ChunkBytes when rows are larger).
		if n, err := sz.RowBytes(ctx, t.name); err == nil && n > 0 {
			rowBytes, lastRows = n, e.cfg.ChunkRows
		}
	}
	from := func(k Key) Key {
		if keyless {
			return nil
		}
		return k
	}
	// The worker reads one chunk ahead: chunk n+1 is read while the
	// stream emits chunk n and the producer sends it, and the worker waits
	// for chunk n only once chunk n+1's high watermark is written. Each
	// chunk has its own window; the stream meets chunk n's high watermark
	// before chunk n+1's low one, so the two windows place their rows in
	// the order the table is read. At most two chunks per worker are held.
	var prev *window // the chunk read before, not yet known placed
	var prevAfter Key
	// settle waits until the stream met w's high watermark; when the Run
	// ends first, w is forgotten.
	settle := func(w *window) (placed bool, err error) {
		select {
		case <-ctx.Done():
			e.forget(w)
			return false, ctx.Err()
		case <-w.closed:
			return w.emitted, nil
		}
	}
	for {
		if err := e.pace(ctx); err != nil {
			return err
		}
		n := e.chunkRows()
		// While the stream is idle the worker reads one chunk ahead.
		ahead := n == e.cfg.ChunkRows
		n = fitChunk(n, rowBytes, lastRows, e.cfg.ChunkBytes)
		id := fmt.Sprintf("%s%s:%d", MarkPrefix, e.id, e.seq.Add(1))
		// The window opens now, before the low watermark is written, not
		// when the stream meets it: PostgreSQL makes a transaction visible
		// a moment after its commit record is in the log, so a change
		// logged just before the low watermark may still be invisible to
		// the chunk's read, whose older copy must then not be emitted.
		// Noting keys from any point before the read is safe: every change
		// the read sees is streamed before the high watermark, so a key
		// the stream touched since has its newest state published by then.
		w := &window{id: id, t: t, p: p, after: after, open: true, changed: map[string]touch{}, closed: make(chan struct{}), prev: prev}
		e.mu.Lock()
		if t.done { // dropped meanwhile
			e.mu.Unlock()
			return nil
		}
		e.windows[id] = w
		e.open.Add(1)
		e.mu.Unlock()
		if err := sess.WriteWatermark(ctx, id+":low"); err != nil {
			e.forget(w)
			return fmt.Errorf("snapshot %s: write the low watermark: %w", t.name, err)
		}
		rows, err := sess.ReadChunk(ctx, t.name, after, p.until, n)
		if errors.Is(err, ErrShapeMoved) {
			e.forget(w)
			moved++
			wait := min(time.Duration(moved)*time.Second, 10*time.Second)
			e.cfg.Log.Warn("snapshot: the table changed shape ahead of the stream; reading the chunk again", "table", t.name, "attempt", moved, "in", wait, "err", err)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
			after = from(after)
			continue
		}
		moved = 0
		if err != nil {
			e.forget(w)
			return fmt.Errorf("snapshot %s: read a chunk: %w", t.name, err)
		}
		e.mu.Lock()
		if after == nil && p.until == nil && len(t.parts) == 1 {
			// From the start of the whole table: a keyless table read
			// again counts (and ranks its rows' IDs) from 0 again.
			t.rows = 0
		}
		size := chunkBytes(rows)
		keyless = len(rows) > 0 && rows[0].Key == nil
		w.rows = rows
		// Fewer rows than asked end the table, unless the source stopped
		// at ChunkBytes (a table with a key: see ChunkFill).
		w.final = len(rows) < n && (size < ChunkBytes || keyless)
		e.mu.Unlock()
		if len(rows) > 0 {
			rowBytes = max(1, size/len(rows))
		}
		lastRows = len(rows)
		if err := sess.WriteWatermark(ctx, id+":high"); err != nil {
			e.forget(w)
			return fmt.Errorf("snapshot %s: write the high watermark: %w", t.name, err)
		}
		if prev != nil {
			placed, err := settle(prev)
			if err != nil {
				e.forget(w)
				return err
			}
			if !placed {
				// Not placed in the stream (see Watermark), so neither is
				// w: read both again from where prev began.
				if _, err := settle(w); err != nil {
					return err
				}
				prev, after = nil, from(prevAfter)
				continue
			}
		}
		// While the stream carries changes (a small chunk) the worker
		// reads no chunk ahead either: two chunks emitted back to back
		// are one burst twice the size for the changes behind them.
		if w.final || !ahead {
			placed, err := settle(w)
			if err != nil {
				return err
			}
			prev = nil
			if !placed {
				after = from(after)
				continue // read it again
			}
			if w.final {
				return nil
			}
			after = next(rows)
			continue
		}
		prev, prevAfter = w, after
		after = next(rows)
	}
}

// splitChunks is the fewest chunks (of Config.ChunkRows) a key range
// holds when a table is split.
const splitChunks = 2

// split cuts t, whose one key range p a worker starts to read, into up to
// Parallelism key ranges of about the same rows (by the database's estimate),
// which idle workers read at once: one large table is the common case,
// and one worker reads about a core's worth. A table smaller than two
// ranges of splitChunks chunks, or whose source finds no split points
// (no key, an estimate far too high), stays whole. Each range is read in
// its own windows, so a range's rows are published in key order and a
// key's last message is its latest state, as for a whole table; the
// ranges' rows interleave.
func (e *Engine) split(ctx context.Context, sess Session, t *table, p *part) error {
	e.mu.Lock()
	rest, from := t.estimated-t.rows, p.key
	e.mu.Unlock()
	parts := min(int64(e.cfg.Parallelism), rest/int64(splitChunks*e.cfg.ChunkRows))
	if parts < 2 || p.until != nil {
		return nil
	}
	keys, err := sess.Split(ctx, t.name, from, rest, int(parts))
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrNoTable) {
			return err
		}
		e.cfg.Log.Warn("snapshot: the table's key ranges could not be found; one worker reads it", "table", t.name, "err", err)
		return nil
	}
	if len(keys) == 0 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if t.done || len(t.parts) != 1 {
		return nil
	}
	p.until = keys[0]
	for i, k := range keys {
		r := &part{key: k}
		if i+1 < len(keys) {
			r.until = keys[i+1]
		}
		t.parts = append(t.parts, r)
	}
	e.dirty = true
	e.wakeLocked()
	e.cfg.Log.Info("snapshot: the table is read in key ranges at once", "table", t.name, "ranges", len(t.parts))
	return nil
}

// chunkGrowth is how many times the last chunk's rows the next chunk may
// ask for: a chunk sized on tiny rows that meets large ones reads (and the
// source drops) the rest of its rows after ChunkBytes, so a table whose
// key order alternates runs of tiny and large rows would pay a full chunk
// at every run, reading the table's bytes many times over.
const chunkGrowth = 4

// fitChunk is a chunk of at most rows rows whose values, at rowBytes a row
// (0: unknown), stay within budget bytes, and at most chunkGrowth times
// lastRows, the last chunk's rows.
func fitChunk(rows, rowBytes, lastRows, budget int) int {
	if rowBytes == 0 {
		return min(rows, firstChunkRows)
	}
	return max(1, min(rows, budget/rowBytes, max(firstChunkRows, chunkGrowth*lastRows)))
}

// chunkBytes is RowBytes summed over rows.
func chunkBytes(rows []Row) int {
	n := 0
	for _, r := range rows {
		n += RowBytes(r.Event)
	}
	return n
}

// ChunkFill is what a source's ReadChunk has kept of a chunk: once the
// rows of a table with a key reach ChunkBytes, it keeps no more
// (Session.ReadChunk). A scan's rows (no key) never fill it: a scan
// cannot read a row again.
type ChunkFill struct {
	size int
	full bool
}

// Keep counts r, a row the source kept.
func (f *ChunkFill) Keep(r Row) {
	if r.Key != nil {
		f.size += RowBytes(r.Event)
		f.full = f.size >= ChunkBytes
	}
}

// Full reports whether the source is to keep no row after those kept.
func (f *ChunkFill) Full() bool { return f.full }

// RowBytes is about what a read row holds in memory: its values' bytes,
// and a few words for each value.
func RowBytes(ev *change.Event) int {
	if ev == nil {
		return 0
	}
	n := 0
	for _, v := range ev.After {
		n += len(v.Bytes) + 16
	}
	return n
}

// next is the after of the chunk that follows rows, a full chunk (or one
// its source stopped at ChunkBytes).
func next(rows []Row) Key {
	if k := rows[len(rows)-1].Key; k != nil {
		return k
	}
	return ReadOn
}

// forget unregisters w unless the stream already closed it at its high
// watermark (which unregistered it).
func (e *Engine) forget(w *window) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.windows[w.id] != w {
		return
	}
	if w.open {
		e.open.Add(-1)
	}
	delete(e.windows, w.id)
}

// chunkRows sizes the next chunk: ChunkRows, or at most
// StreamingChunkRows when the stream observed a change since the last
// chunk was sized (or, for the first, since the engine started).
func (e *Engine) chunkRows() int {
	now := e.observed.Load()
	if e.seen.Swap(now) != now {
		return min(e.cfg.ChunkRows, StreamingChunkRows)
	}
	return e.cfg.ChunkRows
}

// pace holds the next chunk back while the destination has more than half
// a streaming-time chunk of read rows to acknowledge (see Config.Backlog,
// which is 0 while the stream is idle).
func (e *Engine) pace(ctx context.Context) error {
	if e.cfg.Backlog == nil {
		return nil
	}
	for e.cfg.Backlog() > int64(min(e.cfg.ChunkRows, StreamingChunkRows)/2) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	return nil
}

// Watermark is called by the stream for every watermark it meets, in
// stream order, with the emit of the stream. It reports whether mark was
// a watermark of this engine. At a high watermark the chunk's rows whose
// keys the stream did not change in the window are emitted, and in place
// of a changed row whose newest stream image lacks values (unchanged
// TOAST) that image completed from the chunk's row (see touch.go).
func (e *Engine) Watermark(ctx context.Context, mark string, emit func(context.Context, *change.Event) error) (bool, error) {
	rest, ok := strings.CutPrefix(mark, MarkPrefix)
	if !ok {
		return false, nil
	}
	if !strings.HasPrefix(rest, e.id+":") {
		return true, nil // another engine's (another pipeline, an earlier run)
	}
	id, kind, _ := strings.Cut(mark[len(MarkPrefix)+len(e.id)+1:], ":")
	id = MarkPrefix + e.id + ":" + id
	e.mu.Lock()
	w := e.windows[id]
	if w == nil {
		e.mu.Unlock()
		return true, nil
	}
	switch kind {
	case "low":
		if !w.open {
			w.open = true
			e.open.Add(1)
		}
		e.mu.Unlock()
		return true, nil
	case "high":
	default:
		e.mu.Unlock()
		return true, nil
	}
	delete(e.windows, id)
	if w.open {
		e.open.Add(-1)
	}
	t := w.t
	behind := w.prev != nil && !w.prev.emitted
	w.prev = nil
	if t.done || !w.open || behind {
		// Dropped meanwhile; or the low mark was never met (a stream
		// restarted inside the window), or the chunk before was not
		// placed: the chunk cannot be placed, and the worker reads it
		// again (or its context is ending with that Run).
		e.mu.Unlock()
		close(w.closed)
		return true, nil
	}
	var out []*change.Event
	resume, last := w.after, w.after // the key before a row, before out's last row
	lacking := w.lacking()
	for i, r := range w.rows {
		if i > 0 {
			resume = w.rows[i-1].Key
		}
		if r.Key != nil && len(w.changed) > 0 { // lacking's keys are changed's too
			k := rowKey(r.Event.Table, r.Event.After)
			if to, ok := lacking[k]; ok {
				// The stream's newest image of the row lacks values
				// only this chunk row has (see touch.go).
				if ev, ok := w.filled(to, r); ok {
					out = append(out, ev)
					last = resume
				}
				continue
			}
			if _, changed := w.changed[k]; changed {
				continue // the stream published a newer state in the window
			}
		}
		out = append(out, r.Event)
		last = resume
	}
	p := w.p
	if n := len(w.rows); n > 0 {
		p.key = w.rows[n-1].Key
	}
	t.rows += int64(len(out))
	if w.final {
		p.done, p.running = true, false
		t.done = !slices.ContainsFunc(t.parts, func(p *part) bool { return !p.done })
	}
	out = e.markLocked(t, p, out, last)
	w.emitted = true
	e.dirty = true
	e.mu.Unlock()
	defer close(w.closed)
	for _, ev := range out {
		if err := emit(ctx, ev); err != nil {
			return true, err
		}
	}
	if t.done && w.final {
		e.cfg.Log.Info("snapshot: table done", "table", t.name, "rows", t.rows)
	}
	return true, nil
}

// markLocked sets Debezium's snapshot field and the event IDs of a
// chunk's rows, out, and returns the rows to emit now. An initial snapshot
// marks, as Debezium's SnapshotMarkerResolver does, the very last row of
// the whole snapshot "last", else its first row "first", else the last
// and first of each table last_in_data_collection and
// first_in_data_collection, and the others "true"; a snapshot requested
// while streaming marks every row "incremental", as Debezium's incremental
// snapshots do.
//
// Whether a row is its table's or the snapshot's last is known only once
// the rows after it are read (a table's last chunk, the tables after it,
// may be empty): each initial table's last row so far is held back
// (Engine.held) until a row of its table or of a table after it is emitted,
// or the initial snapshot ends, which emits the rows held with the last
// of them "last" (Debezium's BufferingSnapshotChangeRecordReceiver holds
// each record back until the next one for that). resume is p's key before
// out's last row (p the key range of t the rows were read from): a
// position made while it is held reads it again.
func (e *Engine) markLocked(t *table, p *part, out []*change.Event, resume Key) []*change.Event {
	started := t.started.UnixMicro()
	base := t.rows - int64(len(out)) // rows of t published before this chunk
	// "<prefix>:r:<table>:<started>:<key>": the head built once per chunk
	// (formatting it per row shows in a backfill's CPU), and the chunk's
	// IDs written into one string, each row's ID a part of it (one
	// allocation for the chunk, not several per row).
	head := e.cfg.IDPrefix + ":r:" + t.name + ":" + strconv.FormatInt(started, 10) + ":"
	ids := make([]byte, 0, len(out)*(len(head)+24))
	ends := make([]int, len(out))
	for i, ev := range out {
		ids = appendIDKey(append(ids, head...), ev, base+int64(i))
		ends[i] = len(ids)
	}
	all := string(ids)
	for i, ev := range out {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		ev.ID = all[start:ends[i]]
		if !t.initial {
			ev.Source.Snapshot = "incremental"
			continue
		}
		ev.Source.Snapshot = "true"
		if t.first && i == 0 {
			ev.Source.Snapshot = "first_in_data_collection"
			if e.firstOfAllLocked(t) {
				ev.Source.Snapshot = "first"
			}
		}
	}
	if t.initial && len(out) > 0 {
		t.first = false
		// Rows follow the one this table held and those of the tables
		// finished: none of them is last.
		ready := e.releaseLocked(func(h *held) bool { return h.t == t || h.t.done })
		last := out[len(out)-1]
		h := &held{t: t, p: p, ev: last, resume: resume}
		if len(last.Table.Key) > 0 && last.After != nil {
			h.key = rowKey(last.Table, last.After)
		}
		e.held = append(e.held, h)
		e.holding.Add(1)
		out = append(ready, out[:len(out)-1]...)
	}
	if h := e.heldLocked(t); h != nil && t.done && h.ev.Source.Snapshot != "first" {
		h.ev.Source.Snapshot = "last_in_data_collection"
	}
	if len(e.held) > 0 && !e.initialPendingLocked() {
		// The initial snapshot is over: its last row read is "last".
		rest := e.releaseLocked(func(*held) bool { return true })
		rest[len(rest)-1].Source.Snapshot = "last"
		out = append(out, rest...)
	}
	return out
}

// heldLocked is the row t holds back; nil when none.
func (e *Engine) heldLocked(t *table) *held {
	for _, h := range e.held {
		if h.t == t {
			return h
		}
	}
	return nil
}

// releaseLocked takes the held rows that match out of Engine.held, in the
// order they were read.
func (e *Engine) releaseLocked(match func(*held) bool) []*change.Event {
	var out []*change.Event
	keep := e.held[:0]
	for _, h := range e.held {
		if match(h) {
			out = append(out, h.ev)
			continue
		}
		keep = append(keep, h)
	}
	clear(e.held[len(keep):])
	e.held = keep
	if len(out) > 0 {
		e.holding.Add(-int32(len(out)))
		e.dirty = true
	}
	return out
}

// initialPendingLocked: a table of the initial snapshot is still to
// finish (tables queued while streaming do not count: Debezium's initial
// snapshot ends before its incremental ones begin).
func (e *Engine) initialPendingLocked() bool {
	return slices.ContainsFunc(e.tables, func(t *table) bool { return t.initial && !t.done })
}

// firstOfAllLocked: no other initial table published a row yet.
func (e *Engine) firstOfAllLocked(t *table) bool {
	for _, o := range e.tables {
		if o != t && o.initial && (o.rows > 0 || (o.done && !o.first)) {
			return false
		}
	}
	return true
}

// Observe is called by the stream for each row change it is about to
// emit, with the emit of the stream: while a window of the change's table
// is open, its keys (old and new) are noted so that the chunk's copy of
// those rows is not emitted, and its new image is kept, so that values the
// image lacks can be taken from the chunk's row instead (see touch.go). A
// row of the initial snapshot held back for its marker (see markLocked)
// whose key the change touches is emitted first, with the marker known
// then: the change is newer, and its image may lack values only that row
// has.
// It costs two atomic operations when no window is open and no row is
// held; a nil Engine (a source built without one, in tests) observes
// nothing.
func (e *Engine) Observe(ctx context.Context, ev *change.Event, emit func(context.Context, *change.Event) error) error {
	if e == nil {
		return nil
	}
	e.observed.Add(1)
	if (e.open.Load() == 0 && e.holding.Load() == 0) || ev.Table == nil || len(ev.Table.Key) == 0 {
		return nil
	}
	name := e.cfg.TableName(ev.Table.ID)
	var before, after string
	if ev.After != nil {
		after = rowKey(ev.Table, ev.After)
	}
	if ev.Before != nil {
		before = rowKey(ev.Table, ev.Before)
	}
	e.mu.Lock()
	for _, w := range e.windows {
		if !w.open || w.t.name != name {
			continue
		}
		if ev.Before != nil && (ev.After == nil || before != after) {
			w.deleted(before)
		}
		if ev.After != nil {
			w.wrote(after, ev)
		}
	}
	var first []*change.Event
	if len(e.held) > 0 && !slices.ContainsFunc(e.held, func(h *held) bool { return !h.t.done }) && !e.initialPendingLocked() {
		// The initial snapshot ended without a chunk to emit them at (its
		// last tables dropped): its last row read is "last". (A row held
		// by a table still read says it goes on, without a look at every
		// table for each change.)
		first = e.releaseLocked(func(*held) bool { return true })
		first[len(first)-1].Source.Snapshot = "last"
	} else if len(e.held) > 0 {
		first = e.releaseLocked(func(h *held) bool {
			return h.key != "" && h.t.name == name && (ev.Before != nil && h.key == before || ev.After != nil && h.key == after)
		})
	}
	e.mu.Unlock()
	for _, r := range first {
		if err := emit(ctx, r); err != nil {
			return err
		}
	}
	return nil
}
