package debezium

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

func TestAppendZonedTimestamp(t *testing.T) {
	at := func(y int, mo time.Month, d, h, mi, s, ns int) int64 {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC).UnixMicro()
	}
	tests := []struct {
		micros int64
		width  int
		want   string
	}{
		{0, 6, `"1970-01-01T00:00:00.000000Z"`},
		{0, 0, `"1970-01-01T00:00:00Z"`}, // width 0: ISO_OFFSET_DATE_TIME
		{1700000000123456, 6, `"2023-11-14T22:13:20.123456Z"`},
		{1700000000120000, 6, `"2023-11-14T22:13:20.120000Z"`}, // exact width keeps zeros
		{1700000000123000, 3, `"2023-11-14T22:13:20.123Z"`},
		{1700000000100000, 1, `"2023-11-14T22:13:20.1Z"`},
		{1700000000120000, 0, `"2023-11-14T22:13:20.12Z"`},      // ISO strips trailing zeros
		{1700000000000001, 10, `"2023-11-14T22:13:20.000001Z"`}, // width > 9: ISO too
		{-1, 6, `"1969-12-31T23:59:59.999999Z"`},
		{-1, 0, `"1969-12-31T23:59:59.999999Z"`},
		{at(1900, 2, 28, 12, 0, 0, 500_000_000), 6, `"1900-02-28T12:00:00.500000Z"`},
		{at(1, 1, 1, 0, 0, 0, 0), 6, `"0001-01-01T00:00:00.000000Z"`},
		{at(0, 6, 1, 0, 0, 0, 0), 0, `"0000-06-01T00:00:00Z"`},   // 1 BC
		{at(-1, 6, 1, 0, 0, 0, 0), 0, `"-0001-06-01T00:00:00Z"`}, // 2 BC
		{at(-4713, 11, 24, 0, 0, 0, 0), 0, `"-4713-11-24T00:00:00Z"`},
		{at(9999, 12, 31, 23, 59, 59, 999_999_000), 6, `"9999-12-31T23:59:59.999999Z"`},
		{at(10000, 1, 1, 0, 0, 0, 0), 6, `"+10000-01-01T00:00:00.000000Z"`},
		// PostgreSQL allows years up to 294276, but µs since 1970 in an
		// int64 end in 294247; the source model cannot carry more.
		{at(294246, 12, 31, 23, 59, 59, 999_999_000), 6, `"+294246-12-31T23:59:59.999999Z"`},
		{math.MaxInt64, 6, `"infinity"`},
		{math.MinInt64, 6, `"-infinity"`},
	}
	for _, tt := range tests {
		if got := string(appendZonedTimestamp(nil, tt.micros, tt.width)); got != tt.want {
			t.Errorf("%d width %d: got %s, want %s", tt.micros, tt.width, got, tt.want)
		}
	}
}

func TestFloorDiv(t *testing.T) {
	tests := []struct{ a, b, want int64 }{
		{0, 1000, 0}, {999, 1000, 0}, {1000, 1000, 1}, {-1, 1000, -1}, {-1000, 1000, -1}, {-1001, 1000, -2},
	}
	for _, tt := range tests {
		if got := floorDiv(tt.a, tt.b); got != tt.want {
			t.Errorf("floorDiv(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestFarTimestamp pins what Debezium 3.6.1 wrote side by side for
// PostgreSQL timestamps past int64 µs (the differential oracle,
// integration/scenario/differential_test.go): exact milliseconds and zoned
// strings, µs saturated then wrapped by the fraction.
func TestFarTimestamp(t *testing.T) {
	far := change.FarTimestamp(9224318015999, 999999) // 294276-12-31T23:59:59.999999
	tests := []struct {
		typ  change.Type
		v    change.Value
		want string
	}{
		{typ(change.KindTimestamp, 6, -1), far, `"c":-9223372036853775810`},
		{typ(change.KindTimestamp, 6, -1), change.FarTimestamp(9224318015999, 0), `"c":9223372036854775807`},
		{typ(change.KindTimestamp, 6, -1), change.FarTimestamp(9223372036854, 775808), `"c":-9223372036854775808`},
		{typ(change.KindTimestamp, 3, -1), change.FarTimestamp(9224318015999, 999000), `"c":9224318015999999`},
		{typ(change.KindTimestamp, 0, -1), change.FarTimestamp(9224318015999, 0), `"c":9224318015999000`},
		{typ(change.KindTimestampTZ, 6, -1), far, `"c":"+294276-12-31T23:59:59.999999Z"`},
		{typ(change.KindTimestampTZ, 0, -1), change.FarTimestamp(9224318016000, 0), `"c":"+294277-01-01T00:00:00Z"`},
	}
	for _, tt := range tests {
		out, err := oneColumn(t, tt.typ, true, tt.v)
		if err != nil {
			t.Errorf("%v %s: %v", tt.typ.Kind, tt.v, err)
			continue
		}
		if !strings.Contains(out, tt.want) {
			t.Errorf("%v precision %d %s: want %s in\n%s", tt.typ.Kind, tt.typ.Precision, tt.v, tt.want, out)
		}
	}
}
