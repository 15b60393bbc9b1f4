package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// machine says where the numbers come from; absolute times on a shared machine are noise,
// the ratios are the result.
type machine struct {
	Date       string  `json:"date"`
	CPU        string  `json:"cpu"`
	Cores      int     `json:"cores"`
	MemoryGB   float64 `json:"memory_gb"`
	Kernel     string  `json:"kernel"`
	LoadAvg    string  `json:"load_avg_at_start"` // 1, 5 and 15 minutes
	LoadAvgEnd string  `json:"load_avg_at_end"`
	Go         string  `json:"go"`
	Java       string  `json:"java"`
	Postgres   string  `json:"postgres"`
	Kafka      string  `json:"kafka"`
	Debezium   string  `json:"debezium"`
}

func describeMachine(ctx context.Context) machine {
	m := machine{Date: time.Now().UTC().Format(time.RFC3339), Cores: runtime.NumCPU(), Go: runtime.Version(),
		Kafka: "4.4.0 (one broker, KRaft)", Debezium: "3.6.1.Final (embedded engine, Kafka producer 4.3.0)"}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		fmt.Sscanf(strings.TrimPrefix(strings.SplitN(string(b), "\n", 2)[0], "MemTotal:"), "%f", &kb)
		m.MemoryGB = float64(int(kb/1024/1024*10)) / 10
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.LoadAvg = loadAvg()
	if out, err := exec.CommandContext(ctx, "java", "-version").CombinedOutput(); err == nil {
		m.Java = strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)[0]
	}
	if c, err := connect(ctx, "postgres"); err == nil {
		c.QueryRow(ctx, "SHOW server_version").Scan(&m.Postgres)
		c.Close(ctx)
	}
	return m
}

// loadAvg is the 1, 5 and 15-minute load average, "" where /proc has none.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// quiet reports whether the 1-minute load average at the start was below perCore per core:
// only such runs are kept in integration/bench/results/.
func (m machine) quiet(perCore float64) bool {
	var load float64
	if _, err := fmt.Sscanf(m.LoadAvg, "%f", &load); err != nil || m.Cores <= 0 {
		return false
	}
	return load/float64(m.Cores) < perCore
}

// target is one of the performance targets, checked against this run.
type target struct {
	Target string   `json:"target"`
	Value  *float64 `json:"value"`
	Met    *bool    `json:"met"`
}

type results struct {
	Machine machine  `json:"machine"`
	Params  params   `json:"params"`
	Runs    []run    `json:"runs"`
	Targets []target `json:"targets"`
	File    string   `json:"-"` // where the JSON goes
}

func (b *bench) report() results {
	return results{Machine: b.machine, Params: b.p, Runs: b.runs, Targets: b.targets()}
}

func (b *bench) find(sys, sc string) *run { return medianRun(b.runs, sys, sc) }

// medianRun is medianAt the largest size sc ran at: a curve's targets are checked at its
// largest point, the one a bound on memory or rate is hardest to hold at.
func medianRun(runs []run, sys, sc string) *run {
	return medianAt(runs, sys, sc, largestSize(runs, sc))
}

// largestSize is the largest Size of sc's runs, 0 where sc is no curve.
func largestSize(runs []run, sc string) int {
	size := 0
	for _, r := range runs {
		if r.Scenario == sc {
			size = max(size, r.Size)
		}
	}
	return size
}

