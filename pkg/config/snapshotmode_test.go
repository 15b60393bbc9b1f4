package config

import (
	"errors"
	"strings"
	"testing"
)

// source.snapshot_mode takes Debezium's names (never as no_data), refuses
// anything else naming the allowed values, and agrees with source.backfill.
func TestSnapshotMode(t *testing.T) {
	off := false
	for _, tc := range []struct {
		mode     string
		backfill *bool
		want     string // Snapshot(); "" when invalid
		problem  string
	}{
		{"", nil, SnapshotInitial, ""},
		{"", &off, SnapshotNoData, ""},
		{"initial", nil, SnapshotInitial, ""},
		{"initial_only", nil, SnapshotInitialOnly, ""},
		{"no_data", nil, SnapshotNoData, ""},
		{"never", nil, SnapshotNoData, ""},
		{"never", &off, SnapshotNoData, ""},
		{"when_needed", nil, SnapshotWhenNeeded, ""},
		{"schema_only", nil, "", "must be initial, initial_only, no_data (or never), or when_needed"},
		{"when_needed", &off, "", "source.backfill is false"},
	} {
		c := validConfig(t)
		c.Source.SnapshotMode = tc.mode
		if tc.backfill != nil {
			c.Source.Backfill = tc.backfill
		}
		err := c.Validate()
		if tc.problem == "" {
			if err != nil {
				t.Errorf("%q backfill %v: %v", tc.mode, tc.backfill, err)
			}
			if got := c.Source.Snapshot(); got != tc.want {
				t.Errorf("%q: mode %s, want %s", tc.mode, got, tc.want)
			}
			if c.Source.BackfillEnabled() != (tc.want != SnapshotNoData) {
				t.Errorf("%q: BackfillEnabled %v with mode %s", tc.mode, c.Source.BackfillEnabled(), tc.want)
			}
			continue
		}
		var errs *Errors
		if !errors.As(err, &errs) || len(errs.Problems) != 1 || errs.Problems[0].Field != "source.snapshot_mode" ||
			!strings.Contains(errs.Problems[0].Message, tc.problem) {
			t.Errorf("%q backfill %v: got %v, want source.snapshot_mode: …%s…", tc.mode, tc.backfill, err, tc.problem)
		}
	}
}
