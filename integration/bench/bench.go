package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tributary-cdc/tributary/integration/procstat"
)

// run is one row of the results, the shape results/*.json keep. Pointers are null where a
// number does not apply (no latency for a drain) or could not be measured.
type run struct {
	System           string   `json:"system"`
	Scenario         string   `json:"scenario"`
	Events           int64    `json:"events"`
	EventsPerSec     float64  `json:"events_per_sec"`
	CPUSecPerMillion *float64 `json:"cpu_sec_per_million"`
	PeakRSSMB        *float64 `json:"peak_rss_mb"`
	P50Ms            *float64 `json:"p50_ms"`
	P99Ms            *float64 `json:"p99_ms"`
	MaxMs            *float64 `json:"max_ms"`
	// CorePercent is the share of one core a process used (the largest of a fleet's).
	CorePercent *float64 `json:"core_percent,omitempty"`
	// PSSMB is a fleet process's proportional set size as the phase ended (the largest of
	// the fleet's): its own pages and its share of those the fleet's processes share, the
	// binary's code pages above all, so n of them add up to what the fleet holds.
	PSSMB *float64 `json:"pss_mb,omitempty"`
	// Tables is the table count of a many-tables run, StartSeconds its time from the exec
	// to the first streamed change in Kafka (manytables.go).
	Tables       int      `json:"tables,omitempty"`
	StartSeconds *float64 `json:"start_seconds,omitempty"`
	Note         string   `json:"note,omitempty"`
	Error        string   `json:"error,omitempty"`
	// RegistryCalls are the schema registry requests of an Avro run, read from its
	// /metrics as the drain ended; nil for JSON.
	RegistryCalls *registryCount `json:"registry_calls,omitempty"`
	// Rep is which of BENCH_REPEAT's runs of the system and scenario this is (1, 2, …);
	// 0 when each ran once.
	Rep int `json:"rep,omitempty"`
	// Size is the x of a curve scenario's run: the changes in the one transaction (bigtx),
	// the bytes of each row's text (large), the pipelines (fleet); 0 in other scenarios.
	Size int `json:"size,omitempty"`
	// MBPerSec is, in the large scenarios, events/s times the mean record (key and value)
	// sampled from Tributary's topic at the same size.
	MBPerSec *float64 `json:"mb_per_sec,omitempty"`
}

type bench struct {
	p       params
	log     *slog.Logger
	machine machine
	stamp   string
	runs    []run
	// payloads holds, per scenario, values sampled from Tributary's topic for the ceiling.
	payloads map[string]string
	// recordBytes is, per scenario, the mean size (key and value) of those values: MB/s of
	// the large scenarios is events/s times it, for Tributary and its ceiling alike.
	recordBytes map[string]int
}

func (b *bench) run(ctx context.Context) error {
	b.stamp = filepath.Base(b.p.scratch[:len(b.p.scratch)-len(".tmp")])
	b.payloads, b.recordBytes = map[string]string{}, map[string]int{}
	if _, err := os.Stat(b.p.binary); err != nil {
		return fmt.Errorf("%s is missing: run make build", b.p.binary)
	}
	if _, err := os.Stat(b.p.baseline); b.p.baseline != "" && err != nil {
		return fmt.Errorf("BENCH_BASELINE: %w", err)
	}
	defer mongoStop()
	var failed error
	templated, warmed := false, false
	for _, sc := range []string{scBackfill, scBackfillMariaDB, scStreaming, scStreamingMariaDB, scLatency, scLatencyMariaDB, scBackfillMongoDB, scStreamingMongoDB, scBigTx, scBigTxMariaDB, scLarge, scLargeMariaDB, scParallel, scSnapLatency, scFleet, scManyTables, scManyTablesMariaDB} {
		if !slices.Contains(b.p.Scenarios, sc) {
			continue
		}
		if (sc == scBackfill || sc == scParallel || sc == scSnapLatency) && !templated {
			b.log.Info("making the backfill template", "rows", b.p.Rows)
			if err := createDB(ctx, "bench_template", ""); err != nil {
				return err
			}
			if err := fillRows(ctx, "bench_template", b.p.Rows); err != nil {
				return err
			}
			templated = true
		}
		for i, size := range b.curve(sc) {
			start := len(b.runs)
			restore := b.atPoint(sc, i, size)
			err := b.scenario(ctx, sc, &failed, &warmed)
			restore()
			for j := start; j < len(b.runs); j++ {
				b.runs[j].Size = size
			}
			if err != nil {
				return err
			}
		}
	}
	if !b.p.keep {
		dropDB(context.Background(), "bench_template")
		dropDB(context.Background(), parallelTemplate)
	}
	return failed
}

