package source

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Handoff runs a stream's emit on a goroutine of its own, so that reading
// and decoding the next events (the stream's goroutine) and encoding and
// producing the last ones (the handoff's) use two cores instead of taking
// turns on one (docs/hot-path.md, "The stream as two stages"). Events are
// emitted in the order they were handed over, by one goroutine.
//
// Its precondition: the stream never reuses an event, or any memory an
// event points to, after handing it over (true of the MariaDB and MySQL
// stream: events and rows are cut from slabs, values alias the binlog's
// blocks, never written again, pkg/source/mysql/binlog.go; and of
// PostgreSQL's: values alias the stream's copy of each message,
// pkg/source/postgres/stream.go). Whatever an
// event must say of the moment it was handed over is written into it
// before (the capture loop seals each position with the captured set and
// the snapshot state then, pkg/capture).
//
// Events go over in batches, each at the latest with a position event (the
// end of a transaction), so a change waits for no later one. While sync
// reports true, checked at each position event (and at the start), Emit
// calls emit itself, as a stream without a handoff does, once the events
// handed over before were emitted: the capture loop's sync is "a snapshot
// is queued or running, or holds a row back" (snapshot.Engine.Busy), whose
// rows the stream emits in bursts (a chunk at its high watermark) that a
// second goroutine only slowed, and after whose positions the pipeline
// reads the engine's progress (pipeline.stopIfBackfilled), which must not
// have moved past that position in the stream meanwhile.
type Handoff struct {
	emit   func(context.Context, *change.Event) error
	sync   func() bool
	cancel context.CancelCauseFunc
	ctx    context.Context // the stream's: canceled when emit fails
	parent context.Context // emit's
	ch     chan handoffBatch
	done   chan struct{}
	acked  chan struct{}
	batch  []*change.Event
	direct bool // emit is called by Emit (sync reported true at the last position)

	// Position events handed over, and emitted by the handoff (Barrier).
	sentPositions, emittedPositions atomic.Int64

	mu  sync.Mutex
	err error // emit's first error; nothing is emitted after it
}

type handoffBatch struct {
	events []*change.Event
	ack    bool // signal acked once emitted
}

const (
	handoffBatchEvents = 32 // events handed over at once, at most
	handoffBatches     = 64 // batches handed over and not yet emitted, at most
)

// NewHandoff starts the handoff of events to emit, called with ctx. The
// stream reads under Context, which is canceled, with emit's error as its
// cause, when emit fails, so that a stream waiting for its next event
// stops at once. sync may be nil (never wait).
func NewHandoff(ctx context.Context, emit func(context.Context, *change.Event) error, sync func() bool) *Handoff {
	sctx, cancel := context.WithCancelCause(ctx)
	h := &Handoff{
		emit: emit, sync: sync, cancel: cancel, ctx: sctx, parent: ctx,
		ch:    make(chan handoffBatch, handoffBatches),
		done:  make(chan struct{}),
		acked: make(chan struct{}, 1),
		batch: make([]*change.Event, 0, handoffBatchEvents),
	}
	h.direct = sync != nil && sync()
	go h.run()
	return h
}

// Context is the stream's context (above).
func (h *Handoff) Context() context.Context { return h.ctx }

func (h *Handoff) run() {
	defer close(h.done)
	for b := range h.ch {
		if h.failed() == nil {
			for _, ev := range b.events {
				if h.parent.Err() != nil {
					// Stopping (a graceful stop, or a snapshot worker's
					// failure that ends this stream): what was handed over
					// and not emitted is streamed again by the next stream,
					// and emitted with a canceled context it could fail in
					// ways that are not retried (a topic's creation).
					break
				}
				if err := h.emit(h.parent, ev); err != nil {
					h.fail(err)
					break
				}
				if isPosition(ev) {
					h.emittedPositions.Add(1)
				}
			}
		}
		if b.ack {
			h.acked <- struct{}{}
		}
	}
}

// fail records emit's first error and stops the stream.
func (h *Handoff) fail(err error) {
	h.mu.Lock()
	if h.err == nil {
		h.err = err
	}
	h.mu.Unlock()
	h.cancel(err)
}

func (h *Handoff) failed() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Emit hands ev over. It returns emit's error once emit has failed; the
// events handed over after the one that failed are never emitted.
func (h *Handoff) Emit(ctx context.Context, ev *change.Event) error {
	if err := h.failed(); err != nil {
		return err
	}
	end := isPosition(ev)
	if h.direct {
		if err := h.emit(ctx, ev); err != nil {
			h.fail(err)
			return err
		}
		if end {
			h.direct = h.sync()
		}
		return nil
	}
	h.batch = append(h.batch, ev)
	if !end && len(h.batch) < handoffBatchEvents {
		return nil
	}
	direct := end && h.sync != nil && h.sync()
	if err := h.send(ctx, direct); err != nil {
		return err
	}
	if !direct {
		return nil
	}
	// Emitting directly from now on: first wait until the handoff emitted
	// everything before.
	select {
	case <-h.acked:
	case <-ctx.Done():
		return h.stopped(ctx)
	}
	h.direct = true
	return h.failed()
}

func (h *Handoff) send(ctx context.Context, ack bool) error {
	select {
	case h.ch <- handoffBatch{events: h.batch, ack: ack}:
	case <-ctx.Done():
		return h.stopped(ctx)
	}
	if isPosition(h.batch[len(h.batch)-1]) { // a batch ends at its one position
		h.sentPositions.Add(1)
	}
	h.batch = make([]*change.Event, 0, handoffBatchEvents)
	return nil
}

// Barrier waits until every position handed over before it was called has
// been emitted, or the handoff stopped (emit failed, or the stream ended:
// what it did not emit is streamed again by the next stream, from an
// earlier position). It may be called from any goroutine, and fails only
// with ctx. A pipeline that queued a snapshot waits for it (through the
// source's Snapshot) before it counts which marked position is the first
// to carry the snapshot: the stream encodes a position before it hands it
// over, and without the handoff at most one position was encoded and not
// yet marked (pipeline.pollBackfills).
func (h *Handoff) Barrier(ctx context.Context) error {
	target := h.sentPositions.Load()
	for h.emittedPositions.Load() < target && h.failed() == nil {
		select {
		case <-h.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// stopped is why a wait for the handoff ended with ctx: emit's error when
// it failed (which canceled the stream's context), else ctx's.
func (h *Handoff) stopped(ctx context.Context) error {
	if err := h.failed(); err != nil {
		return err
	}
	return ctx.Err()
}

// Close emits what was handed over and not yet emitted (a stream that
// ended with an error had emitted every event before it, and still does),
// stops the handoff and returns emit's error, if any. The stream calls it
// once, when it returns.
func (h *Handoff) Close() error {
	if len(h.batch) > 0 {
		h.ch <- handoffBatch{events: h.batch}
		h.batch = nil
	}
	close(h.ch)
	<-h.done
	h.cancel(nil)
	return h.failed()
}

// isPosition tells a position event from a row's and from a
// transaction's BEGIN or END (change.TxMark), which carries none.
func isPosition(ev *change.Event) bool { return ev.Op == change.OpNone && ev.Mark == nil }
