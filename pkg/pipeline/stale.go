package pipeline

import "github.com/tributary-cdc/tributary/pkg/change"

// staleOwner stops a task that may no longer own the pipeline. At least
// once, records handed to the producer but not yet written to a broker
// connection are failed at once, so that they are never sent: a task
// frozen past its lease (SIGSTOP, a stuck VM) that runs again sends none
// of what it had buffered or was going to retry. What it cannot recall is
// what was already written to a connection when it froze: at most the
// client's in-flight produce requests (5 per broker, each one batch per
// partition of up to destination.max_message_bytes + 64 KiB), which the
// broker appends when it reads them. Only delivery exactly_once closes
// that window (the broker fences the old producer).
func (p *Pipeline) staleOwner(err error) {
	if p.txn == nil {
		p.Producer.AbortBuffered()
	}
	p.fail(err)
}

// mark records a resumable position after everything emitted so far: at
// least once it is checkpointable once those records are acknowledged;
// exactly once, once their transaction commits.
func (p *Pipeline) mark(pos change.Position) {
	if p.txn != nil {
		p.txn.mark(pos)
		return
	}
	p.tracker.mark(pos)
}
