// Package capture is the capture engine every database shares: it owns
// the capture loop (connect and check, discover the tables, start fresh or
// resume from the checkpoint, snapshot while streaming, acknowledge) and
// the reconnect wrapper around it. A database is a driver behind one
// interface, Database, which answers the loop's questions about its
// database; pkg/source/postgres and pkg/source/mysql are the two today
// (docs/architecture.md maps SQL Server and MongoDB onto it).
//
// Promises: the first event of every (re)start is the position it streams
// from; every position handed on is sealed with the captured set and the
// snapshots' state (envelope.go), so a restart resumes both; a lost
// position fails with source.ErrResnapshotRequired (or starts again under
// source.snapshot_mode when_needed), never silently from now.
package capture

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// Database is a driver: what the capture loop asks a database. The loop
// (Capture.run) calls, on every start and reconnect: Connect, Discover,
// then for a checkpoint Resume (or, for a checkpoint of an earlier release
// whose backfill did not finish, Legacy), else Fresh; then Start and
// Stream; Close ends the attempt. A driver reads its log into the loop's
// source.Stream: changes, and at each commit its cursor, a JSON object of
// its own fields (slot and LSN; binlog file, pos and GTID set). The loop
// owns the rest: the snapshot engine over the driver's Snapshots, the
// split of key changes, and the checkpoint's envelope (envelope.go), which
// a driver never sees.
type Database interface {
	// Connect opens the driver's connections (closing those of an earlier
	// attempt), checks the server's prerequisites, and makes sure no other
	// live process streams this pipeline's changes
	// (source.ErrReaderInUse).
	Connect(ctx context.Context) error
	// Discover finds the tables to capture now (source.tables,
	// exclude_tables, exclude_columns; without a list every table with a
	// key), warns of listed ones that are missing, readies the database to
	// stream them (a publication, a signal table), and returns their names
	// as source.tables writes them.
	Discover(ctx context.Context) ([]string, error)
	// Resume checks that the checkpoint can still be streamed from on
	// this server (the same slot, the same flavour, the log still there:
	// source.ErrResnapshotRequired when it cannot) and returns the
	// discovered tables its recorded captured set lacks, added while the
	// pipeline was down, which the loop snapshots. A captured table found
	// gone is told to st (Gone), whose snapshot state is the
	// checkpoint's.
	Resume(ctx context.Context, from source.Checkpoint, st source.Stream) (added []string, err error)
	// Fresh picks where a pipeline without a usable checkpoint streams
	// from (a new slot's consistent point, the binlog's end now); every
	// discovered table is then snapshotted while streaming. checkpointed
	// says a checkpoint exists (one without a stream position: an
	// unfinished start).
	Fresh(ctx context.Context, checkpointed bool) error
	// Start tells st the captured set (Captured) and hands on the
	// position streaming starts from (Heartbeat), the first event of every
	// attempt.
	Start(ctx context.Context, st source.Stream) error
	// Stream reads the database's log into st until ctx ends or it fails:
	// each change, a cursor at each commit, the snapshots' watermarks, and
	// the captured set as it changes.
	Stream(ctx context.Context, st source.Stream) error
	// Acknowledge tells the driver that everything up to cursor is durably
	// checkpointed (a PostgreSQL slot may release WAL). It does not block.
	Acknowledge(cursor change.Position)
	// Retriable says whether an error of the loop is a lost connection
	// that reconnecting may cure: the driver's server codes on top of
	// source.NetworkRetriable.
	Retriable(err error) bool
	// Snapshots is the driver's side of the snapshot engine, which the
	// loop makes once: its chunk reads and watermark writes, and the
	// engine's settings that are the database's (event ID prefix, table
	// names).
	Snapshots() (snapshot.Database, snapshot.Config)
	// Close releases the connections of the current attempt.
	Close() error
}

// Legacy is implemented by a driver whose earlier releases backfilled
// before streaming: it reads such a checkpoint, whose backfill did not
// finish, into the snapshot state to go on with while streaming from its
// start, after the checks of Resume; ok false: it cannot be gone on with,
// and the loop starts fresh.
type Legacy interface {
	Legacy(ctx context.Context, cursor change.Position, tables []string) (st snapshot.State, ok bool, err error)
}

// Capture runs one database through the capture loop. It implements
// source.Source and the capabilities the pipeline asks of a source
// (source.Snapshotter, Progresser, Reconnecting, Resnapshotting), and
// reports its connection (State). What the commands ask a driver without
// capturing is asked of it through commands.go.
type Capture struct {
	reconnector
	db   Database
	opts source.Options
	// engine runs the snapshots over the driver's Snapshots; d is the
	// loop's side of the driver's stream, over engine.
	engine *snapshot.Engine
	d      *dispatcher

	// started says a run reached Start (the captured set is known); all
	// that Snapshot(nil) came before, to be queued then.
	mu      sync.Mutex
	started bool
	all     bool
	// handoff is the running stream's, nil when it emits directly or
	// between streams (stream).
	handoff atomic.Pointer[source.Handoff]
}

