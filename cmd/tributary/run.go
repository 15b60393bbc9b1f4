package main

import (
	"context"
	"log/slog"
	"math"
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
// a multiple of the live data between cycles (gcPercent). It trades memory
// for CPU: below a drain's resident memory the runtime returns freed pages
// all the time and faults them back in zeroed, which costs CPU; well above
// it a backfill of large rows peaks higher, since the limit, not the live
// data, sets the heap there. 100 MiB sits just above a drain's resident
// memory (docs/hot-path.md, "The runtime's settings"). GOMEMLIMIT
// overrides it.
const softMemoryLimit = 100 << 20

// gcPercent lets the heap grow to three times its live data between
// collections instead of Go's default two (GOGC=100), up to the memory
// limit: a drain's live heap (about 45 MB) is mostly the records in
// flight, and each collection marks all of them again. Under the default
// limit above a drain's heap reaches the limit, where at GOGC=100 it
// would stay at twice its live data; in an ECS task (GOMEMLIMIT ¾ of the
// task's memory) it is about three times the live data. Fewer collections
// cost less CPU per event for some more resident memory
// (docs/hot-path.md, "The runtime's settings").
// GOGC overrides it; with no memory limit (GOMEMLIMIT=off) Go's default
// stays.
const gcPercent = 200

// tuneRuntime sets the collector's defaults where GOMEMLIMIT and GOGC do
// not set them (empty is not set, as the runtime reads them).
func tuneRuntime() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
	if os.Getenv("GOGC") == "" && debug.SetMemoryLimit(-1) != math.MaxInt64 {
		debug.SetGCPercent(gcPercent)
	}
}

func runPipeline(ctx context.Context, inv *invocation) error {
	tuneRuntime()
	stopProfile, err := startCPUProfile()
	if err != nil {
		return err
	}
	defer stopProfile()
	stopTrace, err := startTrace()
	if err != nil {
		return err
	}
	defer stopTrace()
	// Whatever still logs through the default logger (a library, a source
	// that takes no logger) writes the same format with the pipeline field.
	slog.SetDefault(inv.log)
	b := currentBuild()
	inv.log.Info("tributary starting", "version", b.Version, "commit", b.Commit, "go_version", b.GoVersion)
	reg := metrics.NewRegistry()
	m := metrics.NewPipeline(reg, inv.cfg.Name)
	rec := status.NewRecorder(m, b.Version)
	// Metrics first, so that a failure to start counts as an error too.
	stopMetrics, err := startMetrics(reg, m, inv.cfg.Scrubber(), inv.log, inv.stdout, inv.httpAddr, func(mux *http.ServeMux) {
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
	stopStatus := publishStatus(store, rec, cfg.Scrubber(), log)
	defer func() { rec.Failed(err); stopStatus() }()
	return rideStalls(ctx, log, m, func(first bool) error { return publishOnce(ctx, cfg, log, m, rec, store, first) })
}

// publishOnce connects the source and the producer and runs the pipeline
// from its checkpoint until ctx is done or it fails. The destination is
// checked on the first run only: a run after a stall starts while brokers
// may still be down.
func publishOnce(ctx context.Context, cfg *config.Config, log *slog.Logger, m *metrics.Pipeline, rec *status.Recorder, store checkpoint.Store, first bool) error {
	opts := source.OptionsFor(cfg)
	opts.Logger, opts.Leased = log, leasedStore(cfg)
	opts.MissingTables = func(t []string) { m.TablesMissing(t); rec.TablesMissing(t) }
	opts.SnapshotBacklog, opts.StatementChange = m.SnapshotBacklog, m.StatementChange
	src, err := capture.New(ctx, opts)
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
		_, hasCheckpoint, err := store.Load(ctx)
		if err != nil {
			return err
		}
		if err := checkDestination(ctx, cfg, prod, hasCheckpoint, log); err != nil {
			return err
		}
	}
	recoder, err := avroRecoder(ctx, cfg, log, m)
	if err != nil {
		return &usageError{err.Error()}
	}
	p := &pipeline.Pipeline{
		Name:       cfg.Name,
		Recoder:    recoder,
		Source:     src,
		SourceType: cfg.Source.Type,
		Encoder: debezium.NewEncoder(debezium.Options{TopicPrefix: cfg.LogicalName(), IncludeUnknownTypes: cfg.Source.IncludeUnknownTypes,
			Topic: cfg.Destination.Topic, KeyColumns: cfg.Destination.KeyColumns, Format: messageFormat(cfg), Routes: cfg.TopicRoutes(), Outbox: outbox(cfg)}),
		OutboxInvalidOp:  cfg.Transforms.Outbox.Effective().TableOpInvalidBehavior,
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
		Heartbeat: pipeline.Heartbeat{Every: cfg.Destination.Heartbeat.IntervalDuration(),
			Topic: cfg.HeartbeatTopic(), ServerName: cfg.LogicalName()},
	}
	log.Info("starting", "source", cfg.Source.Type, "bootstrap_servers", cfg.Destination.BootstrapServers, "topic_prefix", cfg.Destination.TopicPrefix)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go watchAcks(wctx, p, m, log, time.Second, stallAfter)
	if err := p.Run(ctx); err != nil || !p.StopWhenBackfilled || ctx.Err() != nil {
		return err
	}
	// initial_only ended by itself: every table is backfilled, and nothing
	// will stream from what the source kept for a stream (docs/snapshots.md).
	return src.FinishBackfilled(ctx)
}
