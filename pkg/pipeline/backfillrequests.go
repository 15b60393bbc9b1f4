package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// requestEvery is how often the running pipeline looks for a backfill
// request in the checkpoint store: one small read (a file, or a
// projected GetItem) per poll.
const requestEvery = 2 * time.Second

// ErrCannotSnapshot is logged (and the request left pending) when the
// source cannot snapshot while it streams.
var ErrCannotSnapshot = errors.New("cannot snapshot while streaming")

// backfills is the pipeline's side of backfill requests: what it handed
// to the source and not yet cleared from the store.
type backfills struct {
	mu         sync.Mutex
	handed     checkpoint.Request // handed to the source, still in the store
	handedMark uint64             // the last mark that may not carry the hand-over
	refused    string             // the request last refused, logged once
}

// startBackfills hands a pending request to the source before it starts
// streaming, then polls the store for new ones and reports the progress,
// until the returned stop is called (or ctx ends).
func (p *Pipeline) startBackfills(ctx context.Context) (stop func()) {
	reqs, _ := p.Store.(checkpoint.Requests)
	if reqs != nil {
		p.pollBackfills(ctx, reqs)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if reqs != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(requestEvery)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					p.clearBackfills(ctx)
					p.pollBackfills(ctx, reqs)
				}
			}
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); p.reportProgress(ctx) }()
	return func() { cancel(); wg.Wait() }
}

// pollBackfills hands what the store asks for and was not handed yet to
// the source. A source that cannot snapshot leaves the request pending
// (a later run may serve it) and says so once; a request the source
// refuses (an unknown table) is dropped with an error, since it can never
// succeed.
func (p *Pipeline) pollBackfills(ctx context.Context, reqs checkpoint.Requests) {
	pending, err := reqs.PendingBackfill(ctx)
	if err != nil {
		if ctx.Err() == nil {
			p.Log.Warn("backfill: reading requests from the checkpoint store failed; retrying", "err", err)
		}
		return
	}
	b := &p.backfills
	b.mu.Lock()
	fresh := pending.Again(b.handed)
	b.mu.Unlock()
	if fresh.Empty() {
		return
	}
	what := describe(fresh)
	snap, ok := p.Source.(source.Snapshotter)
	if !ok {
		if b.refused != what {
			b.refused = what
			p.Log.Error(fmt.Sprintf("backfill: source type %s %v; the request stays pending", p.sourceType(), ErrCannotSnapshot),
				"tables", what)
		}
		return
	}
	var tables []string // nil: every table
	if !fresh.All {
		tables = fresh.Tables
	}
	if err := snap.Snapshot(ctx, tables); err != nil {
		if ctx.Err() != nil {
			return // stopping: the request stays for the next run
		}
		p.Log.Error("backfill: the source refused the request; dropping it", "tables", what, "err", err)
		if cerr := reqs.ClearBackfill(ctx, fresh); cerr != nil && !errors.Is(cerr, checkpoint.ErrRequestedSince) {
			p.Log.Warn("backfill: clearing the refused request failed", "err", cerr)
		}
		// The requests up to this read are answered: what was handed
		// before clears at this stamp, and only a later request is
		// handed on again.
		b.mu.Lock()
		b.handed.Stamp = pending.Stamp
		b.mu.Unlock()
		return
	}
	b.mu.Lock()
	b.handed = b.handed.Merge(fresh)
	b.handed.Stamp = pending.Stamp // cleared only while no request came since
	// One more than the marks so far: the source's goroutine may have
	// encoded its next position before the queue and mark it only now,
	// and that one does not carry the queued snapshot (a source encodes
	// one position at a time, just before it emits it; a stream that
	// emits through a queue, source.Handoff, returned from Snapshot only
	// once the positions it had queued were emitted).
	b.handedMark = p.tracker.marked() + 1
	b.mu.Unlock()
	p.Log.Info("backfill: snapshot requested; re-publishing with op r while streaming", "tables", what)
}

// clearBackfills removes from the store what was handed to the source,
// once a checkpoint saved a position encoded after the hand-over: such a
// position carries the queued snapshot, so a crash before this clear
// re-delivers the request (duplicate r rows) and one after it resumes the
// snapshot from the checkpoint; nothing is lost either way.
func (p *Pipeline) clearBackfills(ctx context.Context) {
	reqs, ok := p.Store.(checkpoint.Requests)
	if !ok {
		return
	}
	b := &p.backfills
	b.mu.Lock()
	handed, mark := b.handed, b.handedMark
	b.mu.Unlock()
	if handed.Empty() || p.savedMark.Load() <= mark {
		return
	}
	if err := reqs.ClearBackfill(ctx, handed); err != nil {
		if errors.Is(err, checkpoint.ErrRequestedSince) {
			return // the next poll hands on what was asked again
		}
		if ctx.Err() == nil {
			p.Log.Warn("backfill: clearing the handed-over request failed; retrying", "err", err)
		}
		return
	}
	b.mu.Lock()
	b.handed = b.handed.Minus(handed)
	b.mu.Unlock()
}

func (p *Pipeline) sourceType() string {
	if p.SourceType != "" {
		return p.SourceType
	}
	return fmt.Sprintf("%T", p.Source)
}

// describe names a request's tables for logs.
func describe(r checkpoint.Request) string {
	if r.All {
		return "all"
	}
	return strings.Join(r.Tables, ",")
}