// New makes the Capture of opts.Config.Type; it does not connect yet.
func New(ctx context.Context, opts source.Options) (*Capture, error) {
	mk, ok := drivers[opts.Config.Type]
	if !ok {
		return nil, fmt.Errorf("source.type %q is not supported (have %v)", opts.Config.Type, Types())
	}
	db, err := mk(ctx, opts)
	if err != nil {
		return nil, err
	}
	return newCapture(db, opts), nil
}

// newCapture runs db under the loop.
func newCapture(db Database, opts source.Options) *Capture {
	sdb, cfg := db.Snapshots()
	cfg.Parallelism = opts.Config.SnapshotParallelism
	cfg.Backlog = opts.SnapshotBacklog
	if cfg.Log == nil {
		cfg.Log = opts.Log()
	}
	engine := snapshot.New(sdb, cfg)
	c := &Capture{db: db, opts: opts, engine: engine,
		d: &dispatcher{engine: engine, backfill: opts.Config.BackfillEnabled(), txmeta: opts.TransactionMetadata}}
	c.reconnector = reconnector{run: c.run, retriable: db.Retriable, Window: opts.Config.OutageWindowDuration(),
		Resnapshot: opts.Config.Snapshot() == config.SnapshotWhenNeeded}
	return c
}

// run is one attempt of the loop: from the last position handed on (nil:
// a fresh start) until ctx ends or something fails.
func (c *Capture) run(ctx context.Context, from change.Position, emit func(context.Context, *change.Event) error) error {
	db, engine := c.db, c.engine
	defer db.Close()
	if err := db.Connect(ctx); err != nil {
		return err
	}
	tables, err := db.Discover(ctx)
	if err != nil {
		return err
	}
	env, state, cursor, err := openEnvelope(from)
	if err != nil {
		return err
	}
	backfill := c.opts.Config.BackfillEnabled()
	fresh := from == nil
	switch {
	case from == nil:
	case !env.Backfilled:
		fresh = true
		if lg, ok := db.(Legacy); ok {
			legacy, ok, err := lg.Legacy(ctx, cursor, tables)
			if err != nil {
				return err
			}
			if fresh = !ok; ok {
				engine.Restore(legacy)
			}
		}
	default:
		// Snapshots queued before the state is restored were asked for
		// (a backfill requested while the pipeline was stopped).
		requested := map[string]bool{}
		for _, p := range engine.Progress() {
			if !p.Done {
				requested[p.Table] = true
			}
		}
		// The state first: a driver resuming may find captured tables
		// gone (source.Stream's Gone), whose snapshots end.
		engine.Restore(state)
		added, err := db.Resume(ctx, source.Checkpoint{Cursor: cursor, Captured: env.Tables, SnapshotsDone: !state.Pending()}, c.d)
		if err != nil {
			return err
		}
		// An added table is not the one the checkpoint recorded under its
		// name: a snapshot of that name the state holds was of the table
		// it replaced (dropped and created again while down), and its
		// last key is not this table's. One asked for is read again from
		// its first row, whether or not source.backfill is on.
		for _, t := range added {
			engine.Drop(t)
			if requested[t] && !backfill {
				engine.Queue([]string{t}, false)
			}
		}
		if len(added) > 0 && backfill {
			c.opts.Log().Info("snapshotting tables added since the last run", "tables", strings.Join(added, ", "))
			engine.Queue(added, false)
		}
	}
	if fresh {
		// No usable stream position: start from a new one and snapshot
		// every table while streaming. Whatever an earlier, unfinished
		// start published is published again.
		if err := db.Fresh(ctx, from != nil); err != nil {
			return err
		}
		engine.Restore(snapshot.State{})
		if backfill {
			engine.Queue(tables, true)
		}
	}
	// Once Start told the captured set, a Snapshot(nil) that came before
	// is queued: the start position already carries it.
	d := c.d
	d.out, d.first = emit, func() {
		c.mu.Lock()
		c.started = true
		all := c.all
		c.all = false
		c.mu.Unlock()
		if all {
			engine.Again(d.capturedNames()...) // as Snapshot's (snapshot)
		}
	}
	if err := db.Start(ctx, d); err != nil {
		return err
	}
	// A backfill asked for while the pipeline was stopped was queued
	// before the captured set was known: one of a table this pipeline
	// does not capture is dropped, as Snapshot refuses it while streaming.
	if known := d.capturedNames(); known != nil {
		for _, t := range engine.Unqueue(func(t string) bool { return !slices.Contains(known, t) }) {
			c.opts.Log().Error("backfill: the source refused the request; dropping it", "tables", t, "err", notCaptured(t))
		}
	}
	// The snapshot workers live as long as this stream; one that fails
	// ends it (and the reconnect loop decides).
	sctx, cancel := context.WithCancelCause(ctx)
	wait := engine.Start(sctx, cancel)
	err = c.stream(sctx, db, emit)
	cancel(err)
	wait()
	if cause := context.Cause(sctx); ctx.Err() == nil && cause != nil && !errors.Is(cause, context.Canceled) && (err == nil || errors.Is(err, context.Canceled)) {
		return cause
	}
	return err
}

