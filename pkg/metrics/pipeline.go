package metrics

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Prometheus names; the EMF names are in emf.go.
const (
	rowsPublishedName = "tributary_rows_published_total"
	latencyName       = "tributary_source_to_publish_latency_seconds"
	lagName           = "tributary_source_lag_seconds"
	errorsName        = "tributary_errors_total"
)

// latencyBuckets are the upper bounds, in seconds, of the latency
// histogram: from a fast local commit to a stalled broker.
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// Pipeline is one pipeline's metrics. A nil *Pipeline, and the nil *Rows
// it hands out, record nothing, so callers need no checks.
type Pipeline struct {
	name string
	reg  *Registry
	now  func() time.Time

	mu     sync.Mutex
	tables map[string]*Rows
	order  []*Rows
	errs   map[string]*Counter
	kinds  []string

	latency  *Histogram
	inflight atomic.Int64 // c/u/d records handed to the producer, not yet settled
	reads    atomic.Int64 // r records handed to the producer, not yet settled
	streamed atomic.Int64 // when (unix ns) the last c/u/d record was handed over
	newest   atomic.Int64 // commit time (µs) of the newest c/u/d record handed over

	samples *reservoir // latency samples for EMF; nil unless an EMF writer reads them

	dropped  dropped       // tributary_columns_dropped, per table (dropped.go)
	backfill backfill      // snapshot progress (backfill.go)
	missing  missing       // tributary_table_missing, per listed table (missing.go)
	receipts receipts      // tributary_receipt_*, per topic partition (receipts.go)
	topics   topics        // tributary_topic_missing, per topic (topics.go)
	stall    stall         // tributary_kafka_stalled (stall.go)
	registry registryCalls // tributary_schema_registry_* (schemaregistry.go)
}

// NewPipeline registers the metrics of the pipeline name in reg.
func NewPipeline(reg *Registry, name string) *Pipeline {
	m := &Pipeline{name: name, reg: reg, now: time.Now, tables: map[string]*Rows{}, errs: map[string]*Counter{}}
	l := Labels{"pipeline", name}
	m.latency = reg.Histogram(latencyName,
		"Time from the source commit of a c/u/d row to the broker's acknowledgement of its record.", l, latencyBuckets)
	reg.GaugeFunc(lagName,
		"Now minus the source commit time of the newest c/u/d row handed to the producer, while any is unacknowledged; 0 when every row is acknowledged (caught up).",
		l, func() float64 { return m.Lag().Seconds() })
	// Present from the start, so a scrape or an alarm sees 0 rather than nothing.
	m.errorCounter("publish")
	return m
}

// Rows is the per-op row counters of one table.
type Rows struct {
	m     *Pipeline
	table string
	ops   [4]*Counter // c, u, d, r
	sent  [4]uint64   // EMF: the counts at the last flush (the writer's own)
}

func opIndex(op change.Op) int {
	switch op {
	case change.OpCreate:
		return 0
	case change.OpUpdate:
		return 1
	case change.OpDelete:
		return 2
	case change.OpRead:
		return 3
	}
	return -1
}

var opNames = [4]string{"c", "u", "d", "r"}

// Rows returns the counters of table (its qualified name). It takes a
// lock: resolve once per table and keep the result.
func (m *Pipeline) Rows(table string) *Rows {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.tables[table]; r != nil {
		return r
	}
	r := &Rows{m: m, table: table}
	for i, op := range opNames {
		r.ops[i] = m.reg.Counter(rowsPublishedName,
			"Rows acknowledged by the broker, per table and op; op r (backfill reads) is not billable, c/u/d are.",
			Labels{"pipeline", m.name, "table", table, "op", op})
	}
	m.tables[table] = r
	m.order = append(m.order, r)
	return r
}

