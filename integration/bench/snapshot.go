package main

// The snapshot scenarios, Tributary only (Debezium's incremental snapshots are
// driven by a signal table of its own and not compared here):
//
//   - backfill-parallel: the bench rows in one table (read in key ranges by 2 and N workers),
//     then split over N tables (id mod N), each backfilled with source.snapshot_parallelism 1,
//     2 (the default) and N; rows/s of each,
//     from the process start to the broker's append time of the last row, as `backfill`.
//   - snapshot-latency: the pipeline streams the bench table at BENCH_SNAPSHOT_RATE changes/s
//     while `tributary backfill --table public.bench_snap` re-publishes a BENCH_ROWS table;
//     the stream's commit → broker append latency over the changes committed while the
//     snapshot's rows were being appended (first to last r row), and the snapshot's rows/s
//     over that span.

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-cdc/tributary/integration/procstat"
)

// parallelTemplate holds the bench rows twice: in bench, and split over bench_1..bench_N.
const parallelTemplate = "bench_template_par"

func (b *bench) snapshotScenario(ctx context.Context, sc string) error {
	if sc == scParallel {
		return b.parallel(ctx)
	}
	r, err := b.snapshotLatency(ctx)
	b.runs = append(b.runs, r...)
	return err
}

// parallel runs the 1-table backfill and the N-table ones, each a row of the results.
func (b *bench) parallel(ctx context.Context) error {
	n := b.p.ParallelTables
	b.log.Info("making the split template", "tables", n)
	if err := createDB(ctx, parallelTemplate, "bench_template"); err != nil {
		return err
	}
	var split strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&split, "CREATE TABLE bench_%d (LIKE bench INCLUDING ALL); INSERT INTO bench_%d SELECT * FROM bench WHERE id %% %d = %d; ANALYZE bench_%d;\n", i, i, n, i-1, i)
	}
	if err := execIn(ctx, parallelTemplate, split.String()); err != nil {
		return err
	}
	type variant struct {
		tables, parallelism int
	}
	// One table read by 1, 2 and N workers (in key ranges), then N tables.
	var variants []variant
	for _, tables := range []int{1, n} {
		for _, p := range []int{1, 2, n} {
			if !slices.Contains(variants, variant{tables, p}) {
				variants = append(variants, variant{tables, p})
			}
		}
	}
	var failed error
	for _, v := range variants {
		label := fmt.Sprintf("%s %d table(s) p%d", scParallel, v.tables, v.parallelism)
		b.log.Info("running", "system", sysTributary, "scenario", label)
		r, err := b.parallelOne(ctx, v.tables, v.parallelism)
		r.System, r.Scenario = sysTributary, label
		if err != nil {
			r.Error = err.Error()
			failed = errors.Join(failed, fmt.Errorf("%s: %w", label, err))
			b.log.Error("run failed", "scenario", label, "err", err)
		} else {
			b.log.Info("done", "scenario", label, "events", r.Events, "events_per_sec", int(r.EventsPerSec))
		}
		b.runs = append(b.runs, r)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return failed
}

func (b *bench) parallelOne(ctx context.Context, tables, parallelism int) (r run, err error) {
	suffix := fmt.Sprintf("_%dt_p%d", tables, parallelism)
	w := newWorld(b.p, sysTributary, scParallel, b.stamp)
	w.db += suffix
	w.prefix += strings.ReplaceAll(suffix, "_", "-")
	w.dir += suffix
	w.parallelism = parallelism
	w.tables = []string{"public.bench"}
	if tables > 1 {
		w.tables = nil
		for i := 1; i <= tables; i++ {
			w.tables = append(w.tables, fmt.Sprintf("public.bench_%d", i))
		}
	}
	var topics []string
	for _, t := range w.tables {
		topics = append(topics, w.prefix+"."+t)
	}
	var c *child
	defer func() {
		if c != nil {
			if serr := c.stop(90 * time.Second); serr != nil && err == nil {
				err = serr
			}
		}
		if !b.p.keep {
			dropDB(context.Background(), w.db)
			deleteTopics(context.Background(), topics...)
		}
	}()
	for _, t := range topics {
		if err := createTopic(ctx, t, b.p.Partitions); err != nil {
			return r, err
		}
	}
	if err := createDB(ctx, w.db, parallelTemplate); err != nil {
		return r, err
	}
	counts, err := rowCounts(ctx, w.db, w.tables)
	if err != nil {
		return r, err
	}
	var t0 time.Time
	if c, t0, err = (tributary{p: b.p}).start(ctx, w); err != nil {
		return r, err
	}
	var last time.Time
	var events int64
	for i, topic := range topics {
		ends, err := waitForCount(ctx, topic, counts[i], 5*time.Minute, c.done)
		if err != nil {
			return r, fmt.Errorf("%w\n%s", err, c.tail())
		}
		events += counts[i]
		l, err := lastAppend(ctx, topic, ends)
		if err != nil {
			return r, err
		}
		if l.After(last) {
			last = l
		}
	}
	cpu, err := cpuSeconds(c.pid())
	if err != nil {
		return r, err
	}
	hwm, err := procstat.PeakRSSMB(c.pid())
	if err != nil {
		return r, err
	}
	secs := last.Sub(t0).Seconds()
	if secs <= 0 {
		return r, fmt.Errorf("last append %s is before the start %s", last, t0)
	}
	r.Events = events
	r.EventsPerSec = float64(events) / secs
	r.CPUSecPerMillion = ptr(cpu / float64(events) * 1e6)
	r.PeakRSSMB = ptr(hwm)
	return r, nil
}

