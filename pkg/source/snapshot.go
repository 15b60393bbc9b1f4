package source

import (
	"context"
	"time"
)

// Snapshotter is implemented by sources that re-publish whole tables (op r)
// while they stream, with watermarks in their own log (DBLog), so that a
// key's last message is always its latest state. The pipeline calls it when
// a backfill is requested (`tributary backfill`, the API, a table added to
// source.tables); the initial backfill takes the same path.
type Snapshotter interface {
	// Snapshot queues tables for a snapshot and returns once they are
	// queued; every position the source emits afterwards carries them until
	// they finish, so a crash resumes them. tables are names as
	// source.tables writes them ("schema.table", "db.table"); nil means
	// every captured table. An unknown table is an error that names it, and
	// nothing is queued then.
	Snapshot(ctx context.Context, tables []string) error
}

// TableProgress is one table's snapshot, as a Progresser reports it.
type TableProgress struct {
	Table     string    // as source.tables writes it
	Rows      int64     // rows published (op r) by this snapshot so far
	Estimated int64     // rows the table holds, from the database's statistics; 0 when unknown
	Started   time.Time // zero while queued
	Done      bool
}

// Progresser is implemented by sources that snapshot: the pipeline polls it
// for the progress it shows in logs, `status` and metrics. It does not
// block on the network.
type Progresser interface {
	SnapshotProgress() []TableProgress
}
