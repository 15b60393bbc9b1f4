package debezium

import (
	"encoding/json"
	"math"
	"testing"
)

func TestAppendJavaFloat(t *testing.T) {
	// Expected strings are Java's Double.toString / Float.toString (JDK 19+).
	doubles := []struct {
		in   float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{-1, "-1.0"},
		{100, "100.0"},
		{1.5, "1.5"},
		{123.456, "123.456"},
		{math.Nextafter(0.3, 1), "0.30000000000000004"}, // 0.1+0.2 at run time
		{0.001, "0.001"},
		{0.00123, "0.00123"},
		{0.0001, "1.0E-4"},
		{1e-5, "1.0E-5"},
		{1.234e-5, "1.234E-5"},
		{9999999, "9999999.0"},
		{9999999.5, "9999999.5"},
		{1e7, "1.0E7"},
		{12345678.9, "1.23456789E7"},
		{1e21, "1.0E21"},
		{1e23, "1.0E23"},
		{-2.5e-10, "-2.5E-10"},
		{math.MaxFloat64, "1.7976931348623157E308"},
		{math.SmallestNonzeroFloat64, "4.9E-324"},
		{2 * math.SmallestNonzeroFloat64, "9.9E-324"},
		{0x1p-1022, "2.2250738585072014E-308"}, // Double.MIN_NORMAL
		{math.Pi, "3.141592653589793"},
		{math.NaN(), `"NaN"`},
		{math.Inf(1), `"Infinity"`},
		{math.Inf(-1), `"-Infinity"`},
	}
	for _, tt := range doubles {
		if got := string(appendJavaFloat(nil, tt.in, 64)); got != tt.want {
			t.Errorf("double %v: got %s, want %s", tt.in, got, tt.want)
		}
	}
	floats := []struct {
		in   float32
		want string
	}{
		{0, "0.0"},
		{1.1, "1.1"},
		{0.1, "0.1"},
		{3.14, "3.14"},
		{16777216, "1.6777216E7"},
		{1e10, "1.0E10"},
		{math.MaxFloat32, "3.4028235E38"},
		{math.SmallestNonzeroFloat32, "1.4E-45"},
		{1e-3, "0.001"},
		{-123.25, "-123.25"},
	}
	for _, tt := range floats {
		if got := string(appendJavaFloat(nil, float64(tt.in), 32)); got != tt.want {
			t.Errorf("float %v: got %s, want %s", tt.in, got, tt.want)
		}
	}
}

// Every finite double written must parse back to itself.
func TestAppendJavaFloatRoundTrip(t *testing.T) {
	vals := []float64{5e-324, 1e-310, 2.2250738585072014e-308, 1e-300, 0.5, 1 / 3.0, 2e22, 1e300}
	for i := range 2000 {
		vals = append(vals, math.Float64frombits(uint64(i)*0x9E3779B97F4A7C15))
	}
	for _, f := range vals {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := appendJavaFloat(nil, f, 64)
		var back float64
		if err := json.Unmarshal(s, &back); err != nil || back != f {
			t.Fatalf("%v written as %s, read back %v (%v)", f, s, back, err)
		}
	}
}
