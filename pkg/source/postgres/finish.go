package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/source"
)

var _ source.Finisher = (*Source)(nil)

// FinishBackfilled implements source.Finisher: once a run of
// snapshot_mode initial_only has ended, its replication slot would only
// hold the WAL written since, for ever, since nothing streams from it.
// It is dropped (the slot of this name in this database, which the run
// has just read from; its walsender may take a moment to go). The
// publication stays: it pins nothing.
func (s *Source) FinishBackfilled(ctx context.Context) error {
	if !s.initialOnlySlot {
		// A slot a run of another snapshot_mode streamed from: changes
		// written since the checkpoint wait in it, which a run of that
		// mode publishes, and dropping it would lose them for good.
		s.opts.Log().Warn("source.snapshot_mode initial_only: the replication slot is kept: the pipeline streamed from it under another snapshot_mode, and changes not yet published may wait in it; "+
			"run with snapshot_mode initial to stream them, or `tributary drop` to remove the pipeline (the slot holds WAL until one or the other)", "slot", s.slot)
		return nil
	}
	conn, err := pgx.ConnectConfig(ctx, s.connCfg)
	if err != nil {
		return fmt.Errorf("connect to postgres to drop the replication slot %s after the backfill: %w", s.slot, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var dropped int
	if err := retryActive(ctx, func() error {
		return conn.QueryRow(ctx, `SELECT count(pg_drop_replication_slot(slot_name)) FROM pg_replication_slots
			WHERE slot_name = $1 AND database = current_database()`, s.slot).Scan(&dropped)
	}); err != nil {
		return fmt.Errorf("source.snapshot_mode initial_only: drop the replication slot %s after the backfill (it holds WAL until dropped: SELECT pg_drop_replication_slot('%s')): %w",
			s.slot, s.slot, err)
	}
	if dropped > 0 {
		s.opts.Log().Info("source.snapshot_mode initial_only: dropped the replication slot, which nothing will stream from and which would hold the WAL written since; "+
			"to stream after the backfill, run with snapshot_mode initial from the start, or when_needed, which backfills again from a new slot", "slot", s.slot)
	}
	return nil
}