// scenario runs sc once at b.p's sizes: every system (BENCH_REPEAT times), then its
// ceilings. A run's failure is joined into failed; a cancelled context ends it.
func (b *bench) scenario(ctx context.Context, sc string, failed *error, warmed *bool) error {
	if sc == scParallel || sc == scSnapLatency || sc == scFleet || sc == scManyTables || sc == scManyTablesMariaDB {
		scenario := b.snapshotScenario
		if sc == scFleet {
			scenario = func(ctx context.Context, _ string) error { return b.fleetScenario(ctx) }
		} else if sc == scManyTables || sc == scManyTablesMariaDB {
			scenario = b.manyTablesScenario
		}
		if err := scenario(ctx, sc); err != nil {
			*failed = errors.Join(*failed, fmt.Errorf("%s %s: %w", sysTributary, sc, err))
			b.log.Error("run failed", "system", sysTributary, "scenario", sc, "err", err)
		}
		return ctx.Err()
	}
	if !*warmed {
		b.warmUp(ctx, sc)
		*warmed = true
	}
	start := len(b.runs)
	if err := b.repeatSystems(ctx, sc, failed); err != nil {
		return err
	}
	if slices.Contains(b.p.Scenarios, scCeiling) && !isMongo(sc) {
		if err := b.ceilings(ctx, sc, 0, failed); err != nil {
			return err
		}
	}
	if rb := b.recordBytes[sc]; isLarge(sc) && rb > 0 {
		for i := start; i < len(b.runs); i++ {
			if r := &b.runs[i]; r.Error == "" {
				r.MBPerSec = ptr(r.EventsPerSec * float64(rb) / 1e6)
				r.Note = strings.TrimPrefix(r.Note+fmt.Sprintf("; %.0f MB/s of %d-byte records", *r.MBPerSec, rb), "; ")
			}
		}
	}
	return nil
}

