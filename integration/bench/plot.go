package main

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// curveSeries is one line of a curve: a system's figure at each x. A NaN y is a point
// that did not run (or failed) and is left out.
type curveSeries struct {
	Name string
	X, Y []float64
}

// The chart's geometry, in pixels. The font is x/image's fixed 7×13 bitmap face: the bench
// draws its own charts so that the repository takes on one small module, not a plotting
// library's tree of them.
const (
	plotW, plotH   = 860, 500
	marginLeft     = 84
	marginRight    = 190 // the legend
	marginTop      = 40
	marginBottom   = 58
	glyphW, glyphH = 7, 13
)

var (
	plotInk  = color.RGBA{0x20, 0x20, 0x20, 0xff}
	plotGrid = color.RGBA{0xe4, 0xe4, 0xe4, 0xff}
	// Colours told apart also by readers with the common colour-vision deficiencies.
	plotColors = []color.RGBA{
		{0x00, 0x72, 0xb2, 0xff}, // blue
		{0xd5, 0x5e, 0x00, 0xff}, // vermilion
		{0x00, 0x9e, 0x73, 0xff}, // bluish green
		{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
		{0xe6, 0x9f, 0x00, 0xff}, // orange
		{0x56, 0xb4, 0xe9, 0xff}, // sky blue
		{0x00, 0x00, 0x00, 0xff},
		{0x99, 0x99, 0x99, 0xff},
	}
)

// writeCurvePNG draws series as lines with markers, one colour and marker shape each and
// a legend naming them, on axes with ticks, numbers and labels, and writes the PNG to path.
// The y axis starts at zero, so a flat line reads as flat; logX spaces x by powers of ten.
func writeCurvePNG(path, title, xLabel, yLabel string, logX bool, series []curveSeries) error {
	img, err := drawCurve(title, xLabel, yLabel, logX, series)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

func drawCurve(title, xLabel, yLabel string, logX bool, series []curveSeries) (*image.RGBA, error) {
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	points := 0
	for _, s := range series {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("series %q has %d x and %d y", s.Name, len(s.X), len(s.Y))
		}
		for i, x := range s.X {
			y := s.Y[i]
			if math.IsNaN(y) || math.IsInf(y, 0) || math.IsNaN(x) || math.IsInf(x, 0) {
				continue
			}
			if logX && x <= 0 {
				return nil, fmt.Errorf("series %q: x %g on a logarithmic axis", s.Name, x)
			}
			xmin, xmax, ymax = min(xmin, x), max(xmax, x), max(ymax, y)
			points++
		}
	}
	if points == 0 {
		return nil, fmt.Errorf("no points to plot")
	}
	img := image.NewRGBA(image.Rect(0, 0, plotW, plotH))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	left, right, top, bottom := marginLeft, plotW-marginRight, marginTop, plotH-marginBottom

	// The x axis: a linear or a log scale padded so the end markers clear the frame.
	var xticks []float64
	var tx func(float64) float64 // x to 0…1
	if logX {
		lo, hi := math.Log10(xmin), math.Log10(xmax)
		if hi-lo < 1e-9 {
			lo, hi = lo-0.5, hi+0.5
		}
		pad := (hi - lo) * 0.06
		lo, hi = lo-pad, hi+pad
		tx = func(x float64) float64 { return (math.Log10(x) - lo) / (hi - lo) }
		xticks = logTicks(math.Pow(10, lo), math.Pow(10, hi))
	} else {
		lo, hi := xmin, xmax
		if hi-lo < 1e-9 {
			lo, hi = lo-1, hi+1
		}
		pad := (hi - lo) * 0.06
		lo, hi = lo-pad, hi+pad
		tx = func(x float64) float64 { return (x - lo) / (hi - lo) }
		xticks = linearTicks(lo, hi, 8)
		if wholeXs(series) { // counts (pipelines): no tick between two of them
			xticks = slices.DeleteFunc(xticks, func(t float64) bool { return t != math.Round(t) })
		}
	}
	if ymax <= 0 {
		ymax = 1
	}
	yticks := linearTicks(0, ymax*1.05, 6)
	ytop := max(ymax*1.05, yticks[len(yticks)-1])
	px := func(x float64) int { return left + int(math.Round(tx(x)*float64(right-left))) }
	py := func(y float64) int { return bottom - int(math.Round(y/ytop*float64(bottom-top))) }

	for _, t := range yticks {
		y := py(t)
		hline(img, left, right, y, plotGrid)
		hline(img, left-5, left, y, plotInk)
		label := formatTick(t)
		drawText(img, left-8-len(label)*glyphW, y+4, label, plotInk)
	}
	for _, t := range xticks {
		x := px(t)
		if x < left || x > right {
			continue
		}
		vline(img, x, top, bottom, plotGrid)
		vline(img, x, bottom, bottom+5, plotInk)
		label := formatTick(t)
		drawText(img, x-len(label)*glyphW/2, bottom+19, label, plotInk)
	}
	hline(img, left, right, bottom, plotInk)
	hline(img, left, right, top, plotInk)
	vline(img, left, top, bottom, plotInk)
	vline(img, right, top, bottom, plotInk)

	drawText(img, (plotW-len(title)*glyphW)/2, 24, title, plotInk)
	if logX {
		xLabel += " (log scale)"
	}
	drawText(img, left+(right-left-len(xLabel)*glyphW)/2, plotH-14, xLabel, plotInk)
	drawTextUp(img, 16, top+(bottom-top+len(yLabel)*glyphW)/2, yLabel, plotInk)

	for i, s := range series {
		c := plotColors[i%len(plotColors)]
		var prev *image.Point
		for j, x := range s.X {
			y := s.Y[j]
			if math.IsNaN(y) || math.IsInf(y, 0) || math.IsNaN(x) || math.IsInf(x, 0) {
				prev = nil // a gap where a point is missing
				continue
			}
			p := image.Pt(px(x), py(y))
			if prev != nil {
				thickLine(img, *prev, p, c)
			}
			marker(img, p, i, c)
			prev = &p
		}
		// The legend, top to bottom in the series' order.
		ly := top + 12 + i*20
		thickLine(img, image.Pt(right+14, ly), image.Pt(right+40, ly), c)
		marker(img, image.Pt(right+27, ly), i, c)
		drawText(img, right+48, ly+4, clip(s.Name, (marginRight-52)/glyphW), plotInk)
	}
	return img, nil
}

// wholeXs reports whether every x of series is a whole number.
func wholeXs(series []curveSeries) bool {
	for _, s := range series {
		for _, x := range s.X {
			if x != math.Round(x) {
				return false
			}
		}
	}
	return true
}

// linearTicks are about n round values (1, 2 or 5 times a power of ten apart) from the
// first at or above lo to the first at or above hi.
func linearTicks(lo, hi float64, n int) []float64 {
	step := niceStep((hi - lo) / float64(n))
	var ts []float64
	for t := math.Ceil(lo/step-1e-9) * step; len(ts) < 100; t += step {
		ts = append(ts, math.Round(t/step)*step)
		if t >= hi-step*1e-9 {
			break
		}
	}
	return ts
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// logTicks are the powers of ten within lo…hi, with 2× and 5× between them when the
// range spans fewer than three decades.
func logTicks(lo, hi float64) []float64 {
	mults := []float64{1}
	if math.Log10(hi/lo) < 3 {
		mults = []float64{1, 2, 5}
	}
	var ts []float64
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range mults {
			if t := m * math.Pow(10, e); t >= lo && t <= hi {
				ts = append(ts, t)
			}
		}
	}
	return ts
}

// formatTick writes a tick's value short: 500, 2.5k, 10k, 1M, 0.25.
func formatTick(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trimFloat(v/1e9) + "G"
	case a >= 1e6:
		return trimFloat(v/1e6) + "M"
	case a >= 1e4:
		return trimFloat(v/1e3) + "k"
	}
	return trimFloat(v)
}

func trimFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:max(0, n-1)] + "…"
}

func hline(img *image.RGBA, x0, x1, y int, c color.Color) {
	for x := x0; x <= x1; x++ {
		img.Set(x, y, c)
	}
}

func vline(img *image.RGBA, x, y0, y1 int, c color.Color) {
	for y := y0; y <= y1; y++ {
		img.Set(x, y, c)
	}
}

// thickLine draws a line two pixels wide (Bresenham, doubled across its run).
func thickLine(img *image.RGBA, a, b image.Point, c color.Color) {
	dx, dy := abs(b.X-a.X), -abs(b.Y-a.Y)
	sx, sy := sign(b.X-a.X), sign(b.Y-a.Y)
	e := dx + dy
	x, y := a.X, a.Y
	for {
		img.Set(x, y, c)
		if dx >= -dy {
			img.Set(x, y+1, c)
		} else {
			img.Set(x+1, y, c)
		}
		if x == b.X && y == b.Y {
			return
		}
		if e2 := 2 * e; e2 >= dy {
			e += dy
			x += sx
		} else {
			e += dx
			y += sy
		}
	}
}

// marker draws the i-th series' marker at p: circle, square, triangle, diamond, in turn.
func marker(img *image.RGBA, p image.Point, i int, c color.Color) {
	const r = 4
	for y := -r; y <= r; y++ {
		for x := -r; x <= r; x++ {
			var in bool
			switch i % 4 {
			case 0:
				in = x*x+y*y <= r*r+1
			case 1:
				in = true
			case 2:
				in = 2*abs(x) <= y+r
			case 3:
				in = abs(x)+abs(y) <= r+1
			}
			if in {
				img.Set(p.X+x, p.Y+y, c)
			}
		}
	}
}

