// Command bench runs Tributary and Debezium (defaults and tuned) one after the other on
// identical data against the local PostgreSQL and Kafka of `make services-up`, and reports
// events/s, CPU seconds per million events, peak RSS, latency and the ratios between them,
// plus the ceiling Kafka's own producer-perf-test reaches with the same records. It is what
// `make bench` runs; README.md ("Benchmarks") describes the method.
//
// Every size is a flag with an environment default (BENCH_ROWS, BENCH_LATENCY_SECONDS, ...),
// so `make bench-quick` is the same run, small. Output: a Markdown table on stdout and
// integration/bench/results/bench-<time>.json when the load average at the start was below
// BENCH_QUIET_LOAD per core (a quiet machine), else $TMPDIR/tributary-bench/bench-<time>.json.
// Scratch files (configs, logs) go to integration/bench/results/<time>.tmp/, kept only when a
// run fails.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	pgAdminURL = "postgres://postgres:postgres@127.0.0.1:5432/postgres"
	kafkaAddr  = "127.0.0.1:9092"
)

// params are the knobs of one benchmark run.
type params struct {
	Rows           int      `json:"rows"`            // backfill rows and streaming changes
	LatencySeconds int      `json:"latency_seconds"` // length of the steady-load phase
	Rate           int      `json:"rate"`            // changes/s during the latency phase
	Partitions     int      `json:"partitions"`      // of every benchmark topic
	JVMHeap        string   `json:"jvm_heap"`        // -Xms and -Xmx of the Debezium JVM
	Systems        []string `json:"systems"`
	Scenarios      []string `json:"scenarios"`
	ParallelTables int      `json:"parallel_tables"` // backfill-parallel: tables the rows are split over
	SnapshotRate   int      `json:"snapshot_rate"`   // snapshot-latency: changes/s while the snapshot runs
	QuietLoad      float64  `json:"quiet_load"`      // load average per core below which results/ keeps the JSON
	Repeat         int      `json:"repeat"`          // runs of each system in the backfill, streaming and latency scenarios
	BigTxRows      int      `json:"bigtx_rows"`      // bigtx: changes of the one source transaction (the curve's largest)
	LargeRows      int      `json:"large_rows"`      // large: rows inserted (fewer above largeRowBytes a row: largeRowsAt)
	LargeBytes     int      `json:"large_bytes"`     // large: bytes of each row's text (the curve's largest)
	FleetPipelines int      `json:"fleet_pipelines"` // fleet: pipelines (processes) side by side (the curve's largest)
	FleetSeconds   int      `json:"fleet_seconds"`   // fleet: length of the idle and of the loaded phase
	// The curves: each size the scenario runs at, ascending (BENCH_BIGTX_ROWS, ...).
	BigTxCurve []int `json:"bigtx_curve,omitempty"`
	LargeCurve []int `json:"large_curve,omitempty"`
	FleetCurve []int `json:"fleet_curve,omitempty"`

	// manytables (manytables.go).
	Tables            []int  `json:"tables"`             // table counts measured (one table is always measured too)
	ManyTablesChanges int    `json:"manytables_changes"` // changes spread over the tables for CPU per event
	ManyTablesTopics  string `json:"manytables_topics"`  // "table" (a topic each) or "one" (every table routed to one topic)

	repo     string // repository root
	binary   string // bin/tributary
	baseline string // BENCH_BASELINE: another build of Tributary, run as tributary-baseline
	scratch  string // per-run scratch dir
	results  string
	keep     bool
}

var (
	allSystems   = []string{sysTributary, sysTributaryEOS, sysOneCore, sysAvro, sysDebeziumDefault, sysDebeziumTuned}
	allScenarios = []string{scBackfill, scBackfillMariaDB, scStreaming, scStreamingMariaDB, scLatency, scLatencyMariaDB, scBackfillMongoDB, scStreamingMongoDB, scBigTx, scBigTxMariaDB, scLarge, scLargeMariaDB, scParallel, scSnapLatency, scFleet, scManyTables, scManyTablesMariaDB, scCeiling}
)