// Sent records that a record of op, committed in the source at
// commitMicros, was handed to the producer at time at (the caller's clock
// read for the record: one read less per event). Every Sent is followed
// by one Acked or Failed.
func (r *Rows) Sent(op change.Op, commitMicros int64, at time.Time) {
	if r == nil {
		return
	}
	m := r.m
	if op == change.OpRead {
		// A backfill read's commit time is the snapshot's start: it says
		// nothing about how far behind the stream is.
		m.reads.Add(1)
		return
	}
	m.streamed.Store(at.UnixNano())
	if commitMicros > m.newest.Load() {
		m.newest.Store(commitMicros) // only the source's goroutine sends
	}
	m.inflight.Add(1)
}

// Acked records the broker's acknowledgement, at time at, of a record
// sent with Sent. row is false for a tombstone, which settles its Sent
// but is not a row.
func (r *Rows) Acked(op change.Op, commitMicros int64, row bool, at time.Time) {
	if r == nil {
		return
	}
	i := opIndex(op)
	if i < 0 {
		return
	}
	r.settled(op)
	if !row {
		return
	}
	r.ops[i].Add(1)
	if op == change.OpRead || commitMicros <= 0 {
		return
	}
	d := max(at.UnixMicro()-commitMicros, 0) // a source clock ahead of ours reads as 0
	r.m.latency.Observe(float64(d) / 1e6)
	if s := r.m.samples; s != nil {
		s.add(float64(d) / 1e3)
	}
}

// Failed records that a record sent with Sent was not published.
func (r *Rows) Failed(op change.Op) {
	if r == nil {
		return
	}
	if opIndex(op) >= 0 {
		r.settled(op)
	}
	r.m.Error("publish")
}

// Error counts one error of kind: "publish" (a record the broker did not
// take), "run" (the pipeline stopped with an error).
func (m *Pipeline) Error(kind string) {
	if m == nil {
		return
	}
	m.errorCounter(kind).Add(1)
}

func (m *Pipeline) errorCounter(kind string) *Counter {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.errs[kind]
	if c == nil {
		c = m.reg.Counter(errorsName, "Errors: records the broker did not take (publish), the pipeline stopping with an error (run).",
			Labels{"pipeline", m.name, "kind", kind})
		m.errs[kind] = c
		m.kinds = append(m.kinds, kind)
	}
	return c
}

// Lag is how far behind its source the pipeline is: now minus the commit
// time of the newest c/u/d row handed to the producer while any such row
// is unacknowledged, and 0 once every one is acknowledged (idle and caught
// up). A source that delivers nothing at all reads as 0: the Errors metric
// and a missing metric (the task is down) cover that.
func (m *Pipeline) Lag() time.Duration {
	if m == nil || m.inflight.Load() <= 0 {
		return 0
	}
	newest := m.newest.Load()
	if newest <= 0 {
		return 0
	}
	return max(m.now().Sub(time.UnixMicro(newest)), 0)
}

// Published returns the rows acknowledged so far per op letter, over all
// tables.
func (m *Pipeline) Published() map[string]uint64 {
	out := map[string]uint64{}
	if m == nil {
		return out
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.order {
		for i, c := range r.ops {
			out[opNames[i]] += c.Value()
		}
	}
	return out
}

// reservoir keeps a uniform sample of at most len(vals) values between
// drains (Vitter's algorithm R), so EMF can send CloudWatch raw values
// for its percentiles without unbounded memory.
type reservoir struct {
	mu   sync.Mutex
	vals [500]float64
	n    int
	seen uint64
}

func (s *reservoir) add(v float64) {
	s.mu.Lock()
	s.seen++
	if s.n < len(s.vals) {
		s.vals[s.n] = v
		s.n++
	} else if j := rand.Uint64N(s.seen); j < uint64(len(s.vals)) {
		s.vals[j] = v
	}
	s.mu.Unlock()
}

// drain returns the sample and starts a new one.
func (s *reservoir) drain() []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]float64(nil), s.vals[:s.n]...)
	s.n, s.seen = 0, 0
	return out
}
