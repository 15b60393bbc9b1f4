package main

import (
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
