package metrics

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Names of the backfill (snapshot) progress metrics.
const (
	backfillRowsName      = "tributary_backfill_rows_total"
	backfillRemainingName = "tributary_backfill_remaining_rows"
)

// BackfillTable is one table's snapshot as people see it: in the log
// lines, `tributary status` and the status page.
type BackfillTable struct {
	Table string `json:"table"`
	// Rows is rows published (op r) by this snapshot so far.
	Rows int64 `json:"rows"`
	// Estimated is the table's size from the database's statistics; 0
	// when unknown.
	Estimated int64     `json:"estimated_rows,omitempty"`
	Started   time.Time `json:"started,omitzero"` // zero while queued
	Done      bool      `json:"done,omitempty"`
	// RowsPerSecond is the rate since the snapshot started; ETASeconds the
	// time left at that rate (0 when unknown or done).
	RowsPerSecond float64 `json:"rows_per_second,omitempty"`
	ETASeconds    float64 `json:"eta_seconds,omitempty"`
}

// backfill holds the latest progress and the per-table series.
type backfill struct {
	mu     sync.Mutex
	tables []BackfillTable
	series map[string]*backfillSeries
}

type backfillSeries struct {
	rows      *Counter     // over every snapshot of the table since start
	last      int64        // Rows of the current snapshot already counted
	started   time.Time    // the current snapshot's start
	remaining atomic.Int64 // -1 until an estimate is known
}

// SetBackfill records the snapshot progress the pipeline read from its
// source: tributary_backfill_rows_total{table} counts the rows every
// snapshot of the table published since the process started (a new
// snapshot of the same table adds to it), and
// tributary_backfill_remaining_rows{table} is the estimate minus the rows
// so far (0 once done; absent until the database gave an estimate).
func (m *Pipeline) SetBackfill(tables []BackfillTable) {
	if m == nil {
		return
	}
	b := &m.backfill
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tables = slices.Clone(tables)
	if b.series == nil {
		b.series = map[string]*backfillSeries{}
	}
	for _, t := range tables {
		s := b.series[t.Table]
		if s == nil {
			s = &backfillSeries{rows: m.reg.Counter(backfillRowsName,
				"Rows published with op r by snapshots (backfills) of the table since the process started.",
				Labels{"pipeline", m.name, "table", t.Table})}
			s.remaining.Store(-1)
			b.series[t.Table] = s
		}
		if !t.Started.Equal(s.started) || t.Rows < s.last {
			s.started, s.last = t.Started, 0 // a new snapshot of the table
		}
		if t.Rows > s.last {
			s.rows.Add(uint64(t.Rows - s.last))
			s.last = t.Rows
		}
		remaining := max(t.Estimated-t.Rows, 0)
		if t.Done {
			remaining = 0
		}
		if t.Estimated > 0 || t.Done {
			if s.remaining.Swap(remaining) == -1 {
				m.reg.GaugeFunc(backfillRemainingName,
					"Rows of the table's snapshot still to publish: the database's estimate of its size minus the rows published so far; 0 once done.",
					Labels{"pipeline", m.name, "table", t.Table}, func() float64 { return float64(s.remaining.Load()) })
			}
		}
	}
}

// Backfills returns the progress last recorded by SetBackfill.
func (m *Pipeline) Backfills() []BackfillTable {
	if m == nil {
		return nil
	}
	m.backfill.mu.Lock()
	defer m.backfill.mu.Unlock()
	return slices.Clone(m.backfill.tables)
}
