package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/tributary-cdc/tributary/pkg/capture"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/metrics"
	"github.com/tributary-cdc/tributary/pkg/pipeline"
	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/status"
)

// softMemoryLimit keeps a task's footprint close to what the bounded
// in-flight buffer needs: without it the collector lets the heap grow to
// twice the live data between cycles. It trades memory for CPU: at 80 MiB,
// below a drain's resident memory (about 100 MB), the runtime returned
// freed pages all the time and faulted them back in zeroed, 4–5 % of a
// drain's CPU; at 128 MiB that was gone, but a backfill of 4 KB rows
// peaked at 140–150 MB instead of 100. At 100 MiB: half the faults, and
// that backfill peaks at 120 MB (docs/hot-path.md). GOMEMLIMIT overrides it.
const softMemoryLimit = 100 << 20

// gcPercent lets the heap grow to three times its live data between
// collections instead of Go's default two (GOGC=100), within the soft
// memory limit above, which still bounds it: a drain's live heap is mostly
// the records in flight, and each collection marks all of them again. In
// `make bench`'s drains of 1,000,000 changes, beside the same build at
// GOGC=100 in one run (perf samples of each process; two runs, the two
// orders): 4 and 6.5 % less CPU streaming from PostgreSQL, 4 % from
// MariaDB, for 10–20 MB more resident memory (105 → 117 MB); a backfill,
// whose heap the limit bounds already, −12 and +2 % (docs/hot-path.md).
// GOGC overrides it.
const gcPercent = 200

// tuneRuntime sets the collector's defaults where GOMEMLIMIT and GOGC do
// not set them.
func tuneRuntime() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(softMemoryLimit)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}

func runPipeline(ctx context.Context, inv *invocation) error {
	tuneRuntime()
	// Whatever still logs through the default logger (a library, a source
	// that takes no logger) writes the same format with the pipeline field.
	slog.SetDefault(inv.log)
	b := currentBuild()
	inv.log.Info("tributary starting", "version", b.Version, "commit", b.Commit, "go_version", b.GoVersion)
	reg := metrics.NewRegistry()
	m := metrics.NewPipeline(reg, inv.cfg.Name)
	rec := status.NewRecorder(m, b.Version)
	// Metrics first, so that a failure to start counts as an error too.
	stopMetrics, err := startMetrics(reg, m, inv.log, inv.stdout, inv.httpAddr, func(mux *http.ServeMux) {
		statusRoutes(mux, inv.cfg, rec)
	})
	if err != nil {
		return err
	}
	return stopMetrics(publish(ctx, inv.cfg, inv.log, m, rec))
}

// publish runs the pipeline until ctx is done or it fails.
func publish(ctx context.Context, cfg *config.Config, log *slog.Logger, m *metrics.Pipeline, rec *status.Recorder) (err error) {
	store, err := openStore(ctx, cfg, log)
	if err != nil {
		rec.Failed(err)
		return err
	}
	defer store.Close() // last: releases the lease after everything stopped
	// The status snapshot is written while the store is held, and once
	// more (stopped, with the error) before it is released.
	stopStatus := publishStatus(store, rec, log)
	defer func() { rec.Failed(err); stopStatus() }()
	return rideStalls(ctx, log, m, func(first bool) error { return publishOnce(ctx, cfg, log, m, rec, store, first) })
}

// publishOnce connects the source and the producer and runs the pipeline
// from its checkpoint until ctx is done or it fails. The destination is
// checked on the first run only: a run after a stall starts while brokers
// may still be down.
func publishOnce(ctx context.Context, cfg *config.Config, log *slog.Logger, m *metrics.Pipeline, rec *status.Recorder, store checkpoint.Store, first bool) error {
	src, err := capture.New(ctx, source.Options{Pipeline: cfg.Name, TopicPrefix: cfg.LogicalName(), Config: cfg.Source, Logger: log,
		Leased:          leasedStore(cfg),
		KeyColumns:      cfg.Destination.KeyColumns,
		MissingTables:   func(t []string) { m.TablesMissing(t); rec.TablesMissing(t) },
		SnapshotBacklog: m.SnapshotBacklog})
	if err != nil {
		return &usageError{err.Error()}
	}
	defer src.Close()
	rec.WatchSource(src.State)
	prod, err := newProducer(cfg)
	if err != nil {
		return &usageError{err.Error()}
	}
	defer prod.Close()
	if first {
		if err := checkDestination(ctx, cfg, prod, log); err != nil {
			return err
		}
	}
	p := &pipeline.Pipeline{
		Name:       cfg.Name,
		Source:     src,
		SourceType: cfg.Source.Type,
		Encoder: debezium.NewEncoder(debezium.Options{TopicPrefix: cfg.LogicalName(), IncludeUnknownTypes: cfg.Source.IncludeUnknownTypes,
			Topic: cfg.Destination.Topic, KeyColumns: cfg.Destination.KeyColumns, Format: messageFormat(cfg)}),
		PartitionColumns: cfg.Destination.PartitionColumn,
		Producer:         prod,
		Store:            store,
		Log:              log,
		DeleteMode:       cfg.Destination.DeleteMode,
		CheckpointEvery:  checkpointInterval(),
		// initial_only: stop (exit 0) once every table is backfilled.
		StopWhenBackfilled: cfg.Source.Snapshot() == config.SnapshotInitialOnly,

		Notifier:     rec.Notifier(rowSkippedNotifier(cfg, log)),
		Metrics:      m,
		Transactions: transactions(cfg),
	}
	log.Info("starting", "source", cfg.Source.Type, "bootstrap_servers", cfg.Destination.BootstrapServers, "topic_prefix", cfg.Destination.TopicPrefix)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go watchAcks(wctx, p, m, log, time.Second, stallAfter)
	return p.Run(ctx)
}
