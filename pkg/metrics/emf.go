package metrics

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"sync"
	"time"
)

// Namespace is the CloudWatch namespace of the EMF metrics (infra's
// dashboard and alarms read it).
const Namespace = "Tributary"

// EMF metric names; each has the dimension Pipeline, RowsPublished also Op.
const (
	EMFRowsPublished = "RowsPublished"
	EMFLatency       = "SourceToPublishLatencyMs"
	EMFLag           = "SourceLagSeconds"
	EMFErrors        = "Errors"
)

// maxValues is how many values CloudWatch takes in one EMF metric array.
const maxValues = 100

// EMF writes a pipeline's metrics as CloudWatch Embedded Metric Format
// lines, one JSON object a line, for CloudWatch Logs (the awslogs driver
// of the ECS task) to turn into metrics. Counters go out as the change
// since the previous flush, so CloudWatch's Sum over a period is the count
// in that period; latency goes out as a uniform sample of raw values
// (at most 500 a flush), from which CloudWatch computes percentiles.
type EMF struct {
	w io.Writer
	m *Pipeline

	mu     sync.Mutex
	errors map[string]uint64 // counts at the previous flush
}

// NewEMF returns a writer of m's metrics to w. Create it before the
// pipeline runs: it turns on the latency sample that m keeps for it.
func NewEMF(w io.Writer, m *Pipeline) *EMF {
	m.samples = &reservoir{}
	return &EMF{w: w, m: m, errors: map[string]uint64{}}
}

// Run flushes every interval until ctx is done, then once more, so the
// counts of a stopping task (its final error too) are not lost.
func (e *EMF) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			e.Flush(time.Now())
			return
		case now := <-t.C:
			e.Flush(now)
		}
	}
}

type emfMetric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

type emfDirective struct {
	Namespace  string      `json:"Namespace"`
	Dimensions [][]string  `json:"Dimensions"`
	Metrics    []emfMetric `json:"Metrics"`
}

type emfMeta struct {
	Timestamp         int64          `json:"Timestamp"`
	CloudWatchMetrics []emfDirective `json:"CloudWatchMetrics"`
}

// Flush writes the lines for everything since the previous flush: one per
// table and op that published rows, then one with the lag, the errors and
// the first latency values, then one per further 100 latency values.
func (e *EMF) Flush(now time.Time) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.m
	ts := now.UnixMilli()
	line := func(dims []string, metrics []emfMetric, fields map[string]any) map[string]any {
		fields["_aws"] = emfMeta{Timestamp: ts, CloudWatchMetrics: []emfDirective{{
			Namespace: Namespace, Dimensions: [][]string{dims}, Metrics: metrics,
		}}}
		fields["Pipeline"] = m.name
		return fields
	}
	var lines []map[string]any

	m.mu.Lock()
	tables := append([]*Rows(nil), m.order...)
	kinds := append([]string(nil), m.kinds...)
	errCounters := make([]*Counter, len(kinds))
	for i, k := range kinds {
		errCounters[i] = m.errs[k]
	}
	m.mu.Unlock()

	for _, r := range tables {
		for i, c := range r.ops {
			v := c.Value()
			d := v - r.sent[i]
			if d == 0 {
				continue
			}
			r.sent[i] = v
			// Table is a property, not a dimension: a metric per table
			// would cost per table; Logs Insights can still sum by it.
			lines = append(lines, line([]string{"Pipeline", "Op"},
				[]emfMetric{{EMFRowsPublished, "Count"}},
				map[string]any{"Table": r.table, "Op": opNames[i], EMFRowsPublished: d}))
		}
	}

	var errs uint64
	byKind := map[string]uint64{}
	for i, k := range kinds {
		v := errCounters[i].Value()
		if d := v - e.errors[k]; d > 0 {
			byKind[k] = d
			errs += d
		}
		e.errors[k] = v
	}
	lag := m.Lag().Seconds()
	summary := map[string]any{EMFLag: math.Round(lag*1000) / 1000, EMFErrors: errs, EMFTopicsMissing: m.TopicsMissing()}
	if len(byKind) > 0 {
		summary["ErrorKinds"] = byKind
	}
	metrics := []emfMetric{{EMFLag, "Seconds"}, {EMFErrors, "Count"}, {EMFTopicsMissing, "Count"}}
	samples := m.samples.drain()
	first := samples[:min(len(samples), maxValues)]
	if len(first) > 0 {
		metrics = append(metrics, emfMetric{EMFLatency, "Milliseconds"})
		summary[EMFLatency] = first
	}
	lines = append(lines, line([]string{"Pipeline"}, metrics, summary))
	for rest := samples[len(first):]; len(rest) > 0; {
		n := min(len(rest), maxValues)
		lines = append(lines, line([]string{"Pipeline"}, []emfMetric{{EMFLatency, "Milliseconds"}},
			map[string]any{EMFLatency: rest[:n]}))
		rest = rest[n:]
	}

	var buf []byte
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		buf = append(append(buf, b...), '\n')
	}
	_, err := e.w.Write(buf)
	return err
}
