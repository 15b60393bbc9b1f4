package mysql

import (
	"math/rand/v2"
	"testing"
	"time"
)

// rowsReader writes a DATETIME2's and a TIMESTAMP2's text itself
// (appendDateTime) where go-mysql formats a time.Time; a consumer sees
// that text's instant, so the two must agree byte for byte. Random fields
// and instants (the seed is printed), every fractional precision: where
// validDateTime says time.Date keeps the fields, the texts are the same;
// where it says not, time.Date does change them (its normalization is
// what go-mysql writes, and the reader falls back to it).
func TestDateTimeTextAsGoMySQLWrites(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	valid := 0
	for range 300_000 {
		dec := rng.IntN(7)
		frac := rng.Int64N(1e6)

		sec := rng.Int64N(1 << 32) // a TIMESTAMP2's seconds
		y, mo, d := civil(sec / 86400)
		got := string(appendDateTime(nil, y, mo, d, sec%86400/3600, sec%3600/60, sec%60, frac, dec))
		if want := time.Unix(sec, frac*1000).In(time.UTC).Format(fracTimeLayouts[dec]); got != want {
			t.Fatalf("TIMESTAMP2 %d.%06d (%d digits): %q, time writes %q", sec, frac, dec, got, want)
		}

		year, month, day := rng.IntN(10000), rng.IntN(14), rng.IntN(33)
		hour, minute, second := rng.IntN(25), rng.IntN(61), rng.IntN(61)
		if rng.IntN(2) == 0 { // as often a day that exists
			month, day, hour, minute, second = 1+rng.IntN(12), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60)
		}
		tm := time.Date(year, time.Month(month), day, hour, minute, second, int(frac*1000), time.UTC)
		if !validDateTime(year, month, day, hour, minute, second, frac) {
			if tm.Year() == year && int(tm.Month()) == month && tm.Day() == day && tm.Hour() == hour && tm.Minute() == minute && tm.Second() == second {
				t.Fatalf("%04d-%02d-%02d %02d:%02d:%02d is kept by time.Date but not written directly", year, month, day, hour, minute, second)
			}
			continue
		}
		valid++
		got = string(appendDateTime(nil, int64(year), int64(month), int64(day), int64(hour), int64(minute), int64(second), frac, dec))
		if want := tm.Format(fracTimeLayouts[dec]); got != want {
			t.Fatalf("DATETIME2 %04d-%02d-%02d %02d:%02d:%02d.%06d (%d digits): %q, time writes %q", year, month, day, hour, minute, second, frac, dec, got, want)
		}
	}
	if valid < 100_000 {
		t.Fatalf("only %d of the random dates were valid ones", valid)
	}
}