// Ack implements source.Source.
func (c *Capture) Ack(pos change.Position) {
	if cursor, err := cursorOf(pos); err == nil {
		c.db.Acknowledge(cursor)
	}
}

// Close implements source.Source.
func (c *Capture) Close() error { return c.db.Close() }

// Snapshot implements source.Snapshotter: it queues tables (nil: every
// captured table) for a snapshot while streaming. A table the pipeline
// does not capture is an error naming it, and nothing is queued then.
func (c *Capture) Snapshot(ctx context.Context, tables []string) error {
	if err := c.snapshot(tables); err != nil {
		return err
	}
	// The pipeline counts the first position carrying the snapshot from
	// the positions marked when this returns (pipeline.pollBackfills): a
	// stream that hands positions on through a queue (source.Handoff)
	// returns once those sealed before were emitted.
	if h := c.handoff.Load(); h != nil {
		return h.Barrier(ctx)
	}
	return nil
}

// handsOff is implemented by a database whose stream never reuses an
// event, or what it points to, once emitted: its events are encoded and
// produced on a goroutine of their own (source.Handoff), while the stream
// reads and decodes the next ones.
type handsOff interface {
	HandsOff() bool
}

// stream runs db.Stream into the dispatcher, which hands events on to
// emit, or, for a database that hands off (above), to a handoff's Emit:
// each position is sealed on the stream's goroutine as it is handed over
// (the captured set and snapshot state are the stream's at that point,
// not the handoff's later). While the snapshot engine is busy the handoff
// emits directly: the pipeline reads the engine's progress after each
// position (source.Handoff).
func (c *Capture) stream(ctx context.Context, db Database, emit func(context.Context, *change.Event) error) error {
	d := c.d
	// A transaction cut by the stream's end is read again whole from the
	// last commit: its BEGIN again, its changes counted from 1.
	d.tx.open = false
	if ho, ok := db.(handsOff); !ok || !ho.HandsOff() {
		d.out = emit
		return db.Stream(ctx, d)
	}
	h := source.NewHandoff(ctx, emit, c.engine.Busy)
	c.handoff.Store(h)
	d.out = h.Emit
	err := db.Stream(h.Context(), d)
	if herr := h.Close(); herr != nil {
		err = herr // the stream stopped because emit failed
	}
	c.handoff.Store(nil)
	return err
}

func (c *Capture) snapshot(tables []string) error {
	c.mu.Lock()
	started := c.started
	if !started && tables == nil {
		c.all = true // queued once the first run knows the tables
	}
	c.mu.Unlock()
	// Every row is read after the request: a snapshot of a table asked
	// for that is under way (an earlier request's) starts over.
	engine := c.engine
	if tables == nil {
		if started {
			engine.Again(c.d.capturedNames()...)
		}
		return nil
	}
	if started {
		known := c.d.capturedNames()
		for _, t := range tables {
			if !slices.Contains(known, t) {
				return notCaptured(t)
			}
		}
	}
	engine.Again(tables...)
	return nil
}

// notCaptured is the refusal of a snapshot asked for table t, which the
// pipeline does not capture: while streaming (Snapshot) and, for one
// asked for while stopped, at the start (run).
func notCaptured(t string) error {
	return fmt.Errorf("snapshot: table %q is not captured by this pipeline (source.tables, and tables with a primary key)", t)
}

// SnapshotProgress implements source.Progresser.
func (c *Capture) SnapshotProgress() []snapshot.TableProgress { return c.engine.Progress() }

// FinishBackfilled implements source.Finisher for a driver that does.
func (c *Capture) FinishBackfilled(ctx context.Context) error {
	if f, ok := c.db.(source.Finisher); ok {
		return f.FinishBackfilled(ctx)
	}
	return nil
}
