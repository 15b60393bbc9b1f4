package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// decodePNG reads a PNG the way a browser or an image viewer would.
func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s does not decode as a PNG: %v", path, err)
	}
	return img
}

// differing counts the pixels that differ between a and b.
func differing(a, b image.Image) int {
	n := 0
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 {
				n++
			}
		}
	}
	return n
}

// TestCurvePNG: the chart is a PNG an image viewer opens, with ink on it beyond the
// background, and other data draw other pixels (a line that moves, a system more), on a
// linear and on a log axis alike. No golden image: the drawing may change, the data must
// show.
func TestCurvePNG(t *testing.T) {
	dir := t.TempDir()
	xs := []float64{10_000, 100_000, 1_000_000}
	base := []curveSeries{
		{Name: "tributary", X: xs, Y: []float64{250_000, 260_000, 255_000}},
		{Name: "debezium-tuned", X: xs, Y: []float64{25_000, 28_000, 29_000}},
	}
	moved := []curveSeries{
		{Name: "tributary", X: xs, Y: []float64{250_000, 130_000, 255_000}},
		base[1],
	}
	more := append(append([]curveSeries{}, base...), curveSeries{Name: "tributary-exactly-once", X: xs, Y: []float64{240_000, math.NaN(), 245_000}})
	for _, logX := range []bool{false, true} {
		write := func(name string, s []curveSeries) image.Image {
			path := filepath.Join(dir, name)
			if err := writeCurvePNG(path, "bigtx: events/s", "changes in the one source transaction", "events/s", logX, s); err != nil {
				t.Fatal(err)
			}
			return decodePNG(t, path)
		}
		a, b, c := write("base.png", base), write("moved.png", moved), write("more.png", more)
		if got := a.Bounds().Size(); got.X < 400 || got.Y < 300 {
			t.Errorf("log %v: the image is %v, too small to read", logX, got)
		}
		white := 0
		for y := 0; y < a.Bounds().Dy(); y++ {
			for x := 0; x < a.Bounds().Dx(); x++ {
				if r, g, b, _ := a.At(x, y).RGBA(); r == 0xffff && g == 0xffff && b == 0xffff {
					white++
				}
			}
		}
		if ink := a.Bounds().Dx()*a.Bounds().Dy() - white; ink < 2000 {
			t.Errorf("log %v: only %d pixels drawn", logX, ink)
		}
		if n := differing(a, b); n < 50 {
			t.Errorf("log %v: a point moved by half and only %d pixels changed", logX, n)
		}
		if n := differing(a, c); n < 50 {
			t.Errorf("log %v: a third system and only %d pixels changed", logX, n)
		}
		if n := differing(a, write("again.png", base)); n != 0 {
			t.Errorf("log %v: the same data drew %d other pixels", logX, n)
		}
	}
	if err := writeCurvePNG(filepath.Join(dir, "x.png"), "t", "x", "y", true, []curveSeries{{Name: "s", X: []float64{0, 1}, Y: []float64{1, 2}}}); err == nil {
		t.Error("x = 0 on a log axis drew; want an error")
	}
	if err := writeCurvePNG(filepath.Join(dir, "x.png"), "t", "x", "y", false, []curveSeries{{Name: "s", X: []float64{1, 2}, Y: []float64{1}}}); err == nil {
		t.Error("2 x and 1 y drew; want an error")
	}
}

// TestTicks: the axes' numbers are round and cover the data.
func TestTicks(t *testing.T) {
	ts := linearTicks(0, 283_000, 6)
	if ts[0] != 0 || ts[len(ts)-1] < 283_000 || len(ts) < 4 || len(ts) > 9 {
		t.Errorf("linear ticks over 0…283,000: %v", ts)
	}
	if got := logTicks(8_000, 12_000_000); !slicesEqual(got, []float64{10_000, 100_000, 1_000_000, 10_000_000}) {
		t.Errorf("log ticks over 8,000…12,000,000: %v", got)
	}
	if got := logTicks(8_000, 120_000); !slicesEqual(got, []float64{10_000, 20_000, 50_000, 100_000}) {
		t.Errorf("log ticks over 8,000…120,000: %v", got)
	}
	for v, want := range map[float64]string{0: "0", 500: "500", 2500: "2500", 50_000: "50k", 1_000_000: "1M", 2_500_000: "2.5M", 0.25: "0.25"} {
		if got := formatTick(v); got != want {
			t.Errorf("formatTick(%g) = %q, want %q", v, got, want)
		}
	}
}

func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-6*math.Abs(b[i]) {
			return false
		}
	}
	return true
}

