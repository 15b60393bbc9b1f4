package metrics

import (
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// settled takes a record sent with Sent off the in-flight counts.
func (r *Rows) settled(op change.Op) {
	if op == change.OpRead {
		r.m.reads.Add(-1)
	} else {
		r.m.inflight.Add(-1)
	}
}

// streamActive is how recently a c/u/d record must have been handed over
// for the stream to count as publishing.
const streamActive = time.Second

// SnapshotBacklog is what the snapshot engine paces its chunks by: the r
// records handed to the producer and not yet settled, while the stream
// publishes (a c/u/d record unacknowledged or handed over within
// streamActive); 0 while the stream is idle, so a backfill alone runs at
// full speed. A chunk's rows are emitted in the stream's order, ahead of
// the changes the stream reads after them: an unpaced snapshot keeps the
// producer's buffer full, and every change waits behind it.
func (m *Pipeline) SnapshotBacklog() int64 {
	if m == nil {
		return 0
	}
	if m.inflight.Load() <= 0 && m.now().UnixNano()-m.streamed.Load() > int64(streamActive) {
		return 0
	}
	return m.reads.Load()
}
