package pipeline

// What the pipeline does about the checkpoint store's single-owner
// lease: it publishes only while it owns the pipeline, and stops at once
// when it may not (pkg/checkpoint/lease.go).

import (
	"context"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// staleOwner stops a task that may no longer own the pipeline. At least
// once, records handed to the producer but not yet written to a broker
// connection are failed at once, so that they are never sent (and the
// producer writes nothing more once Owned fails: gateWrites): a task
// frozen past its lease (SIGSTOP, a stuck VM) that runs again sends none
// of what it had buffered or was going to retry. What it cannot recall is
// what was already written to a connection when it froze: at most the
// client's in-flight produce requests (5 per broker, each one batch per
// partition of up to destination.max_message_bytes + 64 KiB), which the
// broker appends when it reads them. Only delivery exactly_once closes
// that window (the broker fences the old producer).
// The lost lease is the run's cause before the records are aborted: each
// aborted record fails its publish, and the first failure would otherwise
// be the cause the run reports ("client is aborting buffered records"),
// not the lease that was lost.
func (p *Pipeline) staleOwner(err error) {
	p.fail(err)
	if p.txn == nil {
		p.Producer.AbortBuffered()
	}
}

// gateWrites makes the producer write to brokers only while this task
// owns the pipeline (at least once; exactly once, the broker fences a
// stale producer). Without it, a task frozen past its lease with records
// buffered in the producer (lingering, or waiting for a retry) could write
// them when it runs again, before staleOwner aborts them: the producer's
// goroutines and the lease check race once it thaws, and a linger that
// expired while it was frozen sends its batch at once.
func (p *Pipeline) gateWrites() {
	if p.txn == nil {
		p.Producer.GateWrites(p.Store.Owned)
	}
}

// watchLease stops the pipeline, without flushing, as soon as the store
// loses the pipeline to another task.
func (p *Pipeline) watchLease(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-p.Store.Lost():
		err := p.Store.Owned()
		p.Log.Error("lease lost: stopping without publishing further", "err", err)
		p.staleOwner(err)
	}
}

// emitOwned hands an event on only while this task owns the pipeline, so
// a task that was frozen past its lease publishes nothing once it runs
// again, even before the store has noticed the takeover.
func (p *Pipeline) emitOwned(ctx context.Context, ev *change.Event) error {
	if err := p.Store.Owned(); err != nil {
		p.staleOwner(err)
		return err
	}
	if p.txn != nil {
		if err := p.emitInTransaction(ctx, ev); err != nil {
			return err
		}
	} else {
		if err := p.emit(ctx, ev); err != nil {
			return err
		}
		p.hurry.observe(ev)
	}
	if ev.Position != nil && p.StopWhenBackfilled {
		return p.stopIfBackfilled()
	}
	return nil
}