const (
	sysTributary       = "tributary"
	sysTributaryEOS    = "tributary-exactly-once" // delivery: exactly_once, read read_committed
	sysBaseline        = "tributary-baseline"     // BENCH_BASELINE's binary, at_least_once (make bench-baseline)
	sysOneCore         = "tributary-gomaxprocs1"  // GOMAXPROCS=1, the streaming scenarios only: one core against two
	sysAvro            = "tributary-avro"         // format.key/value avro through the registry at registryURL: backfill and streaming, both sources
	sysDebeziumDefault = "debezium-default"
	sysDebeziumTuned   = "debezium-tuned"
	sysCeiling         = "producer-perf-test"

	scBackfill  = "backfill"
	scStreaming = "streaming"
	scLatency   = "latency"
	// The streaming scenarios on MariaDB: the same table, batches and sizes.
	scStreamingMariaDB = "streaming-mariadb"
	scLatencyMariaDB   = "latency-mariadb"
	scCeiling          = "ceiling" // not a scenario of its own in the output: producer-perf-test rows
	// MongoDB (mongo-java-server), Tributary and the source ceilings only: see mongo.go.
	scBackfillMongoDB  = "backfill-mongodb"
	scStreamingMongoDB = "streaming-mongodb"

	// The streaming scenarios with every change in one source transaction of BENCH_BIGTX_ROWS.
	scBigTx        = "bigtx"
	scBigTxMariaDB = "bigtx-mariadb"

	// The streaming scenarios with rows of BENCH_LARGE_BYTES of text (TOASTed on PostgreSQL,
	// LONGTEXT on MariaDB), BENCH_LARGE_ROWS inserts in transactions of largePerTx.
	scLarge        = "large"
	scLargeMariaDB = "large-mariadb"

	// Snapshots, Tributary only: see snapshot.go.
	scBackfillMariaDB = "backfill-mariadb"  // the backfill scenario on MariaDB
	scParallel        = "backfill-parallel" // the same rows in 1 table and in N, parallelism 1…N
	scSnapLatency     = "snapshot-latency"  // stream latency while a table snapshots on demand
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil && v > 0 {
		return v
	}
	return def
}

