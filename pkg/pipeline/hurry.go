package pipeline

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// At least once, the producer lingers (pkg/kafka): a record waits a few
// milliseconds for more of its partition's to share its request. While
// the source drains a backlog that wait fills the batches; once it has
// caught up and pauses at a source-transaction end, nothing more is
// coming, and the wait is most of a change's way from its commit to the
// broker. hurryWhenIdle sends the batches then: after the source has
// handed over nothing for idleQuiet (exactlyonce.go) while it stands at a
// source-transaction end, caught up. Exactly once needs none of this: its
// commit at such a pause flushes.
//
// A hurry looks at every partition the producer has written to, so with
// thousands of topics it costs more than a pause is worth: hurries are
// spaced to take at most 1/hurryShare of the time.
const hurryShare = 50

// idleHurry is the state of hurryWhenIdle.
type idleHurry struct {
	emits atomic.Uint64 // events the source handed over
	// endAt is emits at the last caught-up source-transaction end: the
	// source stands at that end while emits still equals it.
	endAt atomic.Uint64
	// held says a row was handed to the producer since the last hurry:
	// a source that only moves past tables not published holds nothing.
	held  atomic.Bool
	atEnd chan struct{} // a caught-up source reached a source-transaction end
	// changeMicros is the source commit time the source has reached (see
	// reachedCommit); the source goroutine's only.
	changeMicros int64
}

// observe notes ev, handed over at least once, and tells hurryWhenIdle
// when it ends a source transaction of a caught-up source.
func (h *idleHurry) observe(ev *change.Event) {
	n := h.emits.Add(1)
	if ev.Op != change.OpNone && !h.held.Load() {
		h.held.Store(true)
	}
	h.changeMicros = reachedCommit(h.changeMicros, ev)
	if ev.Position == nil || h.changeMicros == 0 || behind(time.Now(), h.changeMicros) {
		return
	}
	h.endAt.Store(n)
	select {
	case h.atEnd <- struct{}{}:
	default: // one is already waiting
	}
}

// hurryWhenIdle hurries the producer each time the source pauses at a
// caught-up source-transaction end with rows held, until ctx is done.
func (p *Pipeline) hurryWhenIdle(ctx context.Context) {
	h := &p.hurry
	quiet := time.NewTimer(idleQuiet)
	defer quiet.Stop()
	var next time.Time // no hurry before it (see hurryShare)
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.atEnd:
		}
		seen := h.emits.Load()
		quiet.Reset(max(idleQuiet, time.Until(next)))
		select {
		case <-ctx.Done():
			return
		case <-quiet.C:
		}
		// Still at the end it signalled, or at a later one, with nothing
		// handed over since: else it went on, and its next end says so
		// again.
		if n := h.emits.Load(); n != seen || n != h.endAt.Load() || !h.held.Swap(false) {
			continue
		}
		start := time.Now()
		p.Producer.Hurry()
		next = time.Now().Add(hurryShare * time.Since(start))
	}
}

// reachedCommit is the source commit time the source has reached once it
// handed over ev, last before: a change's (c, u, d), or a later one of a
// source-transaction end that carries one (MariaDB's rows carry their
// statements' times, which a long transaction leaves far behind its
// commit). Only a later one: the end of a long statement on tables not
// published is dated to that statement's start, and right after a recent
// change it would make a caught-up pipeline look behind.
func reachedCommit(last int64, ev *change.Event) int64 {
	switch c := ev.Source.CommitMicros; ev.Op {
	case change.OpCreate, change.OpUpdate, change.OpDelete:
		return c
	case change.OpNone:
		return max(last, c)
	}
	return last
}