// rowCounts counts the rows of each "public.x" table of db.
func rowCounts(ctx context.Context, db string, tables []string) ([]int64, error) {
	c, err := connect(ctx, db)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.Background())
	out := make([]int64, len(tables))
	for i, t := range tables {
		if err := c.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&out[i]); err != nil {
			return nil, fmt.Errorf("count %s: %w", t, err)
		}
	}
	return out, nil
}

// snapshotLatency returns two rows: the stream during the snapshot (latency) and the
// snapshot itself (rows/s).
func (b *bench) snapshotLatency(ctx context.Context) (runs []run, err error) {
	stream := run{System: sysTributary, Scenario: scSnapLatency + " stream"}
	snap := run{System: sysTributary, Scenario: scSnapLatency + " snapshot"}
	defer func() {
		if err != nil {
			stream.Error, snap.Error = err.Error(), err.Error()
		}
		runs = []run{stream, snap}
	}()
	w := newWorld(b.p, sysTributary, scSnapLatency, b.stamp)
	w.tables = []string{"public.bench", "public.bench_snap"}
	snapTopic := w.prefix + ".public.bench_snap"
	pub := tributary{p: b.p}
	var c *child
	defer func() {
		if c != nil {
			if serr := c.stop(90 * time.Second); serr != nil && err == nil {
				err = serr
			}
		}
		if !b.p.keep {
			dropDB(context.Background(), w.db)
			deleteTopics(context.Background(), w.topic, snapTopic)
		}
	}()
	for _, t := range []string{w.topic, snapTopic} {
		if err := createTopic(ctx, t, b.p.Partitions); err != nil {
			return nil, err
		}
	}
	// bench_snap is the template's full table; bench, streamed, starts with the seed rows.
	if err := createDB(ctx, w.db, "bench_template"); err != nil {
		return nil, err
	}
	if err := execIn(ctx, w.db, "ALTER TABLE bench RENAME TO bench_snap; CREATE TABLE bench (LIKE bench_snap INCLUDING ALL)"); err != nil {
		return nil, err
	}
	if err := seed(ctx, w.db); err != nil {
		return nil, err
	}
	b.log.Info("first start: the initial backfill of both tables", "rows", b.p.Rows+seedRows)
	if err := firstStart(ctx, pub, w, map[string]int64{w.topic: seedRows, snapTopic: int64(b.p.Rows)}); err != nil {
		return nil, err
	}
	base, err := endOffsets(ctx, w.topic)
	if err != nil {
		return nil, err
	}
	if c, _, err = pub.start(ctx, w); err != nil {
		return nil, err
	}
	if err := waitSlotActive(ctx, w.slot, c); err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second) // let it settle into streaming
	cpu0, _ := cpuSeconds(c.pid())

	type loaded struct {
		batches int
		took    time.Duration
		err     error
	}
	done := make(chan loaded, 1)
	go func() {
		commits, took, err := loader(ctx, w.db, b.p.SnapshotRate, time.Duration(b.p.LatencySeconds)*time.Second, 0)
		done <- loaded{len(commits), took, err}
	}()
	time.Sleep(3 * time.Second) // the stream at its steady rate before the snapshot starts
	// Counted from here: the first start may have stopped with the initial snapshot of
	// bench_snap unfinished, which this run then finishes first.
	snapBase, err := endOffsets(ctx, snapTopic)
	if err != nil {
		<-done
		return nil, err
	}
	requested := time.Now()
	out, err := exec.CommandContext(ctx, b.p.binary, "backfill", "--config", filepath.Join(w.dir, "pipeline.yaml"), "--table", "public.bench_snap").CombinedOutput()
	if err != nil {
		<-done
		return nil, fmt.Errorf("tributary backfill: %w\n%s", err, out)
	}
	snapEnds, err := waitForCount(ctx, snapTopic, sum(snapBase)+int64(b.p.Rows), 5*time.Minute, c.done)
	if err != nil {
		<-done
		return nil, fmt.Errorf("%w\n%s", err, c.tail())
	}
	l := <-done
	if l.err != nil {
		return nil, l.err
	}
	events := int64(l.batches * changesPerBatch)
	ends, err := waitForCount(ctx, w.topic, sum(base)+events, 5*time.Minute, c.done)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, c.tail())
	}
	cpu1, _ := cpuSeconds(c.pid())
	hwm, _ := procstat.PeakRSSMB(c.pid())

	first, err := firstAppend(ctx, snapTopic, snapBase, snapEnds)
	if err != nil {
		return nil, err
	}
	last, err := lastAppend(ctx, snapTopic, snapEnds)
	if err != nil {
		return nil, err
	}
	if secs := last.Sub(first).Seconds(); secs > 0 {
		snap.Events = int64(b.p.Rows)
		snap.EventsPerSec = float64(b.p.Rows) / secs
	}
	lo, hi := float64(first.UnixMilli()), float64(last.UnixMilli())
	lat, err := commitLatencies(ctx, w.topic, base, ends, sourceCommit(func(commit float64) bool { return commit >= lo && commit <= hi }))
	if err != nil {
		return nil, err
	}
	// The same stream before the snapshot's first row, for comparison.
	before, err := commitLatencies(ctx, w.topic, base, ends, sourceCommit(func(commit float64) bool { return commit < lo }))
	if err != nil {
		return nil, err
	}
	loadEnd := requested.Add(-3*time.Second + l.took)
	if loadEnd.Before(last) {
		b.log.Warn("the load ended before the snapshot: raise BENCH_LATENCY_SECONDS to cover all of it",
			"snapshot_ends_after_load_by", last.Sub(loadEnd).Round(time.Millisecond))
	}
	if len(lat) == 0 {
		return nil, fmt.Errorf("no change of %s was committed while the snapshot ran (%s to %s)", w.topic, first, last)
	}
	sort.Float64s(lat)
	sort.Float64s(before)
	stream.Events = int64(len(lat))
	stream.EventsPerSec = float64(events) / l.took.Seconds()
	stream.CPUSecPerMillion = ptr((cpu1 - cpu0) / float64(events+int64(b.p.Rows)) * 1e6)
	stream.PeakRSSMB = ptr(hwm)
	stream.P50Ms, stream.P99Ms, stream.MaxMs = ptr(quantile(lat, 0.50)), ptr(quantile(lat, 0.99)), ptr(lat[len(lat)-1])
	b.log.Info("snapshot while streaming",
		"snapshot_rows", b.p.Rows, "snapshot_rows_per_sec", int(snap.EventsPerSec),
		"request_to_first_row", first.Sub(requested).Round(time.Millisecond), "snapshot_span", last.Sub(first).Round(time.Millisecond),
		"stream_changes_in_span", len(lat), "p50_ms", strconv.FormatFloat(*stream.P50Ms, 'f', 1, 64), "p99_ms", strconv.FormatFloat(*stream.P99Ms, 'f', 1, 64),
		"before_snapshot_changes", len(before), "before_snapshot_p50_ms", strconv.FormatFloat(quantile(before, 0.50), 'f', 1, 64),
		"before_snapshot_p99_ms", strconv.FormatFloat(quantile(before, 0.99), 'f', 1, 64))
	return nil, nil
}

// firstStart runs Tributary until its initial snapshot published want (topic → records) and
// stops it, so that the measured run finds it finished: its checkpoints say when the
// snapshot started, not when it ended (tributary.readyStream waits for the first one).
func firstStart(ctx context.Context, pub tributary, w world, want map[string]int64) error {
	c, err := pub.launch(w, "first-start.log")
	if err != nil {
		return err
	}
	defer c.stop(60 * time.Second)
	for topic, n := range want {
		if _, err := waitForCount(ctx, topic, n, 2*time.Minute, c.done); err != nil {
			return fmt.Errorf("first start: %w\n%s", err, c.tail())
		}
	}
	time.Sleep(2 * time.Second) // its checkpoint past the last row
	return c.stop(60 * time.Second)
}