// medianAt is sys's run of sc at size, or with BENCH_REPEAT the median of its runs that
// did not fail: events/s, CPU per event, MB/s and the latency percentiles each the median
// of the runs' (the mean of the middle two for an even count), peak RSS and the largest
// latency the highest, since a memory or latency bound has to hold in every run. nil when
// none ran.
func medianAt(runs []run, sys, sc string, size int) *run {
	ok := okRuns(runs, sys, sc, size)
	switch len(ok) {
	case 0:
		return nil
	case 1:
		return ok[0]
	}
	m := *ok[0]
	m.Rep, m.Note = 0, ""
	m.EventsPerSec = *middle(ok, func(r *run) *float64 { return &r.EventsPerSec })
	m.CPUSecPerMillion = middle(ok, func(r *run) *float64 { return r.CPUSecPerMillion })
	m.MBPerSec = middle(ok, func(r *run) *float64 { return r.MBPerSec })
	m.CorePercent = middle(ok, func(r *run) *float64 { return r.CorePercent })
	m.P50Ms = middle(ok, func(r *run) *float64 { return r.P50Ms })
	m.P99Ms = middle(ok, func(r *run) *float64 { return r.P99Ms })
	m.PeakRSSMB = highest(ok, func(r *run) *float64 { return r.PeakRSSMB })
	m.MaxMs = highest(ok, func(r *run) *float64 { return r.MaxMs })
	return &m
}

// okRuns are sys's runs of sc at size that did not fail.
func okRuns(runs []run, sys, sc string, size int) []*run {
	var ok []*run
	for i := range runs {
		if r := &runs[i]; r.System == sys && r.Scenario == sc && r.Size == size && r.Error == "" {
			ok = append(ok, r)
		}
	}
	return ok
}

// values are f of each run that has it, sorted.
func values(runs []*run, f func(*run) *float64) []float64 {
	var xs []float64
	for _, r := range runs {
		if v := f(r); v != nil {
			xs = append(xs, *v)
		}
	}
	slices.Sort(xs)
	return xs
}

func middle(runs []*run, f func(*run) *float64) *float64 {
	xs := values(runs, f)
	if len(xs) == 0 {
		return nil
	}
	n := len(xs)
	return ptr((xs[(n-1)/2] + xs[n/2]) / 2)
}

func highest(runs []*run, f func(*run) *float64) *float64 {
	xs := values(runs, f)
	if len(xs) == 0 {
		return nil
	}
	return ptr(xs[len(xs)-1])
}

