package source

import (
	"context"
	"encoding/json"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Stream is what a driver hands its log to, as it reads it: the capture
// loop implements it (pkg/capture's dispatcher). The loop does what every
// database needs around the log and no driver repeats: it passes each
// change through the snapshot engine before publishing it, splits a
// change of a row's key into a delete and a create, answers watermarks,
// queues, drops and restarts snapshots as the captured set changes, and
// seals each cursor into the checkpoint's position with the captured set
// and the snapshots' state. Its methods are called from the driver's
// stream goroutine (Start and Stream), in log order; Captured, Added,
// Gone and Again from any goroutine.
type Stream interface {
	// Change hands on one row change of a captured table (op c, u or d;
	// an update whose key changed whole, with its before image).
	Change(ctx context.Context, ev *change.Event) error
	// Commit hands on a resumable point at the end of a transaction:
	// cursor is the driver's own fields only (a JSON object: slot and
	// LSN, binlog file, pos and GTID set), commitMicros when it committed
	// (0: unknown).
	Commit(ctx context.Context, cursor change.Position, commitMicros int64) error
	// Heartbeat hands on a resumable point outside any transaction: the
	// start position, or the log moving on without changes to the
	// captured tables.
	Heartbeat(ctx context.Context, cursor change.Position) error
	// Watermark hands on a snapshot watermark the driver met in its log
	// (one that its snapshot.Session's WriteWatermark wrote).
	Watermark(ctx context.Context, mark string) error

	// Captured replaces the captured set: record is how the checkpoint
	// records it (the driver reads it back in Checkpoint.Captured), names
	// the tables as source.tables writes them, for on-demand snapshots.
	Captured(record json.RawMessage, names []string)
	// Added says tables joined the captured set while streaming with
	// rows the log does not hold (renamed into it, selected since):
	// their rows are snapshotted (when backfill is on).
	Added(names []string)
	// Gone says a captured table no longer exists: a snapshot of it ends.
	Gone(name string)
	// Again says a table's rows must all be read again (changed by a
	// statement the log holds as text): its snapshot starts over.
	Again(name string)
}

// Checkpoint is what a driver reads of the checkpoint it resumes from:
// the loop keeps its own fields (the captured set, the snapshots' state)
// out of the cursor.
type Checkpoint struct {
	// Cursor is the driver's fields of the position, as it handed them on
	// (Stream.Commit, Heartbeat).
	Cursor change.Position
	// Captured is the captured set the checkpoint recorded
	// (Stream.Captured); nil in positions older than the record.
	Captured json.RawMessage
	// SnapshotsDone says no snapshot was queued or under way: every
	// captured table's rows were published.
	SnapshotsDone bool
}
