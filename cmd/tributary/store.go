package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/config"
)

// leaseDurationEnv overrides the lease duration of a leased store
// (DynamoDB; a Go duration, e.g. 3s). It is for tests and tuning, not part
// of the pipeline config: shorter leases mean a faster takeover after a
// crash and more writes.
const leaseDurationEnv = "TRIBUTARY_LEASE_DURATION"

// checkpointStore is the configured kind of checkpoint store
// (checkpoint.store, registered in pkg/checkpoint) and where in it the
// pipeline's checkpoint is.
func checkpointStore(cfg *config.Config, log *slog.Logger) (checkpoint.Kind, checkpoint.Where, error) {
	kind, err := checkpoint.Lookup(cmp.Or(cfg.Checkpoint.Store, config.DefaultCheckpointStore))
	if err != nil {
		return kind, checkpoint.Where{}, &usageError{err.Error()}
	}
	return kind, checkpoint.Where{Pipeline: cfg.Name, Path: cfg.Checkpoint.Path, Table: cfg.Checkpoint.Table, CreateTable: cfg.Checkpoint.CreateTable, Log: log}, nil
}

// leasedStore says the configured store holds a lease another task can
// take over (source.Options.Leased).
func leasedStore(cfg *config.Config) bool {
	kind, _, err := checkpointStore(cfg, nil)
	return err == nil && kind.Leased
}

// openStore opens the configured checkpoint store, taking ownership of the
// pipeline: the file lock, or the DynamoDB lease (waiting while another
// task holds it).
func openStore(ctx context.Context, cfg *config.Config, log *slog.Logger) (checkpoint.Store, error) {
	kind, w, err := checkpointStore(cfg, log)
	if err != nil {
		return nil, err
	}
	if v := os.Getenv(leaseDurationEnv); v != "" && kind.Leased {
		if w.LeaseDuration, err = time.ParseDuration(v); err != nil || w.LeaseDuration <= 0 {
			return nil, &usageError{fmt.Sprintf("%s: %q is not a positive duration", leaseDurationEnv, v)}
		}
	}
	return kind.Open(ctx, w)
}

// checkpointIntervalEnv overrides the checkpoint cadence (a Go duration;
// default 1 s). For tests that need checkpoints to land at a finer grain,
// and for tuning; not part of the pipeline config.
const checkpointIntervalEnv = "TRIBUTARY_CHECKPOINT_INTERVAL"

func checkpointInterval() time.Duration {
	d, err := time.ParseDuration(os.Getenv(checkpointIntervalEnv))
	if err != nil || d <= 0 {
		return 0 // the pipeline's default
	}
	return d
}
