package source

import (
	"context"

	"github.com/tributary-cdc/tributary/pkg/snapshot"
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

// Progresser is implemented by sources that snapshot: the pipeline polls it
// for the progress it shows in logs, `status` and metrics. It does not
// block on the network.
type Progresser interface {
	SnapshotProgress() []snapshot.TableProgress
}