// drawText writes s with its baseline at y, starting at x.
func drawText(img draw.Image, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// drawTextUp writes s turned a quarter left (read bottom to top), its first letter at
// (x, y): the y axis's label.
func drawTextUp(img *image.RGBA, x, y int, s string, c color.Color) {
	w := len(s) * glyphW
	tmp := image.NewRGBA(image.Rect(0, 0, w, glyphH))
	drawText(tmp, 0, 11, s, c)
	for ty := 0; ty < glyphH; ty++ {
		for tx := 0; tx < w; tx++ {
			if _, _, _, a := tmp.At(tx, ty).RGBA(); a > 0 {
				img.Set(x+ty-glyphH/2, y-tx, tmp.At(tx, ty))
			}
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// pointLabel names a run's scenario with its curve's x where it has one.
func pointLabel(sc string, size int) string {
	switch {
	case size <= 0:
		return sc
	case isBigTx(sc):
		return fmt.Sprintf("%s, %s changes", sc, group(float64(size), 0))
	case isLarge(sc):
		return fmt.Sprintf("%s, %s-byte text", sc, group(float64(size), 0))
	case strings.HasPrefix(sc, scFleet):
		return fmt.Sprintf("%s, %d pipelines", sc, size)
	}
	return fmt.Sprintf("%s, %d", sc, size)
}

// curve is one plot and its table: a figure of the runs of one scenario (or of the fleet's
// two) at each of its sizes, a line per system.
type curve struct {
	File                  string // the PNG's name in the plots directory
	Title, XLabel, YLabel string
	LogX                  bool
	Format                string // of the table's numbers, for group
	Series                []curveSeries
}

// curveMetric is a figure of a run that a curve plots.
type curveMetric struct {
	name, label string
	decimals    int
	of          func(*run) *float64
}

var (
	curveRate  = curveMetric{"events", "events/s", 0, func(r *run) *float64 { return &r.EventsPerSec }}
	curveMBs   = curveMetric{"mbps", "MB/s (keys and values)", 1, func(r *run) *float64 { return r.MBPerSec }}
	curveRSS   = curveMetric{"rss", "peak RSS MB", 0, func(r *run) *float64 { return r.PeakRSSMB }}
	curveCPU   = curveMetric{"cpu", "CPU s / M events", 1, func(r *run) *float64 { return r.CPUSecPerMillion }}
	curveStart = curveMetric{"start", "start to the first streamed change, s", 2, func(r *run) *float64 { return r.StartSeconds }}
)

// curves are the plots r has the runs for: each curve scenario that ran at a size.
func curves(r results) []curve {
	var cs []curve
	scenarioCurve := func(sc, xLabel string, metrics ...curveMetric) {
		var systems []string
		var sizes []int
		for _, x := range r.Runs {
			if x.Scenario == sc && x.Size > 0 {
				if !slices.Contains(systems, x.System) {
					systems = append(systems, x.System)
				}
				if !slices.Contains(sizes, x.Size) {
					sizes = append(sizes, x.Size)
				}
			}
		}
		if len(sizes) == 0 {
			return
		}
		slices.Sort(sizes)
		for _, m := range metrics {
			c := curve{File: sc + "-" + m.name + ".png", Title: sc + ": " + m.label, XLabel: xLabel, YLabel: m.label, LogX: true, Format: fmt.Sprint(m.decimals)}
			for _, sys := range systems {
				s := curveSeries{Name: sys}
				for _, size := range sizes {
					s.X = append(s.X, float64(size))
					s.Y = append(s.Y, figure(medianAt(r.Runs, sys, sc, size), m.of))
				}
				if slices.ContainsFunc(s.Y, func(y float64) bool { return !math.IsNaN(y) }) {
					c.Series = append(c.Series, s)
				}
			}
			if len(c.Series) > 0 {
				cs = append(cs, c)
			}
		}
	}
	for _, sc := range []string{scBigTx, scBigTxMariaDB} {
		scenarioCurve(sc, "changes in the one source transaction", curveRate, curveRSS, curveCPU)
	}
	for _, sc := range []string{scLarge, scLargeMariaDB} {
		scenarioCurve(sc, "bytes of text in each row", curveMBs, curveRSS, curveCPU)
	}
	// Many tables: a line per system over the tables captured, which a run's label carries.
	for _, sc := range []string{scManyTables, scManyTablesMariaDB} {
		var sizes []int
		for _, x := range r.Runs {
			if x.Tables > 0 && x.Scenario == mtLabel(sc, x.Tables) && !slices.Contains(sizes, x.Tables) {
				sizes = append(sizes, x.Tables)
			}
		}
		slices.Sort(sizes)
		for _, m := range []curveMetric{curveStart, curveRSS, curveCPU} {
			c := curve{File: sc + "-" + m.name + ".png", Title: sc + ": " + m.label, XLabel: "tables captured", YLabel: m.label, LogX: true, Format: fmt.Sprint(m.decimals)}
			for _, sys := range []string{sysTributary, sysDebeziumTuned} {
				s := curveSeries{Name: sys}
				for _, n := range sizes {
					s.X = append(s.X, float64(n))
					s.Y = append(s.Y, figure(medianAt(r.Runs, sys, mtLabel(sc, n), 0), m.of))
				}
				c.Series = append(c.Series, s)
			}
			if c.hasPoints() {
				cs = append(cs, c)
			}
		}
	}
	// The fleet: Tributary only, its two phases are the lines.
	var sizes []int
	for _, x := range r.Runs {
		if (x.Scenario == fleetIdleLabel || x.Scenario == fleetLoadLabel) && x.Size > 0 && !slices.Contains(sizes, x.Size) {
			sizes = append(sizes, x.Size)
		}
	}
	slices.Sort(sizes)
	for _, m := range []curveMetric{
		{"rss", "RSS per pipeline MB (largest)", 1, func(r *run) *float64 { return r.PeakRSSMB }},
		{"pss", "PSS per pipeline MB (largest)", 1, func(r *run) *float64 { return r.PSSMB }},
		{"cpu", "CPU per pipeline, % of a core (largest)", 2, func(r *run) *float64 { return r.CorePercent }},
	} {
		if len(sizes) == 0 {
			break
		}
		c := curve{File: scFleet + "-" + m.name + ".png", Title: scFleet + ": " + m.label, XLabel: "pipelines side by side", YLabel: m.label, Format: fmt.Sprint(m.decimals)}
		for _, sc := range []string{fleetIdleLabel, fleetLoadLabel} {
			s := curveSeries{Name: strings.TrimPrefix(sc, scFleet+" ")}
			for _, size := range sizes {
				s.X = append(s.X, float64(size))
				s.Y = append(s.Y, figure(medianAt(r.Runs, sysTributary, sc, size), m.of))
			}
			c.Series = append(c.Series, s)
		}
		if c.hasPoints() { // a run from before a figure was measured has none of it
			cs = append(cs, c)
		}
	}
	return cs
}

// hasPoints reports whether any series of c has a figure.
func (c curve) hasPoints() bool {
	for _, s := range c.Series {
		for _, y := range s.Y {
			if !math.IsNaN(y) {
				return true
			}
		}
	}
	return false
}

// figure is f of r, NaN where r did not run or lacks it.
func figure(r *run, f func(*run) *float64) float64 {
	if r == nil || f(r) == nil {
		return math.NaN()
	}
	return *f(r)
}

// table is c as a Markdown table: a row per x, a column per series.
func (c curve) table() string {
	var sb strings.Builder
	sb.WriteString("| " + c.XLabel + " |")
	for _, s := range c.Series {
		sb.WriteString(" " + s.Name + " |")
	}
	sb.WriteString("\n|---:|" + strings.Repeat("---:|", len(c.Series)) + "\n")
	decimals, _ := strconv.Atoi(c.Format)
	if len(c.Series) == 0 {
		return sb.String()
	}
	for i, x := range c.Series[0].X {
		sb.WriteString("| " + group(x, 0) + " |")
		for _, s := range c.Series {
			if i < len(s.Y) && !math.IsNaN(s.Y[i]) {
				sb.WriteString(" " + group(s.Y[i], decimals) + " |")
			} else {
				sb.WriteString(" – |")
			}
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// group writes v with decimals places and its thousands separated by commas.
func group(v float64, decimals int) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', decimals, 64)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if v < 0 && strings.Trim(s, "0.") != "" {
		b.WriteByte('-')
	}
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}

// writeCurves writes r's curves as PNGs into dir and returns them as Markdown: for each, a
// heading, its table and the image, linked relative to benchDir (integration/bench, where
// README.md is) when dir is under it. "" when r has no curve.
func writeCurves(r results, dir, benchDir string) (string, error) {
	cs := curves(r)
	if len(cs) == 0 {
		return "", nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var sb strings.Builder
	sb.WriteString("\n## Curves\n")
	for _, c := range cs {
		path := filepath.Join(dir, c.File)
		if err := writeCurvePNG(path, c.Title, c.XLabel, c.YLabel, c.LogX, c.Series); err != nil {
			return sb.String(), err
		}
		link := path
		if abs, err := filepath.Abs(path); err == nil {
			link = abs
			if rel, err := filepath.Rel(benchDir, abs); err == nil && !strings.HasPrefix(rel, "..") {
				link = filepath.ToSlash(rel)
			}
		}
		fmt.Fprintf(&sb, "\n### %s\n\n%s\n![%s](%s)\n", c.Title, c.table(), c.Title, link)
	}
	return sb.String(), nil
}

// plotResults writes the curves of a results JSON into plots/ beside it and their tables
// to out.
// Runs of a curve scenario without a size (a JSON from before the curves) take their
// run's single size from its parameters.
func plotResults(path, benchDir string, out io.Writer) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r results
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for i := range r.Runs {
		x := &r.Runs[i]
		if x.Size == 0 {
			switch {
			case isBigTx(x.Scenario):
				x.Size = r.Params.BigTxRows
			case isLarge(x.Scenario):
				x.Size = r.Params.LargeBytes
			case x.Scenario == fleetIdleLabel || x.Scenario == fleetLoadLabel:
				x.Size = r.Params.FleetPipelines
			}
		}
		if m := recordBytesNote.FindStringSubmatch(x.Note); x.MBPerSec == nil && m != nil {
			n, _ := strconv.Atoi(m[1])
			x.MBPerSec = ptr(x.EventsPerSec * float64(n) / 1e6)
		}
	}
	dir := filepath.Join(filepath.Dir(path), "plots")
	md, err := writeCurves(r, dir, benchDir)
	fmt.Fprint(out, md)
	if err == nil && md == "" {
		err = fmt.Errorf("%s has no runs of a curve scenario (%s, %s, %s, %s, %s)", path, scBigTx, scBigTxMariaDB, scLarge, scLargeMariaDB, scFleet)
	}
	return err
}

// recordBytesNote is the large scenarios' note on their record size.
var recordBytesNote = regexp.MustCompile(`MB/s of (\d+)-byte records`)