func envStr(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "binlog-read" { // the binlog source ceiling (source.go)
		if err := binlogRead(os.Args[2:]); err != nil {
			fail(err)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "latency-floor" { // the latency floors (floor.go)
		if err := latencyFloorMain(os.Args[2:]); err != nil {
			fail(err)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "mongo-read" { // the MongoDB source ceilings (mongo.go)
		if err := mongoReadMain(os.Args[2:]); err != nil {
			fail(err)
		}
		return
	}
	var p params
	var systems, scenarios, bigtxSizes, largeSizes, fleetSizes, plotFrom string
	flag.IntVar(&p.Rows, "rows", envInt("BENCH_ROWS", 1_000_000), "rows backfilled and changes drained (env BENCH_ROWS); rounded to a multiple of 100")
	flag.IntVar(&p.LatencySeconds, "latency-seconds", envInt("BENCH_LATENCY_SECONDS", 60), "length of the steady load (env BENCH_LATENCY_SECONDS)")
	flag.IntVar(&p.Rate, "rate", envInt("BENCH_RATE", 10_000), "changes/s of the steady load (env BENCH_RATE); a multiple of 100")
	flag.IntVar(&p.Partitions, "partitions", envInt("BENCH_PARTITIONS", 3), "partitions of each benchmark topic (env BENCH_PARTITIONS)")
	flag.StringVar(&p.JVMHeap, "jvm-heap", envStr("BENCH_JVM_HEAP", "1g"), "fixed heap (-Xms = -Xmx) of the Debezium JVM (env BENCH_JVM_HEAP)")
	flag.StringVar(&systems, "systems", envStr("BENCH_SYSTEMS", strings.Join(allSystems, ",")), "systems to run (env BENCH_SYSTEMS)")
	flag.StringVar(&scenarios, "scenarios", envStr("BENCH_SCENARIOS", strings.Join(allScenarios, ",")), "scenarios to run (env BENCH_SCENARIOS)")
	flag.IntVar(&p.ParallelTables, "parallel-tables", envInt("BENCH_PARALLEL_TABLES", 4), "backfill-parallel: tables the rows are split over (env BENCH_PARALLEL_TABLES)")
	flag.IntVar(&p.SnapshotRate, "snapshot-rate", envInt("BENCH_SNAPSHOT_RATE", 5_000), "snapshot-latency: changes/s streamed while the table snapshots (env BENCH_SNAPSHOT_RATE); a multiple of 100")
	flag.Float64Var(&p.QuietLoad, "quiet-load", envFloat("BENCH_QUIET_LOAD", 1.0), "1-minute load average per core at the start below which the JSON goes to integration/bench/results/ (env BENCH_QUIET_LOAD)")
	flag.IntVar(&p.Repeat, "repeat", envInt("BENCH_REPEAT", 1), "runs of each system in each backfill, streaming and latency scenario, in alternating order; the report and its targets take each figure's median (env BENCH_REPEAT)")
	flag.StringVar(&bigtxSizes, "bigtx-rows", envStr("BENCH_BIGTX_ROWS", "100000,1000000,3000000"), "bigtx and bigtx-mariadb: changes in the one source transaction, a comma-separated list for a curve with a run at each (env BENCH_BIGTX_ROWS); each rounded to a multiple of 100")
	flag.IntVar(&p.LargeRows, "large-rows", envInt("BENCH_LARGE_ROWS", 5000), "large and large-mariadb: rows inserted, fewer above 100,000 bytes a row so that the bytes stay those of 100,000-byte rows (env BENCH_LARGE_ROWS); rounded to a multiple of 10")
	flag.StringVar(&largeSizes, "large-bytes", envStr("BENCH_LARGE_BYTES", "10000,100000,1000000"), "large and large-mariadb: bytes of text in each row, a comma-separated list for a curve (env BENCH_LARGE_BYTES); each rounded to a multiple of 32")
	flag.StringVar(&fleetSizes, "fleet-pipelines", envStr("BENCH_FLEET_PIPELINES", "1,2,4,8"), "fleet: pipelines side by side, each its own process, database and slot, a comma-separated list for a curve (env BENCH_FLEET_PIPELINES)")
	flag.StringVar(&plotFrom, "plot", "", "write the curves' PNGs and tables of this results JSON (into plots/ beside it) and exit, running nothing")
	flag.IntVar(&p.FleetSeconds, "fleet-seconds", envInt("BENCH_FLEET_SECONDS", 30), "fleet: seconds of idle and of 100 changes/s per pipeline (env BENCH_FLEET_SECONDS)")
	tables := flag.String("tables", envStr("BENCH_TABLES", "100,1000,10000"), "manytables and manytables-mariadb: table counts, comma-separated (env BENCH_TABLES); one table is measured too, as the reference")
	flag.IntVar(&p.ManyTablesChanges, "manytables-changes", envInt("BENCH_MANYTABLES_CHANGES", 50_000), "manytables and manytables-mariadb: changes spread over the tables while CPU per event is measured (env BENCH_MANYTABLES_CHANGES)")
	flag.StringVar(&p.ManyTablesTopics, "manytables-topics", envStr("BENCH_MANYTABLES_TOPICS", "one"), "manytables and manytables-mariadb: table (a topic per table) or one (every table routed to one topic, transforms.reroute) (env BENCH_MANYTABLES_TOPICS)")
	flag.BoolVar(&p.keep, "keep", os.Getenv("BENCH_KEEP") != "", "keep scratch files, databases and topics (env BENCH_KEEP)")
	flag.StringVar(&p.baseline, "baseline", os.Getenv("BENCH_BASELINE"), "another tributary binary (say, an earlier commit's) run as "+sysBaseline+" right after tributary in every scenario, for a before/after ratio from one run (env BENCH_BASELINE)")
	flag.Parse()

	var bad []error
	p.BigTxCurve = parseSizes("BENCH_BIGTX_ROWS", bigtxSizes, func(n int) int { return max(100, n/100*100) }, &bad)
	p.LargeCurve = parseSizes("BENCH_LARGE_BYTES", largeSizes, func(n int) int { return max(32, n/32*32) }, &bad)
	p.FleetCurve = parseSizes("BENCH_FLEET_PIPELINES", fleetSizes, func(n int) int { return n }, &bad)
	if err := errors.Join(bad...); err != nil {
		fail(err)
	}
	p.BigTxRows, p.LargeBytes, p.FleetPipelines = slices.Max(p.BigTxCurve), slices.Max(p.LargeCurve), slices.Max(p.FleetCurve)
	if plotFrom != "" {
		wd, _ := os.Getwd()
		if err := plotResults(plotFrom, filepath.Join(findRepo(wd), "integration", "bench"), os.Stdout); err != nil {
			fail(err)
		}
		return
	}

	p.Rows = max(100, p.Rows/100*100)
	p.Rate = max(100, p.Rate/100*100)
	p.LargeRows = max(largePerTx, p.LargeRows/largePerTx*largePerTx)
	p.LargeBytes = max(32, p.LargeBytes/32*32)
	p.SnapshotRate = max(100, p.SnapshotRate/100*100)
	p.ParallelTables = max(2, p.ParallelTables)
	p.Repeat = max(1, p.Repeat)
	if p.ManyTablesTopics != "table" && p.ManyTablesTopics != "one" {
		fail(fmt.Errorf("BENCH_MANYTABLES_TOPICS: %q is neither table nor one", p.ManyTablesTopics))
	}
	for _, x := range strings.Split(*tables, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil || n < 1 || n > 99_999 {
			fail(fmt.Errorf("BENCH_TABLES: %q is not a table count from 1 to 99999", x))
		}
		p.Tables = append(p.Tables, n)
	}
	known := allSystems
	if p.baseline != "" {
		known = append(slices.Clone(allSystems), sysBaseline)
		if !strings.Contains(systems, sysBaseline) {
			systems += "," + sysBaseline
		}
	}
	p.Systems = splitList(systems, known)
	if i, j := slices.Index(p.Systems, sysTributary), slices.Index(p.Systems, sysBaseline); i >= 0 && j > i+1 {
		// Back to back: the before/after ratio is not a drift of the load.
		p.Systems = slices.Insert(slices.Delete(p.Systems, j, j+1), i+1, sysBaseline)
	}
	p.Scenarios = splitList(scenarios, allScenarios)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	slog.SetDefault(log)

	wd, _ := os.Getwd()
	p.repo = findRepo(wd)
	p.binary = filepath.Join(p.repo, "bin", "tributary")
	p.results = filepath.Join(p.repo, "integration", "bench", "results")
	stamp := time.Now().UTC().Format("20060102T150405Z")
	p.scratch = filepath.Join(p.results, stamp+".tmp")
	if err := os.MkdirAll(p.scratch, 0o755); err != nil {
		fail(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b := &bench{p: p, log: log, machine: describeMachine(ctx)}
	err := b.run(ctx)
	b.machine.LoadAvgEnd = loadAvg()
	dir := p.results
	if !b.machine.quiet(p.QuietLoad) {
		dir = filepath.Join(os.TempDir(), "tributary-bench")
	}
	out := filepath.Join(dir, "bench-"+stamp+".json")
	report := b.report()
	report.File = out
	fmt.Print(report.markdown())
	if md, perr := writeCurves(report, filepath.Join(dir, "plots"), filepath.Join(p.repo, "integration", "bench")); perr != nil {
		log.Error("write plots", "err", perr)
	} else {
		fmt.Print(md)
	}
	if werr := os.MkdirAll(dir, 0o755); werr != nil {
		log.Error("write results", "err", werr)
	} else if werr := report.write(out); werr != nil {
		log.Error("write results", "err", werr)
	} else {
		log.Info("results written", "file", out)
	}
	if err != nil {
		log.Error("benchmark failed; scratch files kept", "dir", p.scratch, "err", err)
		os.Exit(1)
	}
	if !p.keep {
		os.RemoveAll(p.scratch)
	}
}

// parseSizes reads a curve's comma-separated sizes (a single one is a curve of one point),
// each rounded by round, ascending and without repeats; a size that is not a positive whole
// number is added to bad, named with the variable.
func parseSizes(name, s string, round func(int) int, bad *[]error) []int {
	var out []int
	before := len(*bad)
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(strings.ReplaceAll(x, "_", "")); x == "" {
			continue
		}
		n, err := strconv.Atoi(x)
		if err != nil || n <= 0 {
			*bad = append(*bad, fmt.Errorf("%s: %q is not a positive whole number (a comma-separated list of them: %q)", name, x, s))
			continue
		}
		out = append(out, round(n))
	}
	if len(out) == 0 {
		if before == len(*bad) {
			*bad = append(*bad, fmt.Errorf("%s: no size in %q", name, s))
		}
		return []int{1}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func splitList(s string, known []string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x == "" {
			continue
		}
		if !slices.Contains(known, x) {
			fail(fmt.Errorf("unknown %q (known: %s)", x, strings.Join(known, ", ")))
		}
		if slices.Contains(out, x) {
			continue // once: BENCH_REPEAT repeats
		}
		out = append(out, x)
	}
	return out
}

// findRepo walks up to the directory holding go.mod.
func findRepo(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			fail(fmt.Errorf("no go.mod above %s: run from the repository", dir))
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(2)
}
