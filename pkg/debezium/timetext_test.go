package debezium

import (
	"math"
	"strconv"
	"testing"
)

// TestTimeTextCutsTheDigits: ts_ms and ts_ns cut from one formatting of
// the microseconds read as the arithmetic gives them, at every digit
// count's edges (where cutting three digits can go wrong), before the
// epoch and after it, and at int64's ends.
func TestTimeTextCutsTheDigits(t *testing.T) {
	micros := []int64{0, 1_764_633_600_123_456, math.MaxInt64, math.MinInt64,
		math.MaxInt64 / 1000, math.MaxInt64/1000 + 1, math.MinInt64 / 1000, math.MinInt64/1000 - 1}
	for p := int64(1); p > 0 && p <= math.MaxInt64/10; p *= 10 {
		for _, m := range []int64{p - 1, p, p + 1, 999 * p, 1000*p - 1} {
			if m > 0 {
				micros = append(micros, m, -m)
			}
		}
	}
	for _, m := range micros {
		var buf [20]byte
		tt := epochText(buf[:0], m)
		if got, want := string(tt.appendMillis(nil)), strconv.FormatInt(floorDiv(m, 1000), 10); got != want {
			t.Errorf("%d µs: ms %s, want %s", m, got, want)
		}
		if got, want := string(tt.appendMicros(nil)), strconv.FormatInt(m, 10); got != want {
			t.Errorf("%d µs: µs %s, want %s", m, got, want)
		}
		if got, want := string(tt.appendNanos(nil)), strconv.FormatInt(m*1000, 10); got != want {
			t.Errorf("%d µs: ns %s, want %s", m, got, want)
		}
	}
}
