package itest

import (
	"slices"
	"strconv"
	"testing"
)

// CheckLegacyBackfillResumed checks topic after a restart from an earlier
// release's checkpoint whose unfinished backfill stood at key after: keys
// 1..after read once (the first run), after+1..rows twice (and by the
// resumed backfill), and every change in streamed ("c101", "u10": op and
// key) published. Shared by the PostgreSQL and MariaDB legacy-checkpoint
// tests.
func CheckLegacyBackfillResumed(t *testing.T, topic string, rows, after int, streamed ...string) {
	t.Helper()
	reads := map[int]int{}
	var changes []string
	for _, m := range ReadTopic(t, topic) {
		k := int(m.Key["payload"].(map[string]any)["k"].(float64))
		switch op := m.Payload()["op"].(string); op {
		case "r":
			reads[k]++
		default:
			changes = append(changes, op+strconv.Itoa(k))
		}
	}
	for k := 1; k <= rows; k++ {
		want := 1 // the first run's backfill
		if k > after {
			want = 2 // and the resumed one, after the checkpointed key
		}
		if reads[k] != want {
			t.Errorf("key %d read %d times, want %d (the backfill resumes after key %d)", k, reads[k], want, after)
		}
	}
	for _, c := range streamed {
		if !slices.Contains(changes, c) {
			t.Errorf("changes made while stopped: %v, want %v streamed", changes, streamed)
			return
		}
	}
}
