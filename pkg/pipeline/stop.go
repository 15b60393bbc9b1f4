package pipeline

import (
	"errors"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// errBackfilled ends a run of source.snapshot_mode initial_only: every
// table is backfilled, and the position that records it was handed on.
var errBackfilled = errors.New("every table is backfilled (source.snapshot_mode initial_only)")

// stopIfBackfilled ends the run gracefully when no snapshot of the source
// is queued or running any more; it returns errBackfilled then, which
// stops the source before it emits anything else. Called after a
// position was marked, on the source goroutine: the position carries the
// snapshots' state (a later run with this checkpoint knows they are
// done), and every row of the last chunk was emitted before it.
func (p *Pipeline) stopIfBackfilled() error {
	prog, ok := p.Source.(source.Progresser)
	if !ok {
		return nil
	}
	tables := prog.SnapshotProgress()
	for _, t := range tables {
		if !t.Done {
			return nil
		}
	}
	p.Log.Info("source.snapshot_mode initial_only: every table is backfilled; stopping without streaming (the checkpoint keeps the position where the backfill ended: on MySQL a run with snapshot_mode initial streams on from there; PostgreSQL drops its replication slot)",
		"tables", len(tables), "read", p.Read.Load())
	p.finish()
	return errBackfilled
}