// targets evaluates the performance targets where this run has the numbers.
func (b *bench) targets() []target {
	var ts []target
	add := func(name string, v *float64, ok func(float64) bool) {
		t := target{Target: name, Value: v}
		if v != nil {
			met := ok(*v)
			t.Met = &met
		}
		ts = append(ts, t)
	}
	ratio := func(sys, sc string, f func(*run) *float64, inverse bool) *float64 {
		a, o := b.find(sysTributary, sc), b.find(sys, sc)
		if a == nil || o == nil {
			return nil
		}
		x, y := f(a), f(o)
		if x == nil || y == nil || *x == 0 || *y == 0 {
			return nil
		}
		if inverse {
			return ptr(*y / *x)
		}
		return ptr(*x / *y)
	}
	rate := func(r *run) *float64 { return &r.EventsPerSec }
	cpu := func(r *run) *float64 { return r.CPUSecPerMillion }
	rss := func(r *run) *float64 { return r.PeakRSSMB }
	p99 := func(r *run) *float64 { return r.P99Ms }
	tributary := func(sc string, f func(*run) *float64) *float64 { // f of Tributary's run of sc
		if r := b.find(sysTributary, sc); r != nil {
			return f(r)
		}
		return nil
	}
	atLeast := func(x float64) func(float64) bool { return func(v float64) bool { return v >= x } }
	atMost := func(x float64) func(float64) bool { return func(v float64) bool { return v <= x } }

	add("streaming events/s ≥ 3× debezium-default", ratio(sysDebeziumDefault, scStreaming, rate, false), atLeast(3))
	add("streaming events/s ≥ 1.5× debezium-tuned", ratio(sysDebeziumTuned, scStreaming, rate, false), atLeast(1.5))
	add("backfill events/s ≥ 2× debezium-tuned", ratio(sysDebeziumTuned, scBackfill, rate, false), atLeast(2))
	// Tributary's own rates and CPU per event, whatever the other systems do.
	add("backfill ≥ 200,000 rows/s", tributary(scBackfill, rate), atLeast(200_000))
	add("backfill (MariaDB) ≥ 150,000 rows/s", tributary(scBackfillMariaDB, rate), atLeast(150_000))
	add("streaming ≤ 6 CPU s per million events", tributary(scStreaming, cpu), atMost(6))
	add("backfill ≤ 5 CPU s per million rows", tributary(scBackfill, cpu), atMost(5))
	add(fmt.Sprintf("stream latency p99 ≤ 100 ms at %d changes/s while a %d-row table snapshots", b.p.SnapshotRate, b.p.Rows), tributary(scSnapLatency+" stream", p99), atMost(100))
	for _, sc := range []string{scBackfill, scStreaming} {
		add(sc+" CPU s/M ≤ 1/3 of debezium-tuned (debezium-tuned ÷ tributary ≥ 3)", ratio(sysDebeziumTuned, sc, cpu, true), atLeast(3))
	}
	var peak *float64
	for _, sc := range []string{scBackfill, scStreaming, scLatency, scBackfillMariaDB, scStreamingMariaDB, scLatencyMariaDB} {
		if r := b.find(sysTributary, sc); r != nil && r.PeakRSSMB != nil && (peak == nil || *r.PeakRSSMB > *peak) {
			peak = r.PeakRSSMB
		}
	}
	add("peak RSS ≤ 150 MB", peak, atMost(150))
	for _, sys := range []string{sysDebeziumDefault, sysDebeziumTuned} {
		for _, sc := range []string{scBackfill, scStreaming} {
			add(fmt.Sprintf("%s peak RSS ≤ 1/8 of %s (%s ÷ tributary ≥ 8)", sc, sys, sys), ratio(sys, sc, rss, true), atLeast(8))
		}
	}
	add(fmt.Sprintf("latency p99 ≤ 50 ms at %d changes/s", b.p.Rate), tributary(scLatency, p99), atMost(50))
	add("streaming ≥ 70 % of the producer-perf-test ceiling", b.share(scStreaming, sysCeiling), atLeast(0.7))
	// Against the lower ceiling: a source slower than the producer bounds the stream first.
	for _, sc := range []string{scStreaming, scStreamingMariaDB} {
		src := sourceCeiling(sc)
		add(fmt.Sprintf("%s ≥ 70 %% of the lower ceiling (tributary ÷ lower of %s and %s)", sc, sysCeiling, src), b.share(sc, sysCeiling, src), atLeast(0.7))
	}
	add("streaming-mariadb events/s ≥ 5× debezium-tuned", ratio(sysDebeziumTuned, scStreamingMariaDB, rate, false), atLeast(5))
	add("streaming-mariadb ≥ 100,000 events/s", tributary(scStreamingMariaDB, rate), atLeast(100_000))
	add(fmt.Sprintf("latency-mariadb p99 ≤ 50 ms at %d changes/s", b.p.Rate), tributary(scLatencyMariaDB, p99), atMost(50))
	// exactly_once against at_least_once in the same run: what the transactions cost.
	add("exactly_once streaming ≥ 90 % of at_least_once (tributary-exactly-once ÷ tributary)", ratio(sysTributaryEOS, scStreaming, rate, true), atLeast(0.9))
	var eosP99 *float64
	if r := b.find(sysTributaryEOS, scLatency); r != nil {
		eosP99 = r.P99Ms
	}
	add(fmt.Sprintf("exactly_once latency p99 ≤ 100 ms at %d changes/s (visible to read_committed)", b.p.Rate), eosP99, atMost(100))
	// MongoDB: no Debezium to compare with on mongo-java-server, so the bare readers of the
	// same server and driver are the measure.
	add("backfill-mongodb ≥ 70 % of the find-reader ceiling (tributary ÷ "+sysFindReader+")", b.share(scBackfillMongoDB, sysFindReader), atLeast(0.7))
	// Like with like: the same reads in Tributary's chunks (a server without a range index on
	// _id scans the collection for each), beside the one bare find above.
	add("backfill-mongodb ≥ 70 % of the paged find-reader ceiling (tributary ÷ "+sysPagedReader+")", b.share(scBackfillMongoDB, sysPagedReader), atLeast(0.7))
	add("streaming-mongodb ≥ 70 % of the change-stream-reader ceiling (tributary ÷ "+sysStreamReader+")", b.share(scStreamingMongoDB, sysStreamReader), atLeast(0.7))
	var mongoPeak *float64
	for _, sc := range []string{scBackfillMongoDB, scStreamingMongoDB} {
		if r := b.find(sysTributary, sc); r != nil && r.PeakRSSMB != nil && (mongoPeak == nil || *r.PeakRSSMB > *mongoPeak) {
			mongoPeak = r.PeakRSSMB
		}
	}
	add("backfill-mongodb and streaming-mongodb peak RSS ≤ 100 MB", mongoPeak, atMost(100))
	// One source transaction of BENCH_BIGTX_ROWS changes: memory stays flat whatever its size,
	// and the rate stays near that of the same changes in small transactions.
	for _, sys := range []string{sysTributary, sysTributaryEOS} {
		var bigPeak *float64
		for _, sc := range []string{scBigTx, scBigTxMariaDB} {
			if r := b.find(sys, sc); r != nil && r.PeakRSSMB != nil && (bigPeak == nil || *r.PeakRSSMB > *bigPeak) {
				bigPeak = r.PeakRSSMB
			}
		}
		if bigPeak != nil {
			add(fmt.Sprintf("%s: bigtx and bigtx-mariadb (%d changes in one transaction) peak RSS < 200 MB", sys, b.p.BigTxRows), bigPeak, func(v float64) bool { return v < 200 })
		}
		for _, pair := range [][2]string{{scBigTx, scStreaming}, {scBigTxMariaDB, scStreamingMariaDB}} {
			big, small := b.find(sys, pair[0]), b.find(sys, pair[1])
			if big == nil || small == nil || small.EventsPerSec == 0 {
				continue
			}
			add(fmt.Sprintf("%s: %s events/s ≥ 70 %% of %s's (%s ÷ %s)", sys, pair[0], pair[1], pair[0], pair[1]), ptr(big.EventsPerSec/small.EventsPerSec), atLeast(0.7))
		}
	}
	// Large values: MB/s against the producer's with the same records (the same size).
	for _, sc := range []string{scLarge, scLargeMariaDB} {
		add(fmt.Sprintf("%s (%d-byte text) MB/s ≥ 70 %% of the producer-perf-test ceiling with the same records", sc, b.p.LargeBytes), b.share(sc, sysCeiling), atLeast(0.7))
	}
	// A fleet of small pipelines: what each costs while idle.
	if r := b.find(sysTributary, fleetIdleLabel); r != nil {
		add(fmt.Sprintf("fleet: an idle pipeline's RSS ≤ 15 MB (the largest of %d)", b.p.FleetPipelines), r.PeakRSSMB, atMost(15))
		add(fmt.Sprintf("fleet: an idle pipeline's share of the fleet's memory (PSS) ≤ 15 MB (the largest of %d)", b.p.FleetPipelines), r.PSSMB, atMost(15))
		add(fmt.Sprintf("fleet: an idle pipeline's CPU ≤ 0.5 %% of a core (the largest of %d)", b.p.FleetPipelines), r.CorePercent, atMost(0.5))
	}
	b.manyTablesTargets(add)
	// Avro beside JSON where both ran: smaller records, so no slower and no dearer.
	for _, sc := range []string{scBackfill, scBackfillMariaDB, scStreaming, scStreamingMariaDB} {
		if b.find(sysAvro, sc) != nil {
			add(sc+": tributary-avro events/s ≥ tributary's (tributary-avro ÷ tributary)", ratio(sysAvro, sc, rate, true), atLeast(1))
			add(sc+": tributary-avro CPU s/M ≤ tributary's (tributary-avro ÷ tributary)", ratio(sysAvro, sc, cpu, true), atMost(1))
		}
	}
	// make bench-baseline: today's build against another one, scenario by scenario.
	for _, sc := range allScenarios {
		if b.find(sysBaseline, sc) != nil {
			add(sc+": events/s not below 0.9× tributary-baseline's (tributary ÷ tributary-baseline)", ratio(sysBaseline, sc, rate, false), atLeast(0.9))
			add(sc+": CPU s/M not above 1.1× tributary-baseline's (tributary ÷ tributary-baseline)", ratio(sysBaseline, sc, cpu, false), atMost(1.1))
		}
	}
	return ts
}