// TestCurvesFromRuns: a curve scenario's runs at several sizes become a plot and a table
// per figure, a line per system with the median of its repeats at each size and a gap
// where it failed; the targets take the largest size, not a median across sizes.
func TestCurvesFromRuns(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	runs := []run{
		{System: sysTributary, Scenario: scBigTx, Size: 10_000, EventsPerSec: 200_000, PeakRSSMB: f(60), CPUSecPerMillion: f(4)},
		{System: sysTributary, Scenario: scBigTx, Size: 100_000, EventsPerSec: 240_000, PeakRSSMB: f(70), CPUSecPerMillion: f(4), Rep: 1},
		{System: sysTributary, Scenario: scBigTx, Size: 100_000, EventsPerSec: 260_000, PeakRSSMB: f(90), CPUSecPerMillion: f(4), Rep: 2},
		{System: sysDebeziumTuned, Scenario: scBigTx, Size: 10_000, EventsPerSec: 20_000, PeakRSSMB: f(900)},
		{System: sysDebeziumTuned, Scenario: scBigTx, Size: 100_000, Error: "timed out"},
		{System: sysTributary, Scenario: fleetIdleLabel, Size: 1, PeakRSSMB: f(12), CorePercent: f(0.1), PSSMB: f(9)},
		{System: sysTributary, Scenario: fleetLoadLabel, Size: 1, PeakRSSMB: f(14), CorePercent: f(1.5)},
		{System: sysTributary, Scenario: fleetIdleLabel, Size: 8, PeakRSSMB: f(13), CorePercent: f(0.2)},
		{System: sysTributary, Scenario: fleetLoadLabel, Size: 8, PeakRSSMB: f(15), CorePercent: f(1.6)},
		{System: sysTributary, Scenario: scStreaming, EventsPerSec: 250_000},
	}
	cs := curves(results{Runs: runs})
	var names []string
	byName := map[string]curve{}
	for _, c := range cs {
		names = append(names, c.File)
		byName[c.File] = c
	}
	if want := "bigtx-events.png bigtx-rss.png bigtx-cpu.png fleet-rss.png fleet-pss.png fleet-cpu.png"; strings.Join(names, " ") != want {
		t.Fatalf("curves %v, want %s", names, want)
	}
	ev := byName["bigtx-events.png"]
	if len(ev.Series) != 2 || ev.Series[0].Name != sysTributary || ev.Series[1].Name != sysDebeziumTuned {
		t.Fatalf("bigtx events/s series: %+v", ev.Series)
	}
	if y := ev.Series[0].Y; y[0] != 200_000 || y[1] != 250_000 {
		t.Errorf("tributary's bigtx events/s = %v, want 200,000 and the median of 240,000 and 260,000", y)
	}
	if y := ev.Series[1].Y; y[0] != 20_000 || !math.IsNaN(y[1]) {
		t.Errorf("debezium's bigtx events/s = %v, want 20,000 and a gap where it failed", y)
	}
	table := ev.table()
	for _, want := range []string{"| changes in the one source transaction | tributary | debezium-tuned |", "| 10,000 | 200,000 | 20,000 |", "| 100,000 | 250,000 | – |"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if rss := byName["bigtx-rss.png"].Series[0].Y[1]; rss != 90 {
		t.Errorf("peak RSS at 100,000 = %v, want the highest of the repeats, 90", rss)
	}
	if fl := byName["fleet-cpu.png"]; fl.Series[0].Name != "idle" || fl.Series[1].Y[1] != 1.6 || fl.Series[0].X[1] != 8 {
		t.Errorf("fleet CPU curve: %+v", fl.Series)
	}
	if m := medianRun(runs, sysTributary, scBigTx); m == nil || m.EventsPerSec != 250_000 {
		t.Errorf("the target's bigtx run = %+v, want the median at the largest size", m)
	}
	if m := medianRun(runs, sysDebeziumTuned, scBigTx); m != nil {
		t.Errorf("debezium's bigtx run for the targets = %+v, want none (it failed at the largest size)", m)
	}

	// The same runs through a results JSON, the way -plot reads a finished run, and one
	// from before the curves (no sizes: its parameters give them).
	dir := t.TempDir()
	old := results{Params: params{BigTxRows: 50_000, LargeBytes: 100_000}, Runs: []run{
		{System: sysTributary, Scenario: scLarge, Events: 300, EventsPerSec: 1000, Note: "96 MB/s of 100416-byte records"},
		{System: sysTributary, Scenario: scBigTx, EventsPerSec: 200_000},
	}}
	for name, r := range map[string]results{"new.json": {Runs: runs}, "old.json": old} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := plotResults(path, dir, io.Discard); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"bigtx-events.png", "fleet-rss.png", "large-mbps.png"} {
		decodePNG(t, filepath.Join(dir, "plots", name))
	}
	if err := plotResults(filepath.Join(dir, "nothing.json"), dir, io.Discard); err == nil {
		t.Error("a missing JSON plotted")
	}
}

// TestParseSizes: a curve's sizes are a comma list, one value is a curve of one point,
// each is rounded as the scenario needs, sorted and once; a bad value is an error naming
// the variable and the value, every bad value of the list.
func TestParseSizes(t *testing.T) {
	by100 := func(n int) int { return max(100, n/100*100) }
	var bad []error
	if got := parseSizes("BENCH_BIGTX_ROWS", "50000", by100, &bad); len(bad) != 0 || len(got) != 1 || got[0] != 50_000 {
		t.Errorf("one size: %v, %v", got, bad)
	}
	if got := parseSizes("BENCH_BIGTX_ROWS", "1_000_000, 100050,100000,", by100, &bad); len(bad) != 0 || len(got) != 2 || got[0] != 100_000 || got[1] != 1_000_000 {
		t.Errorf("a list: %v, %v", got, bad)
	}
	parseSizes("BENCH_LARGE_BYTES", "10k,0,100000", by100, &bad)
	if len(bad) != 2 || !strings.Contains(bad[0].Error(), `BENCH_LARGE_BYTES: "10k"`) || !strings.Contains(bad[1].Error(), `"0"`) {
		t.Errorf("bad sizes: %v, want both named with BENCH_LARGE_BYTES", bad)
	}
	bad = nil
	if parseSizes("BENCH_FLEET_PIPELINES", " , ", func(n int) int { return n }, &bad); len(bad) != 1 {
		t.Errorf("no size: %v, want one error", bad)
	}
}
