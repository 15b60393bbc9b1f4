package debezium

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestTimeTextCutsTheDigits: ts_ms and ts_ns cut from one formatting of
// the microseconds read as the arithmetic gives them, for times before
// the epoch, around it and far after it.
func TestTimeTextCutsTheDigits(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	micros := []int64{0, 1, 999, 1000, 1001, -1, -999, -1000, -1001, 1_764_633_600_123_456,
		math.MaxInt64, math.MinInt64, math.MaxInt64 / 1000, math.MaxInt64/1000 + 1, math.MinInt64 / 1000, math.MinInt64/1000 - 1}
	for range 1000 {
		micros = append(micros, r.Int64()>>r.IntN(63)*int64(1-2*r.IntN(2)))
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
