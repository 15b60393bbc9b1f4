package metrics

import (
	"sync"
	"sync/atomic"
)

const tableMissingName = "tributary_table_missing"

// missing holds the tributary_table_missing gauges of one pipeline.
type missing struct {
	mu     sync.Mutex
	tables map[string]*atomic.Int64
}

// TablesMissing sets which source.tables entries match no table now
// (dropped, renamed away, or not created yet): 1 for each of tables, 0
// for a table missing earlier that is back. A table never missing has no
// series.
func (m *Pipeline) TablesMissing(tables []string) {
	if m == nil {
		return
	}
	m.missing.mu.Lock()
	defer m.missing.mu.Unlock()
	if m.missing.tables == nil {
		m.missing.tables = map[string]*atomic.Int64{}
	}
	for _, g := range m.missing.tables {
		g.Store(0)
	}
	for _, t := range tables {
		g := m.missing.tables[t]
		if g == nil {
			g = &atomic.Int64{}
			m.missing.tables[t] = g
			m.reg.GaugeFunc(tableMissingName,
				"1 while a table listed in source.tables matches no table in the database (dropped, renamed away, or not created yet); it is captured if it appears.",
				Labels{"pipeline", m.name, "table", t}, func() float64 { return float64(g.Load()) })
		}
		g.Store(1)
	}
}