// sourceCeiling is the system that reads scenario sc's source alone.
func sourceCeiling(sc string) string {
	if sc == scStreamingMariaDB {
		return sysBinlogReader
	}
	return sysRecvlogical
}

// share is Tributary's events/s in scenario sc as a fraction of the lowest events/s of the
// ceilings; nil unless every one of them ran.
func (b *bench) share(sc string, ceilings ...string) *float64 {
	t := b.find(sysTributary, sc)
	if t == nil {
		return nil
	}
	lowest := 0.0
	for _, sys := range ceilings {
		c := b.find(sys, sc)
		if c == nil || c.EventsPerSec == 0 {
			return nil
		}
		if lowest == 0 || c.EventsPerSec < lowest {
			lowest = c.EventsPerSec
		}
	}
	return ptr(t.EventsPerSec / lowest)
}

func (r results) write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func num(f *float64, format string) string {
	if f == nil {
		return "–"
	}
	return fmt.Sprintf(format, *f)
}

// markdown renders the runs, Tributary's ratios and the targets.
func (r results) markdown() string {
	var sb strings.Builder
	m := r.Machine
	fmt.Fprintf(&sb, "\n## Tributary vs Debezium — %s\n\n", m.Date)
	fmt.Fprintf(&sb, "%d rows / changes, latency %d s at %d changes/s, %d partitions, Debezium heap %s. Machine: %s, %d cores, %.0f GB, load %s at start and %s at the end; PostgreSQL %s, Kafka %s, %s, %s.\n\n",
		r.Params.Rows, r.Params.LatencySeconds, r.Params.Rate, r.Params.Partitions, r.Params.JVMHeap,
		m.CPU, m.Cores, m.MemoryGB, m.LoadAvg, m.LoadAvgEnd, m.Postgres, m.Kafka, m.Java, m.Go)
	if m.quiet(r.Params.QuietLoad) {
		fmt.Fprintf(&sb, "A quiet machine (load below %.1f per core at the start): the JSON is %s.\n\n", r.Params.QuietLoad, r.File)
	} else {
		fmt.Fprintf(&sb, "NOT a quiet machine (load %s at the start, %.1f per core or more): the figures are noise beside a quiet run's; the JSON is %s, not in integration/bench/results/.\n\n", m.LoadAvg, r.Params.QuietLoad, r.File)
	}
	sb.WriteString("| scenario | system | events | events/s | CPU s / M events | peak RSS MB | p50 ms | p99 ms | max ms | Tributary ÷ this: events/s · CPU · RSS | note |\n")
	sb.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	// Each run beside Tributary's run of the same scenario and repeat; a run made once
	// (a ceiling) beside Tributary's median.
	sameRep := func(sc string, size, rep int) *run {
		if rep == 0 {
			return medianAt(r.Runs, sysTributary, sc, size)
		}
		for i := range r.Runs {
			if x := &r.Runs[i]; x.System == sysTributary && x.Scenario == sc && x.Size == size && x.Rep == rep && x.Error == "" {
				return x
			}
		}
		return nil
	}
	div := func(a, b *float64) string {
		if a == nil || b == nil || *b == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", *a / *b)
	}
	versus := func(t, x *run) string {
		if t == nil || x.System == sysTributary {
			return ""
		}
		return fmt.Sprintf("%s× · %s · %s", div(&t.EventsPerSec, &x.EventsPerSec), div(t.CPUSecPerMillion, x.CPUSecPerMillion), div(t.PeakRSSMB, x.PeakRSSMB))
	}
	label := func(x run) string {
		if x.Rep > 0 {
			return fmt.Sprintf("%s #%d", x.System, x.Rep)
		}
		return x.System
	}
	for _, x := range r.Runs {
		if x.Error != "" {
			fmt.Fprintf(&sb, "| %s | %s | failed: %s | | | | | | | | |\n", pointLabel(x.Scenario, x.Size), label(x), strings.ReplaceAll(strings.SplitN(x.Error, "\n", 2)[0], "|", "/"))
			continue
		}
		fmt.Fprintf(&sb, "| %s | %s | %d | %.0f | %s | %s | %s | %s | %s | %s | %s |\n", pointLabel(x.Scenario, x.Size), label(x), x.Events, x.EventsPerSec,
			num(x.CPUSecPerMillion, "%.1f"), num(x.PeakRSSMB, "%.0f"), num(x.P50Ms, "%.0f"), num(x.P99Ms, "%.0f"), num(x.MaxMs, "%.0f"), versus(sameRep(x.Scenario, x.Size, x.Rep), &x), x.Note)
	}
	r.writeMedians(&sb, versus)
	sb.WriteString(manyTablesMarkdown(r.Runs))
	sb.WriteString("\nTargets")
	if slices.ContainsFunc(r.Runs, func(x run) bool { return x.Rep > 0 }) {
		sb.WriteString(" (of the medians)")
	}
	sb.WriteString(":\n\n")
	for _, t := range r.Targets {
		mark := "n/a"
		if t.Met != nil {
			mark = map[bool]string{true: "met", false: "NOT met"}[*t.Met]
		}
		fmt.Fprintf(&sb, "- %s: %s (%s)\n", t.Target, mark, num(t.Value, "%.2f"))
	}
	return sb.String()
}

