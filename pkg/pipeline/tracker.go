package pipeline

import (
	"sync"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// tracker finds the contiguous acknowledged prefix of everything handed to
// the producer. Records are acknowledged out of order (across partitions);
// a position may be checkpointed only when every record before it is
// acknowledged, never merely because a later ack arrived.
type tracker struct {
	mu      sync.Mutex
	base    uint64  // sequence number of entries[head]
	head    int     // entries before head are passed
	entries []entry // hand-over order; entries[head:] are not yet passed
	// committable is the newest position whose every predecessor is acked.
	committable change.Position
	// marks counts positions marked so far; committableMark is the count
	// when committable was marked. A backfill request is cleared only once
	// a position marked after its hand-over is saved (backfillrequests.go).
	marks, committableMark uint64
}

type entry struct {
	acked bool
	pos   change.Position // set for position markers
	mark  uint64          // the marker's number (marks after it was added)
}

// add registers a record about to be produced and returns its sequence.
func (t *tracker) add() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entries = append(t.entries, entry{})
	return t.base + uint64(len(t.entries)-1-t.head)
}

// mark records a resumable position after everything added so far.
func (t *tracker) mark(pos change.Position) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.marks++
	if len(t.entries) == t.head {
		t.committable, t.committableMark = pos, t.marks
		return
	}
	t.entries = append(t.entries, entry{acked: true, pos: pos, mark: t.marks})
}

// ack records that the broker acknowledged record seq.
func (t *tracker) ack(seq uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entries[t.head+int(seq-t.base)].acked = true
	for t.head < len(t.entries) && t.entries[t.head].acked {
		if p := t.entries[t.head].pos; p != nil {
			t.committable, t.committableMark = p, t.entries[t.head].mark
		}
		t.entries[t.head] = entry{}
		t.head++
		t.base++
	}
	// Compact once the passed part dominates, keeping ack amortised O(1).
	if t.head == len(t.entries) {
		t.entries, t.head = t.entries[:0], 0
	} else if t.head > 1024 && t.head > len(t.entries)/2 {
		t.entries = append(t.entries[:0], t.entries[t.head:]...)
		t.head = 0
	}
}

// position returns the newest checkpointable position (nil: none yet) and
// how many handed-over items are not yet passed.
func (t *tracker) position() (change.Position, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.committable, len(t.entries) - t.head
}

// committed returns the newest checkpointable position and its marker's
// number (see marks).
func (t *tracker) committed() (change.Position, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.committable, t.committableMark
}

// marked returns how many positions were marked so far.
func (t *tracker) marked() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.marks
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
