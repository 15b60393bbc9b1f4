package main

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"os"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strconv"
	"strings"
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
// memory (docs/hot-path.md, "The runtime's settings"). A source may set
// its own (source.Kind.SoftMemoryLimit); GOMEMLIMIT overrides both.
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
// not set them (empty is not set, as the runtime reads them), floor the
// default soft limit. It says whether the default soft limit applies.
func tuneRuntime(floor int64) (defaultLimit bool) {
	if defaultLimit = os.Getenv("GOMEMLIMIT") == ""; defaultLimit {
		debug.SetMemoryLimit(floor)
	}
	if os.Getenv("GOGC") == "" && debug.SetMemoryLimit(-1) != math.MaxInt64 {
		debug.SetGCPercent(gcPercent)
	}
	return defaultLimit
}

// followLiveHeap keeps the default soft limit at least 1.5 times the live heap
// until ctx ends (memoryLimitFor). What a pipeline keeps live beyond its
// records in flight grows with the tables it captures (each table's shape
// and encoder: about 9 KB, so 90 MB at 10,000 tables); with the limit at
// the live heap the collector would run all the time (three quarters of a
// 10,000-table pipeline's CPU went to marking).
func followLiveHeap(ctx context.Context, floor int64) {
	ceiling := containerMemory(cgroupMemoryFiles...) / 4 * 3
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			adjustMemoryLimit(ceiling, floor)
		}
	}
}

// adjustMemoryLimit sets the soft limit for the live heap the last
// collection left, at most ceiling (0: none) above floor, the default.
func adjustMemoryLimit(ceiling, floor int64) {
	s := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return
	}
	want := memoryLimitFor(s[0].Value.Uint64(), floor)
	if ceiling > 0 {
		want = max(floor, min(want, ceiling))
	}
	if want != debug.SetMemoryLimit(-1) {
		debug.SetMemoryLimit(want)
	}
}

// cgroupMemoryFiles hold a container's memory limit: cgroup v2's, then v1's.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// containerMemory is the memory limit of the container the process runs
// in, from the first of files that holds one; 0 when none does ("max", or
// v1's page-rounded maximum for none). followLiveHeap keeps the soft limit
// under three quarters of it, as the CDK's task sets GOMEMLIMIT, so that a
// container without GOMEMLIMIT is not killed for memory the collector
// could have freed.
func containerMemory(files ...string) int64 {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 {
			return 0
		}
		return n
	}
	return 0
}

// memoryLimitFor is the default soft limit for a live heap of live bytes:
// floor, or 1.5 times the live heap once that is more than the product's
// softMemoryLimit (rounded up to 8 MiB, so that small changes of the live
// heap leave it be): a source's lower floor holds while its live heap is
// what a drain's is, and gives way where a large one (many tables) would
// have the collector run all the time. Under
// gcPercent a collection then comes at the latest once the program has
// allocated half of what it keeps live; at twice the live heap a
// 10,000-table pipeline's resident memory reached 251 MB, where the target
// is 250 (integration/bench/README.md).
func memoryLimitFor(live uint64, floor int64) int64 {
	const step = 8 << 20
	want := (int64(live+live/2) + step - 1) / step * step
	if want <= softMemoryLimit {
		return floor
	}
	return max(floor, want)
}

// memoryFloor is the default soft limit of a pipeline of cfg's source:
// its kind's, or softMemoryLimit.
func memoryFloor(cfg *config.Config) int64 {
	if k, ok := capture.KindOf(cfg.Source.Type); ok && k.SoftMemoryLimit > 0 {
		return k.SoftMemoryLimit
	}
	return softMemoryLimit
}

func runPipeline(ctx context.Context, inv *invocation) error {
	floor := memoryFloor(inv.cfg)
	if tuneRuntime(floor) {
		go followLiveHeap(ctx, floor)
	}
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
	stopHeap, err := startHeapProfile()
	if err != nil {
		return err
	}
	defer stopHeap()
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
