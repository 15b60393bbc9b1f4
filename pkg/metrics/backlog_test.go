package metrics

import (
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// TestSnapshotBacklog: the snapshot is paced by its unacknowledged read
// rows only while the stream publishes; a backfill alone (the stream idle
// for a second) is not held back, and every settled record, a skipped one
// included, leaves the count.
func TestSnapshotBacklog(t *testing.T) {
	m := NewPipeline(NewRegistry(), "p")
	now := time.Unix(1000, 0)
	m.now = func() time.Time { return now }
	rows := m.Rows("s.t")
	for range 3 {
		rows.Sent(change.OpRead, 0, now)
	}
	if got := m.SnapshotBacklog(); got != 0 {
		t.Fatalf("backlog with an idle stream = %d, want 0 (a backfill alone runs unpaced)", got)
	}
	rows.Sent(change.OpUpdate, now.UnixMicro(), now)
	if got := m.SnapshotBacklog(); got != 3 {
		t.Fatalf("backlog while the stream publishes = %d, want the 3 unacknowledged reads", got)
	}
	rows.Acked(change.OpUpdate, now.UnixMicro(), true, now)
	rows.Acked(change.OpRead, 0, true, now)
	rows.Failed(change.OpRead)
	rows.Acked(change.OpRead, 0, false, now) // skipped as too large: settled, not a row
	if got := m.SnapshotBacklog(); got != 0 {
		t.Fatalf("backlog after every read settled = %d, want 0", got)
	}
	rows.Sent(change.OpRead, 0, now)
	now = now.Add(500 * time.Millisecond) // the stream published half a second ago
	if got := m.SnapshotBacklog(); got != 1 {
		t.Fatalf("backlog half a second after a change = %d, want 1", got)
	}
	now = now.Add(2 * time.Second)
	if got := m.SnapshotBacklog(); got != 0 {
		t.Fatalf("backlog with the stream idle for 2.5 s = %d, want 0", got)
	}
}
