package main

import (
	"bufio"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestMachineQuiet: only a run whose 1-minute load average at the start was below the
// threshold per core goes to integration/bench/results/; an unreadable load is not quiet.
func TestMachineQuiet(t *testing.T) {
	for _, c := range []struct {
		load  string
		cores int
		want  bool
	}{
		{"1.90 2.50 3.00", 2, true},  // 0.95 per core
		{"2.00 0.10 0.10", 2, false}, // 1.0 per core: not below
		{"7.40 7.00 6.00", 2, false},
		{"0.50 0.50 0.50", 0, false},
		{"", 2, false},
	} {
		if got := (machine{LoadAvg: c.load, Cores: c.cores}).quiet(1.0); got != c.want {
			t.Errorf("load %q on %d cores: quiet = %v, want %v", c.load, c.cores, got, c.want)
		}
	}
}

// TestShareOfLowerCeiling: Tributary's streaming rate is divided by the lower of the two
// ceilings of its scenario, and the share is missing unless both ran.
func TestShareOfLowerCeiling(t *testing.T) {
	b := &bench{runs: []run{
		{System: sysTributary, Scenario: scStreaming, EventsPerSec: 70_000},
		{System: sysCeiling, Scenario: scStreaming, EventsPerSec: 200_000},
		{System: sysRecvlogical, Scenario: scStreaming, EventsPerSec: 100_000},
		{System: sysTributary, Scenario: scStreamingMariaDB, EventsPerSec: 50_000},
		{System: sysCeiling, Scenario: scStreamingMariaDB, EventsPerSec: 100_000},
		{System: sysBinlogReader, Scenario: scStreamingMariaDB, Error: "failed"},
	}}
	if got := b.share(scStreaming, sysCeiling, sourceCeiling(scStreaming)); got == nil || *got != 0.7 {
		t.Errorf("streaming share = %v, want 0.7 (70,000 of the source's 100,000)", got)
	}
	if got := b.share(scStreamingMariaDB, sysCeiling, sourceCeiling(scStreamingMariaDB)); got != nil {
		t.Errorf("streaming-mariadb share = %v with the binlog reader failed, want none", *got)
	}
	if got := b.share(scStreamingMariaDB, sysCeiling); got == nil || *got != 0.5 {
		t.Errorf("streaming-mariadb producer share = %v, want 0.5", got)
	}
}

// TestBaselineTargets: with a baseline build in the run, each scenario both ran gets a
// before/after target from the two runs; a scenario only one ran gets none.
func TestBaselineTargets(t *testing.T) {
	cpu := func(v float64) *float64 { return &v }
	b := &bench{p: params{Rate: 10_000, Rows: 1000, SnapshotRate: 100}, runs: []run{
		{System: sysTributary, Scenario: scStreaming, EventsPerSec: 80_000, CPUSecPerMillion: cpu(12)},
		{System: sysBaseline, Scenario: scStreaming, EventsPerSec: 100_000, CPUSecPerMillion: cpu(10)},
		{System: sysTributary, Scenario: scBackfill, EventsPerSec: 100_000},
	}}
	got := map[string]bool{}
	for _, tg := range b.targets() {
		if strings.Contains(tg.Target, sysBaseline) {
			if tg.Met == nil {
				t.Errorf("%s: no value", tg.Target)
				continue
			}
			got[tg.Target] = *tg.Met
		}
	}
	want := map[string]bool{
		scStreaming + ": events/s not below 0.9× tributary-baseline's (tributary ÷ tributary-baseline)": false, // 0.8
		scStreaming + ": CPU s/M not above 1.1× tributary-baseline's (tributary ÷ tributary-baseline)":  false, // 1.2
	}
	if len(got) != len(want) {
		t.Fatalf("baseline targets %v, want %v", got, want)
	}
	for k, v := range want {
		if m, ok := got[k]; !ok || m != v {
			t.Errorf("%q: met %v (present %v), want %v", k, m, ok, v)
		}
	}
}

// TestMedianOfRepeats: with BENCH_REPEAT the targets are checked against each figure's
// median over the runs that did not fail (the mean of the middle two for an even count),
// peak RSS against the highest; the report shows the medians with their spread.
func TestMedianOfRepeats(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	b := &bench{p: params{Rate: 10_000, Rows: 1000, SnapshotRate: 100, Repeat: 3}, runs: []run{
		{System: sysTributary, Scenario: scBackfill, Rep: 1, EventsPerSec: 300_000, CPUSecPerMillion: f(4), PeakRSSMB: f(100)},
		{System: sysBaseline, Scenario: scBackfill, Rep: 1, EventsPerSec: 150_000, CPUSecPerMillion: f(5), PeakRSSMB: f(90)},
		{System: sysBaseline, Scenario: scBackfill, Rep: 2, EventsPerSec: 250_000, CPUSecPerMillion: f(7), PeakRSSMB: f(95)},
		{System: sysTributary, Scenario: scBackfill, Rep: 2, EventsPerSec: 100_000, CPUSecPerMillion: f(7), PeakRSSMB: f(160)},
		{System: sysTributary, Scenario: scBackfill, Rep: 3, EventsPerSec: 200_000, CPUSecPerMillion: f(6), PeakRSSMB: f(110)},
		{System: sysBaseline, Scenario: scBackfill, Rep: 3, Error: "failed"},
	}}
	want := map[string]float64{
		"backfill ≥ 200,000 rows/s":           200_000, // not 300,000: the first run alone
		"backfill ≤ 5 CPU s per million rows": 6,       // not 4
		"peak RSS ≤ 150 MB":                   160,     // the highest
		scBackfill + ": events/s not below 0.9× tributary-baseline's (tributary ÷ tributary-baseline)": 1, // 200,000 ÷ 200,000 (150,000 and 250,000)
		scBackfill + ": CPU s/M not above 1.1× tributary-baseline's (tributary ÷ tributary-baseline)":  1, // 6 ÷ 6
	}
	for _, tg := range b.targets() {
		w, ok := want[tg.Target]
		if !ok {
			continue
		}
		delete(want, tg.Target)
		if tg.Value == nil || *tg.Value != w {
			t.Errorf("%s: value %v, want %v", tg.Target, tg.Value, w)
		}
	}
	for k := range want {
		t.Errorf("no target %q", k)
	}
	md := b.report().markdown()
	for _, s := range []string{
		"| backfill | tributary #2 | 0 | 100000 | 7.0 | 160 |",
		"Medians of 3 runs",
		"| backfill | tributary | 3 | 200000 (100000–300000) | 6.0 (4.0–7.0) | 160 |",
		"| backfill | tributary-baseline | 2 | 200000 (150000–250000) | 6.0 (5.0–7.0) | 95 | – | 1.00× · 1.00 · 1.68 |",
		"| backfill | tributary-baseline #1 | 0 | 150000 | 5.0 | 90 | – | – | – | 2.00× · 0.80 · 1.11 |",
		"Targets (of the medians)",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}
}

// TestRepOrder: repeats alternate the systems' order, so a build of a before/after pair is
// not always the one that runs second.
func TestRepOrder(t *testing.T) {
	systems := []string{sysTributary, sysBaseline, sysDebeziumTuned}
	for rep, want := range map[int][]string{
		1: {sysTributary, sysBaseline, sysDebeziumTuned},
		2: {sysDebeziumTuned, sysBaseline, sysTributary},
		3: {sysTributary, sysBaseline, sysDebeziumTuned},
	} {
		if got := repOrder(systems, rep); !slices.Equal(got, want) {
			t.Errorf("rep %d: %v, want %v", rep, got, want)
		}
	}
	if systems[0] != sysTributary {
		t.Errorf("repOrder changed its argument: %v", systems)
	}
}

// TestSplitListOnce: a system named twice runs once, so BENCH_REPEAT alone decides how many
// runs each median is of.
func TestSplitListOnce(t *testing.T) {
	got := splitList(" tributary,tributary-baseline, tributary,,", []string{sysTributary, sysBaseline})
	if want := []string{sysTributary, sysBaseline}; !slices.Equal(got, want) {
		t.Errorf("splitList = %v, want %v", got, want)
	}
}

// TestMongoAndAvroTargets: the MongoDB scenarios are measured against their bare readers
// and a 100 MB bound; tributary-avro against tributary (JSON) in each scenario both ran,
// with its registry calls in the row's note.
func TestMongoAndAvroTargets(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	calls := &registryCount{Register: 2}
	b := &bench{p: params{Rate: 10_000, Rows: 1000, SnapshotRate: 100}, runs: []run{
		{System: sysTributary, Scenario: scBackfillMongoDB, Events: 1000, EventsPerSec: 60_000, CPUSecPerMillion: f(8), PeakRSSMB: f(60)},
		{System: sysFindReader, Scenario: scBackfillMongoDB, Events: 1000, EventsPerSec: 100_000, CPUSecPerMillion: f(2), PeakRSSMB: f(20)},
		{System: sysPagedReader, Scenario: scBackfillMongoDB, Events: 1000, EventsPerSec: 75_000, CPUSecPerMillion: f(2), PeakRSSMB: f(20)},
		{System: sysTributary, Scenario: scStreamingMongoDB, Events: 1000, EventsPerSec: 40_000, CPUSecPerMillion: f(9), PeakRSSMB: f(110)},
		{System: sysStreamReader, Scenario: scStreamingMongoDB, Events: 1000, EventsPerSec: 50_000, CPUSecPerMillion: f(3), PeakRSSMB: f(25)},
		{System: sysTributary, Scenario: scStreaming, Events: 1000, EventsPerSec: 100_000, CPUSecPerMillion: f(5)},
		{System: sysAvro, Scenario: scStreaming, Events: 1000, EventsPerSec: 120_000, CPUSecPerMillion: f(5.5), RegistryCalls: calls, Note: calls.String()},
	}}
	want := map[string]float64{
		"backfill-mongodb ≥ 70 % of the find-reader ceiling (tributary ÷ " + sysFindReader + ")":             0.6,
		"backfill-mongodb ≥ 70 % of the paged find-reader ceiling (tributary ÷ " + sysPagedReader + ")":      0.8,
		"streaming-mongodb ≥ 70 % of the change-stream-reader ceiling (tributary ÷ " + sysStreamReader + ")": 0.8,
		"backfill-mongodb and streaming-mongodb peak RSS ≤ 100 MB":                                           110,
		scStreaming + ": tributary-avro events/s ≥ tributary's (tributary-avro ÷ tributary)":                 1.2,
		scStreaming + ": tributary-avro CPU s/M ≤ tributary's (tributary-avro ÷ tributary)":                  1.1,
	}
	met := map[string]bool{}
	for _, tg := range b.targets() {
		if strings.Contains(tg.Target, "tributary-avro") && !strings.HasPrefix(tg.Target, scStreaming+":") {
			t.Errorf("avro target %q for a scenario tributary-avro did not run", tg.Target)
		}
		w, ok := want[tg.Target]
		if !ok {
			continue
		}
		delete(want, tg.Target)
		if tg.Value == nil || math.Abs(*tg.Value-w) > 1e-9 {
			t.Errorf("%s: value %v, want %v", tg.Target, tg.Value, w)
			continue
		}
		met[tg.Target] = *tg.Met
	}
	for k := range want {
		t.Errorf("no target %q", k)
	}
	for k, v := range met {
		if wantMet := strings.Contains(k, "change-stream") || strings.Contains(k, "paged") || strings.Contains(k, "events/s ≥ tributary's"); v != wantMet {
			t.Errorf("%s: met %v, want %v", k, v, wantMet)
		}
	}
	md := b.report().markdown()
	for _, s := range []string{
		"| backfill-mongodb | find-reader (source ceiling) | 1000 | 100000 | 2.0 | 20 | – | – | – | 0.60× · 4.00 · 3.00 |",
		"| streaming | tributary-avro | 1000 | 120000 | 5.5 | – | – | – | – | 0.83× · 0.91 · – | registry calls 2 (register 2, lookup 0, fetch 0; 0 failed) |",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}
}

// TestParseRegistryCalls: the schema registry counters are added up by kind from
// Tributary's /metrics, and a page without them is an error, not zero calls.
func TestParseRegistryCalls(t *testing.T) {
	page := `# HELP tributary_schema_registry_requests_total Requests.
# TYPE tributary_schema_registry_requests_total counter
tributary_schema_registry_requests_total{pipeline="p",kind="register"} 2
tributary_schema_registry_requests_total{pipeline="p",kind="lookup"} 0
tributary_schema_registry_requests_total{pipeline="p",kind="fetch"} 1
tributary_schema_registry_errors_total{pipeline="p",kind="register"} 1
tributary_rows_published_total{pipeline="p",table="t",op="c"} 1000
`
	got, err := parseRegistryCalls(bufio.NewScanner(strings.NewReader(page)))
	if err != nil {
		t.Fatal(err)
	}
	if want := (registryCount{Register: 2, Fetch: 1, Errors: 1}); *got != want {
		t.Errorf("got %+v, want %+v", *got, want)
	}
	if _, err := parseRegistryCalls(bufio.NewScanner(strings.NewReader("tributary_rows_published_total{op=\"c\"} 1\n"))); err == nil {
		t.Error("a page without the registry counters parsed")
	}
}

// TestRunsIn: one core in the relational streaming scenarios, Avro in the relational
// backfill and streaming scenarios, and only Tributary at_least_once (and the baseline) on
// MongoDB.
func TestRunsIn(t *testing.T) {
	for _, c := range []struct {
		sys, sc string
		want    bool
	}{
		{sysAvro, scBackfill, true}, {sysAvro, scStreamingMariaDB, true}, {sysAvro, scLatency, false}, {sysAvro, scStreamingMongoDB, false},
		{sysOneCore, scStreaming, true}, {sysOneCore, scBackfill, false}, {sysOneCore, scStreamingMongoDB, false},
		{sysTributary, scBackfillMongoDB, true}, {sysTributaryEOS, scBackfillMongoDB, false}, {sysBaseline, scStreamingMongoDB, true},
		{sysDebeziumTuned, scStreamingMongoDB, false}, {sysDebeziumTuned, scStreaming, true},
	} {
		if got := runsIn(c.sys, c.sc); got != c.want {
			t.Errorf("runsIn(%s, %s) = %v, want %v", c.sys, c.sc, got, c.want)
		}
	}
}
