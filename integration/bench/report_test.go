package main

import "testing"

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