// ceilings runs the ceilings of sc, each after the other systems of sc (of repeat rep, 0
// when the ceilings run once).
func (b *bench) ceilings(ctx context.Context, sc string, rep int, failed *error) error {
	var ceilings []func(context.Context) (run, error)
	if sc == scBackfill || sc == scStreaming || sc == scStreamingMariaDB || isLarge(sc) {
		if b.payloads[sc] != "" {
			ceilings = append(ceilings, func(ctx context.Context) (run, error) { return b.ceiling(ctx, sc) })
		} else {
			b.log.Warn("no producer ceiling: no Tributary run of the scenario to sample values from", "scenario", sc)
		}
	}
	switch sc {
	case scStreaming:
		ceilings = append(ceilings, b.recvlogical)
	case scStreamingMariaDB:
		ceilings = append(ceilings, b.binlogReader)
	case scLatency, scLatencyMariaDB:
		ceilings = append(ceilings, func(ctx context.Context) (run, error) { return b.runOne(ctx, sysFloor, sc) })
	case scStreamingMongoDB:
		ceilings = append(ceilings, b.mongoStreamCeiling)
	case scBackfillMongoDB:
		ceilings = append(ceilings, b.mongoFindCeiling, b.mongoPagedCeiling)
	}
	for _, f := range ceilings {
		r, err := f(ctx)
		r.Rep = rep
		if err != nil {
			r.Error = err.Error()
			*failed = errors.Join(*failed, fmt.Errorf("%s %s: %w", r.System, sc, err))
			b.log.Error("run failed", "system", r.System, "scenario", sc, "err", err)
		} else {
			b.log.Info("done", "system", r.System, "scenario", sc, "events", r.Events, "events_per_sec", int(r.EventsPerSec))
		}
		b.runs = append(b.runs, r)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// curve is the sizes scenario sc runs at, one run of every system at each (its x axis):
// BENCH_BIGTX_ROWS, BENCH_LARGE_BYTES, BENCH_FLEET_PIPELINES; {0} for a scenario that
// is no curve.
func (b *bench) curve(sc string) []int {
	switch {
	case isBigTx(sc) && len(b.p.BigTxCurve) > 0:
		return b.p.BigTxCurve
	case isLarge(sc) && len(b.p.LargeCurve) > 0:
		return b.p.LargeCurve
	case sc == scFleet && len(b.p.FleetCurve) > 0:
		return b.p.FleetCurve
	}
	return []int{0}
}

// atPoint sets b.p to the i-th point of sc's curve, size, and returns what puts b.p back.
// Each point after the first has topics and a scratch directory of its own (a topic
// deleted a moment ago may not be made again yet), and its own sample for the ceiling.
func (b *bench) atPoint(sc string, i, size int) func() {
	saved, stamp := b.p, b.stamp
	switch {
	case isBigTx(sc) && size > 0:
		b.p.BigTxRows = size
	case isLarge(sc) && size > 0:
		b.p.LargeBytes, b.p.LargeRows = size, largeRowsAt(b.p.LargeRows, size)
	case sc == scFleet && size > 0:
		b.p.FleetPipelines = size
	}
	if i > 0 {
		b.p.scratch = filepath.Join(saved.scratch, fmt.Sprintf("point%d", i))
		b.stamp = fmt.Sprintf("%sp%d", stamp, i)
		if err := os.MkdirAll(b.p.scratch, 0o755); err != nil {
			b.log.Warn("scratch directory", "err", err)
		}
	}
	delete(b.payloads, sc)
	delete(b.recordBytes, sc)
	if size > 0 {
		b.log.Info("curve point", "scenario", sc, "size", size, "point", i+1)
	}
	return func() { b.p, b.stamp = saved, stamp }
}

// largeRowBytes is the row size up to which the large scenarios insert BENCH_LARGE_ROWS
// rows; above it fewer, the same bytes in all, so that a curve's largest values do not
// multiply the run's time and the broker's disk.
const largeRowBytes = 100_000

// largeRowsAt is the rows the large scenarios insert at size bytes a row.
func largeRowsAt(rows, size int) int {
	if size <= largeRowBytes {
		return rows
	}
	return max(largePerTx, rows*largeRowBytes/size/largePerTx*largePerTx)
}

// repeatSystems runs every system of sc BENCH_REPEAT times, in the systems' order and
// then the reverse (ABBA…), so that neither build of a before/after pair is always the one
// that runs into the machine's next change of pace; the report takes the median of the
// repeats (medianRun). A run's failure is joined into failed; a cancelled context ends it.
func (b *bench) repeatSystems(ctx context.Context, sc string, failed *error) error {
	scratch, stamp := b.p.scratch, b.stamp
	defer func() { b.p.scratch, b.stamp = scratch, stamp }()
	reps := max(1, b.p.Repeat)
	for rep := 1; rep <= reps; rep++ {
		systems := repOrder(b.p.Systems, rep)
		label := 0 // the runs' Rep: numbered only when there are several
		if reps > 1 {
			label = rep
		}
		if rep > 1 { // topics and a directory (the checkpoint file) of their own
			b.p.scratch = filepath.Join(scratch, fmt.Sprintf("rep%d", rep))
			b.stamp = fmt.Sprintf("%sr%d", stamp, rep)
		}
		for _, sys := range systems {
			if !runsIn(sys, sc) {
				continue
			}
			b.log.Info("running", "system", sys, "scenario", sc, "rep", rep)
			r, err := b.runOne(ctx, sys, sc)
			r.Rep = label
			if err != nil {
				r.Error = err.Error()
				*failed = errors.Join(*failed, fmt.Errorf("%s %s: %w", sys, sc, err))
				b.log.Error("run failed", "system", sys, "scenario", sc, "err", err)
			} else {
				b.log.Info("done", "system", sys, "scenario", sc, "events", r.Events, "events_per_sec", int(r.EventsPerSec))
			}
			b.runs = append(b.runs, r)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		// The MongoDB ceilings run in every repeat, each on a fresh server as the systems'
		// runs are: they take seconds, and the ratio of two medians taken over the same
		// stretch of the machine's pace holds where one ceiling run beside several of
		// Tributary's did not (a shared host's steal moved one run by a third).
		if isMongo(sc) && slices.Contains(b.p.Scenarios, scCeiling) {
			if err := b.ceilings(ctx, sc, label, failed); err != nil {
				return err
			}
		}
	}
	return nil
}

// runsIn reports whether system sys has a run in scenario sc: one core in the relational
// streaming scenarios only, Avro in their backfill and streaming scenarios, and on MongoDB
// Tributary at_least_once and the baseline only. Debezium's connector cannot run there
// (docs/mongodb.md); exactly_once's last transaction of a backfill stays open while
// mongo-java-server's change stream is idle, so read_committed never sees the drain end.
func runsIn(sys, sc string) bool {
	switch {
	case sys == sysOneCore:
		return sc == scStreaming || sc == scStreamingMariaDB
	case sys == sysAvro:
		return sc == scBackfill || sc == scBackfillMariaDB || sc == scStreaming || sc == scStreamingMariaDB
	case isMongo(sc):
		return sys == sysTributary || sys == sysBaseline
	}
	return true
}

// repOrder is the order of the systems in repeat rep (1, 2, …): as given, then reversed.
func repOrder(systems []string, rep int) []string {
	systems = slices.Clone(systems)
	if rep%2 == 0 {
		slices.Reverse(systems)
	}
	return systems
}

// warmUp runs sc once with Tributary before the first measured run, and reports nothing of
// it: the services, often just started by services-up, warm up on it (the broker's JVM,
// PostgreSQL's buffers, the page cache), as each Debezium run's JVM warms up on a tenth of
// the work. Without it the run's first scenario would measure the services' start, much
// slower than the same binary's next run.
func (b *bench) warmUp(ctx context.Context, sc string) {
	saved, stamp := b.p, b.stamp
	defer func() { b.p, b.stamp = saved, stamp }()
	b.p.scratch, b.stamp = filepath.Join(saved.scratch, "warm-up"), stamp+"w"
	b.log.Info("warming the services up (not reported)", "system", sysTributary, "scenario", sc)
	r, err := b.runOne(ctx, sysTributary, sc)
	if err != nil {
		b.log.Warn("the warm-up failed; measuring anyway", "scenario", sc, "err", err)
		return
	}
	b.log.Info("warmed up", "scenario", sc, "events_per_sec", int(r.EventsPerSec))
}

func (b *bench) publisher(sys string) publisher {
	switch sys {
	case sysTributary:
		return tributary{p: b.p}
	case sysTributaryEOS:
		return tributary{p: b.p, exactlyOnce: true}
	case sysBaseline:
		return tributary{p: b.p, binary: b.p.baseline}
	case sysOneCore:
		return tributary{p: b.p, procs: 1}
	case sysAvro:
		return tributary{p: b.p, avro: true}
	case sysDebeziumTuned:
		return debezium{p: b.p, tuned: true}
	case sysFloor:
		return floor{}
	}
	return debezium{p: b.p}
}

// runOne prepares a fresh world for sys, runs the scenario and cleans up.
func (b *bench) runOne(ctx context.Context, sys, sc string) (r run, err error) {
	r = run{System: sys, Scenario: sc}
	w := newWorld(b.p, sys, sc, b.stamp)
	pub := b.publisher(sys)
	var c *child
	defer func() {
		if c != nil {
			if serr := c.stop(90 * time.Second); serr != nil && err == nil {
				err = serr
			}
		}
		if !b.p.keep {
			cctx := context.Background()
			dropDB(cctx, w.db)
			dropDB(cctx, w.db+"_warm")
			switch w.source {
			case srcMariaDB:
				dropMyDB(w.db)
				dropMyDB(w.db + "_warm")
			case srcMongoDB:
				dropMongoDB(w.db)
			}
			if sys == sysAvro {
				deleteSubjects(w.topic)
			}
			deleteTopics(cctx, w.topic, w.warmTopic(), w.prefix+".tributary-offsets")
		}
	}()
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return r, err
	}
	if sys == sysAvro {
		if w.httpAddr, err = freeAddr(); err != nil {
			return r, err
		}
	}
	if err := createTopic(ctx, w.topic, b.p.Partitions); err != nil {
		return r, err
	}
	if _, ok := pub.(debezium); ok {
		if err := createTopic(ctx, w.warmTopic(), b.p.Partitions); err != nil {
			return r, err
		}
	}

	switch sc {
	case scBackfill, scBackfillMariaDB, scBackfillMongoDB:
		if sc == scBackfillMongoDB {
			b.log.Info("making the MongoDB collection", "db", w.db, "documents", b.p.Rows)
			if err := b.mongoFresh(ctx, w.db, b.p.Rows); err != nil {
				return r, err
			}
		} else if sc == scBackfillMariaDB {
			b.log.Info("making the MariaDB table", "db", w.db, "rows", b.p.Rows)
			if err := createMyDB(ctx, w.db, b.p.Rows); err != nil {
				return r, err
			}
		} else if err := createDB(ctx, w.db, "bench_template"); err != nil {
			return r, err
		}
		var t0 time.Time
		if c, t0, err = pub.start(ctx, w); err != nil {
			return r, err
		}
		cpu0 := 0.0 // Tributary: from its exec; a JVM: from the end of its warm-up
		if !isTributary(sys) {
			cpu0, _ = cpuSeconds(c.pid())
		}
		ends, err := waitForCount(ctx, w.topic, int64(b.p.Rows), 5*time.Minute, c.done)
		if err != nil {
			return r, fmt.Errorf("%w\n%s", err, c.tail())
		}
		if err := b.finishDrain(ctx, &r, c, w, t0, cpu0, int64(b.p.Rows), nil, ends); err != nil {
			return r, err
		}

	case scStreaming, scStreamingMariaDB, scStreamingMongoDB, scBigTx, scBigTxMariaDB, scLarge, scLargeMariaDB:
		if err := b.readyStreamDB(ctx, pub, w); err != nil {
			return r, err
		}
		n := b.changes(sc)
		b.log.Info("committing changes while the publisher is stopped", "changes", n, "one_transaction", isBigTx(sc))
		if err := b.commitChanges(ctx, &w); err != nil {
			return r, err
		}
		base, err := endOffsets(ctx, w.topic)
		if err != nil {
			return r, err
		}
		var t0 time.Time
		if c, t0, err = pub.start(ctx, w); err != nil {
			return r, err
		}
		cpu0 := 0.0
		if !isTributary(sys) {
			cpu0, _ = cpuSeconds(c.pid())
		}
		ends, err := waitForCount(ctx, w.topic, sum(base)+int64(n), 5*time.Minute, c.done)
		if err != nil {
			return r, fmt.Errorf("%w\n%s", err, c.tail())
		}
		if err := b.finishDrain(ctx, &r, c, w, t0, cpu0, int64(n), base, ends); err != nil {
			return r, err
		}

	case scLatency, scLatencyMariaDB:
		if err := b.readyStreamDB(ctx, pub, w); err != nil {
			return r, err
		}
		base, err := endOffsets(ctx, w.topic)
		if err != nil {
			return r, err
		}
		if c, _, err = pub.start(ctx, w); err != nil {
			return r, err
		}
		first := 0
		if w.source == srcMariaDB {
			first, base, err = probe(ctx, w, c, base)
		} else {
			err = waitSlotActive(ctx, w.slot, c)
		}
		if err != nil {
			return r, err
		}
		time.Sleep(2 * time.Second) // let it settle into streaming
		cpu0, _ := cpuSeconds(c.pid())
		load, commitOf := loader, sourceCommit(nil)
		if w.source == srcMariaDB {
			load = myLoader
		}
		commits, took, err := load(ctx, w.db, b.p.Rate, time.Duration(b.p.LatencySeconds)*time.Second, first)
		if err != nil {
			return r, err
		}
		if w.source == srcMariaDB {
			// The binlog dates events to the second: latency starts when the commit returned.
			commitOf = batchCommit(first, commits)
		}
		events := int64(len(commits) * changesPerBatch)
		ends, err := waitForCount(ctx, w.topic, sum(base)+events, 5*time.Minute, c.done)
		if err != nil {
			return r, fmt.Errorf("%w\n%s", err, c.tail())
		}
		cpu1, _ := cpuSeconds(c.pid())
		hwm, _ := procstat.PeakRSSMB(c.pid())
		lat, err := commitLatencies(ctx, w.topic, base, ends, commitOf)
		if err != nil {
			return r, err
		}
		r.Events = events
		r.EventsPerSec = float64(events) / took.Seconds()
		r.CPUSecPerMillion = ptr((cpu1 - cpu0) / float64(events) * 1e6)
		r.PeakRSSMB = ptr(hwm)
		if len(lat) == 0 {
			return r, fmt.Errorf("no records with a value in %s", w.topic)
		}
		sort.Float64s(lat)
		r.P50Ms, r.P99Ms, r.MaxMs = ptr(quantile(lat, 0.50)), ptr(quantile(lat, 0.99)), ptr(lat[len(lat)-1])
	}
	return r, nil
}

// readyStreamDB makes w's database with the seed rows and a slot positioned before anything
// committed next, with the publisher stopped.
func (b *bench) readyStreamDB(ctx context.Context, pub publisher, w world) error {
	if w.source == srcMongoDB {
		if err := b.mongoFresh(ctx, w.db, 0); err != nil {
			return err
		}
	} else if w.source == srcMariaDB {
		if err := createMyStreamDB(w.db); err != nil {
			return err
		}
		if isLarge(w.scenario) {
			if err := myExec(w.db, "ALTER TABLE bench MODIFY note LONGTEXT"); err != nil {
				return err
			}
		}
	} else if err := createDB(ctx, w.db, ""); err != nil {
		return err
	} else if err := seed(ctx, w.db); err != nil {
		return err
	} else if isLarge(w.scenario) {
		if err := execIn(ctx, w.db, "ALTER TABLE bench ALTER COLUMN note SET STORAGE EXTERNAL"); err != nil {
			return err
		}
	}
	return pub.readyStream(ctx, w)
}

// changes is how many changes streaming scenario sc commits: BENCH_BIGTX_ROWS in one
// transaction for bigtx, BENCH_LARGE_ROWS large rows for large, else BENCH_ROWS in
// transactions of changesPerBatch.
func (b *bench) changes(sc string) int {
	switch {
	case isBigTx(sc):
		return b.p.BigTxRows
	case isLarge(sc):
		return b.p.LargeRows
	}
	return b.p.Rows
}

func isLarge(sc string) bool { return sc == scLarge || sc == scLargeMariaDB }

func isBigTx(sc string) bool { return sc == scBigTx || sc == scBigTxMariaDB }

// commitChanges commits the changes of streaming scenario w.scenario to w's database; on
// MariaDB it first notes in w where the binlog ended.
func (b *bench) commitChanges(ctx context.Context, w *world) error {
	n, one := b.changes(w.scenario)/changesPerBatch, isBigTx(w.scenario)
	if isLarge(w.scenario) {
		if w.source == srcMariaDB {
			pos, err := myBinlogPos()
			if err != nil {
				return err
			}
			w.binlogStart = pos
			return myCommitLarge(w.db, b.p.LargeRows, b.p.LargeBytes)
		}
		return commitLarge(ctx, w.db, b.p.LargeRows, b.p.LargeBytes)
	}
	if w.source == srcMongoDB {
		return mongoCommitBatches(ctx, w.db, 0, n)
	}
	if w.source != srcMariaDB {
		if one {
			return commitOneTransaction(ctx, w.db, 0, n)
		}
		return commitBatches(ctx, w.db, 0, n)
	}
	pos, err := myBinlogPos()
	if err != nil {
		return err
	}
	w.binlogStart = pos
	if one {
		return myCommitOneTransaction(w.db, 0, n)
	}
	return myCommitBatches(w.db, 0, n)
}

// probe readies a latency run on MariaDB, where no slot says that the publisher streams: it
// commits batch 0, 1, ... one a second until the publisher published one (Debezium starting
// from the binlog's end misses those committed before it got there), then waits for the
// topic to stop growing. It returns the next batch and the topic's end offsets.
func probe(ctx context.Context, w world, c *child, base map[int32]int64) (int, map[int32]int64, error) {
	deadline := time.Now().Add(3 * time.Minute)
	for i := 0; ; i++ {
		if err := myCommitBatches(w.db, i, i+1); err != nil {
			return 0, nil, err
		}
		select {
		case <-c.done:
			return 0, nil, fmt.Errorf("the publisher exited before streaming: %v\n%s", c.err, c.tail())
		case <-ctx.Done():
			return 0, nil, ctx.Err()
		case <-time.After(time.Second):
		}
		ends, err := endOffsets(ctx, w.topic)
		if err != nil {
			return 0, nil, err
		}
		for sum(ends) > sum(base) {
			time.Sleep(time.Second)
			again, err := endOffsets(ctx, w.topic)
			if err != nil {
				return 0, nil, err
			}
			if sum(again) == sum(ends) {
				return i + 1, again, nil
			}
			ends = again
		}
		if time.Now().After(deadline) {
			return 0, nil, fmt.Errorf("nothing of %d probe batches reached %s within 3 minutes:\n%s", i+1, w.topic, c.tail())
		}
	}
}

// finishDrain records a backfill or drain: the work ends at the broker's append time of
// the last record; CPU and peak RSS are read as soon as the count is reached. base is
// where the topic ended before the run (nil: it was empty).
func (b *bench) finishDrain(ctx context.Context, r *run, c *child, w world, t0 time.Time, cpu0 float64, events int64, base, ends map[int32]int64) error {
	cpu1, err := cpuSeconds(c.pid())
	if err != nil {
		return err
	}
	hwm, err := procstat.PeakRSSMB(c.pid())
	if err != nil {
		return err
	}
	last, err := lastAppend(ctx, w.topic, ends)
	if err != nil {
		return err
	}
	secs := last.Sub(t0).Seconds()
	if secs <= 0 {
		return fmt.Errorf("last append %s is before the start %s", last, t0)
	}
	r.Events = events
	r.EventsPerSec = float64(events) / secs
	r.CPUSecPerMillion = ptr((cpu1 - cpu0) / float64(events) * 1e6)
	r.PeakRSSMB = ptr(hwm)
	if w.httpAddr != "" {
		calls, err := registryCalls(ctx, w.httpAddr)
		if err != nil {
			return err
		}
		r.RegistryCalls = calls
		r.Note = calls.String()
	}
	if r.System == sysTributary {
		path := filepath.Join(b.p.scratch, "payloads-"+r.Scenario+".txt")
		if avg, err := samplePayloads(ctx, w.topic, base, 5000, path); err != nil {
			b.log.Warn("no payload sample for the ceiling", "err", err)
		} else {
			b.payloads[r.Scenario] = path
			b.recordBytes[r.Scenario] = avg
		}
	}
	return nil
}

func waitSlotActive(ctx context.Context, slot string, c *child) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		active, err := slotActive(ctx, slot)
		if err != nil {
			return err
		}
		if active {
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("the publisher exited before streaming: %v\n%s", c.err, c.tail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("slot %s not active within 2 minutes:\n%s", slot, c.tail())
		}
	}
}

// perfLine is the summary producer-perf-test prints last.
var perfLine = regexp.MustCompile(`(\d+) (?:steady state )?records sent, ([\d.]+) records/sec`)

// ceiling runs Kafka's producer-perf-test (ProducerPerformance, from the broker's jars) with
// the same number of records, drawn from values Tributary published in scenario sc, random
// keys (so records spread over the partitions by key hash) and the tuned producer settings:
// what one Java producer on this machine reaches.
func (b *bench) ceiling(ctx context.Context, sc string) (run, error) {
	r := run{System: sysCeiling, Scenario: sc}
	topic := "bench-ppt-" + sc + "-" + b.stamp
	if err := createTopic(ctx, topic, b.p.Partitions); err != nil {
		return r, err
	}
	defer deleteTopics(context.Background(), topic)
	lib := filepath.Join(b.p.repo, ".services", "kafka", "lib")
	// The same warm-up as Debezium's JVM; the steady-state summary, printed last, leaves it out.
	warm, n := debezium{p: b.p}.warmRows(), b.p.Rows
	if isLarge(sc) {
		warm, n = max(10, b.p.LargeRows/10), b.p.LargeRows
	}
	cmd := exec.CommandContext(ctx, "java", "-Xms"+b.p.JVMHeap, "-Xmx"+b.p.JVMHeap, "-Djava.awt.headless=true",
		"-Dkafka.logs.dir="+b.p.scratch, "-Dkafka.log.name=perf",
		"-Dlog4j2.configurationFile="+filepath.Join(b.p.repo, "integration", "services", "kafka", "log4j2.xml"),
		"-cp", filepath.Join(lib, "*"), "org.apache.kafka.tools.ProducerPerformance",
		"--topic", topic, "--num-records", strconv.Itoa(n+warm), "--warmup-records", strconv.Itoa(warm),
		"--throughput", "-1", "--payload-file", b.payloads[sc],
		"--key-distribution", "random", "--record-key-range", strconv.Itoa(n),
		"--command-property", "bootstrap.servers="+kafkaAddr, "acks=all", "compression.type=lz4",
		"linger.ms=50", "batch.size=1048576")
	out, peak, err := runPeak(cmd)
	os.WriteFile(filepath.Join(b.p.scratch, "perf-"+sc+".log"), out, 0o644)
	if err != nil {
		return r, fmt.Errorf("producer-perf-test: %w\n%s", err, tailBytes(out))
	}
	m := perfLine.FindAllSubmatch(out, -1)
	if len(m) == 0 {
		return r, fmt.Errorf("producer-perf-test printed no summary:\n%s", tailBytes(out))
	}
	last := m[len(m)-1]
	r.Events, _ = strconv.ParseInt(string(last[1]), 10, 64)
	r.EventsPerSec, _ = strconv.ParseFloat(string(last[2]), 64)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && r.Events > 0 {
		// The whole process, warm-up and JVM start included: an upper bound.
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		r.CPUSecPerMillion = ptr(cpu / float64(n+warm) * 1e6)
	}
	r.PeakRSSMB = ptr(peak)
	return r, nil
}

func tailBytes(b []byte) string {
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

func ptr(f float64) *float64 { return &f }

// quantile of sorted xs, nearest rank.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(q*float64(len(xs))+0.5) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}