// writeMedians adds, when BENCH_REPEAT ran systems more than once, each system's median
// of each scenario (medianRun: what the targets are checked against) with the lowest and
// highest events/s and CPU per event of its runs.
func (r results) writeMedians(sb *strings.Builder, versus func(t, x *run) string) {
	type pair struct {
		sys, sc string
		size    int
	}
	var pairs []pair
	for _, x := range r.Runs {
		if p := (pair{x.System, x.Scenario, x.Size}); x.Rep > 0 && !slices.Contains(pairs, p) {
			pairs = append(pairs, p)
		}
	}
	if len(pairs) == 0 {
		return
	}
	fmt.Fprintf(sb, "\nMedians of %d runs each, in alternating order (lowest–highest beside them):\n\n", r.Params.Repeat)
	sb.WriteString("| scenario | system | runs | events/s | CPU s / M events | peak RSS MB (highest) | p99 ms | Tributary ÷ this: events/s · CPU · RSS |\n")
	sb.WriteString("|---|---|---:|---|---|---:|---:|---|\n")
	for _, p := range pairs {
		m := medianAt(r.Runs, p.sys, p.sc, p.size)
		if m == nil {
			fmt.Fprintf(sb, "| %s | %s | 0 | every run failed | | | | |\n", pointLabel(p.sc, p.size), p.sys)
			continue
		}
		ok := okRuns(r.Runs, p.sys, p.sc, p.size)
		// f's median (m's) with the lowest and highest of the runs.
		spread := func(f func(*run) *float64, format string) string {
			xs := values(ok, f)
			if len(xs) == 0 {
				return "–"
			}
			return fmt.Sprintf(format+" ("+format+"–"+format+")", *f(m), xs[0], xs[len(xs)-1])
		}
		fmt.Fprintf(sb, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", pointLabel(p.sc, p.size), p.sys, len(ok),
			spread(func(x *run) *float64 { return &x.EventsPerSec }, "%.0f"), spread(func(x *run) *float64 { return x.CPUSecPerMillion }, "%.1f"),
			num(m.PeakRSSMB, "%.0f"), num(m.P99Ms, "%.0f"), versus(medianAt(r.Runs, sysTributary, p.sc, p.size), m))
	}
}
