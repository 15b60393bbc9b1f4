package metrics

import (
	"bufio"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry holds metric families in registration order and writes them in
// the Prometheus text format. Series are created once (under a lock) and
// then updated with atomics only.
type Registry struct {
	mu       sync.Mutex
	families []*family
	byName   map[string]*family
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byName: map[string]*family{}} }

type family struct {
	name, help, kind string
	buckets          []float64 // histograms only
	series           []*series
	byLabels         map[string]*series
}

type series struct {
	labels  string // rendered: a="x",b="y"
	counter *Counter
	gauge   func() float64
	hist    *Histogram
}

// Counter is a monotonically increasing count.
type Counter struct{ v atomic.Uint64 }

// Add adds n.
func (c *Counter) Add(n uint64) { c.v.Add(n) }

// Value returns the count.
func (c *Counter) Value() uint64 { return c.v.Load() }

// Histogram counts observations into fixed cumulative buckets.
type Histogram struct {
	upper  []float64
	counts []atomic.Uint64 // per bucket, not cumulative; last is +Inf
	count  atomic.Uint64
	sum    atomic.Uint64 // float64 bits
}

// Observe records one value.
func (h *Histogram) Observe(v float64) {
	i := sort.SearchFloat64s(h.upper, v) // first upper bound >= v
	h.counts[i].Add(1)
	h.count.Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// Count returns the number of observations.
func (h *Histogram) Count() uint64 { return h.count.Load() }

// Labels are name/value pairs, in the order given: Labels{"pipeline", "shop"}.
type Labels []string

func (l Labels) render() string {
	var b strings.Builder
	for i := 0; i+1 < len(l); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l[i])
		b.WriteString(`="`)
		b.WriteString(escapeLabel(l[i+1]))
		b.WriteByte('"')
	}
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }

func (r *Registry) series(name, help, kind string, labels Labels, buckets []float64) (*series, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.byName[name]
	if f == nil {
		f = &family{name: name, help: help, kind: kind, buckets: buckets, byLabels: map[string]*series{}}
		r.byName[name] = f
		r.families = append(r.families, f)
	}
	if f.kind != kind {
		panic("metrics: " + name + " registered as " + f.kind + " and " + kind)
	}
	key := labels.render()
	if s := f.byLabels[key]; s != nil {
		return s, false
	}
	s := &series{labels: key}
	f.byLabels[key] = s
	f.series = append(f.series, s)
	return s, true
}

// Counter returns the counter with these labels, creating it if needed.
func (r *Registry) Counter(name, help string, labels Labels) *Counter {
	s, created := r.series(name, help, "counter", labels, nil)
	if created {
		s.counter = &Counter{}
	}
	return s.counter
}

// GaugeFunc registers a gauge whose value f computes at exposition time.
func (r *Registry) GaugeFunc(name, help string, labels Labels, f func() float64) {
	s, _ := r.series(name, help, "gauge", labels, nil)
	s.gauge = f
}

// CounterFunc registers a counter whose value f computes at exposition
// time (f must never decrease).
func (r *Registry) CounterFunc(name, help string, labels Labels, f func() float64) {
	s, _ := r.series(name, help, "counter", labels, nil)
	s.gauge = f
}

// Histogram returns the histogram with these labels and bucket upper
// bounds (ascending; +Inf is implied), creating it if needed.
func (r *Registry) Histogram(name, help string, labels Labels, buckets []float64) *Histogram {
	s, created := r.series(name, help, "histogram", labels, buckets)
	if created {
		s.hist = &Histogram{upper: buckets, counts: make([]atomic.Uint64, len(buckets)+1)}
	}
	return s.hist
}

// WritePrometheus writes every family in the text exposition format.
func (r *Registry) WritePrometheus(w io.Writer) error {
	r.mu.Lock()
	fams := make([]family, len(r.families))
	for i, f := range r.families {
		fams[i] = *f
		fams[i].series = append([]*series(nil), f.series...)
	}
	r.mu.Unlock()
	bw := bufio.NewWriter(w)
	for _, f := range fams {
		bw.WriteString("# HELP " + f.name + " " + strings.ReplaceAll(strings.ReplaceAll(f.help, `\`, `\\`), "\n", `\n`) + "\n")
		bw.WriteString("# TYPE " + f.name + " " + f.kind + "\n")
		for _, s := range f.series {
			switch {
			case s.counter != nil:
				sample(bw, f.name, s.labels, "", strconv.FormatUint(s.counter.Value(), 10))
			case s.gauge != nil:
				sample(bw, f.name, s.labels, "", formatFloat(s.gauge()))
			case s.hist != nil:
				var cum uint64
				for i := range s.hist.counts {
					cum += s.hist.counts[i].Load()
					le := "+Inf"
					if i < len(s.hist.upper) {
						le = formatFloat(s.hist.upper[i])
					}
					sample(bw, f.name+"_bucket", s.labels, `le="`+le+`"`, strconv.FormatUint(cum, 10))
				}
				sample(bw, f.name+"_sum", s.labels, "", formatFloat(math.Float64frombits(s.hist.sum.Load())))
				// _count from the buckets, so that it equals the +Inf bucket.
				sample(bw, f.name+"_count", s.labels, "", strconv.FormatUint(cum, 10))
			}
		}
	}
	return bw.Flush()
}

func sample(w *bufio.Writer, name, labels, extra, value string) {
	w.WriteString(name)
	if labels != "" || extra != "" {
		w.WriteByte('{')
		w.WriteString(labels)
		if labels != "" && extra != "" {
			w.WriteByte(',')
		}
		w.WriteString(extra)
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	w.WriteString(value)
	w.WriteByte('\n')
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Handler serves the registry at any path (mount it at /metrics).
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		r.WritePrometheus(w)
	})
}
