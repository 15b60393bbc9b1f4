package metrics

import (
	"sync"
	"sync/atomic"
)

const columnsDroppedName = "tributary_columns_dropped"

// dropped holds the tributary_columns_dropped gauges of one pipeline.
type dropped struct {
	mu     sync.Mutex
	tables map[string]*atomic.Int64
}

// ColumnsDropped sets how many columns of table's current version are left
// out of its messages (types Tributary cannot encode; see the README's type
// coverage). A table that never had any has no series; one whose dropped
// columns went away reads 0.
func (m *Pipeline) ColumnsDropped(table string, n int) {
	if m == nil {
		return
	}
	m.dropped.mu.Lock()
	defer m.dropped.mu.Unlock()
	g := m.dropped.tables[table]
	if g == nil {
		if n == 0 {
			return
		}
		if m.dropped.tables == nil {
			m.dropped.tables = map[string]*atomic.Int64{}
		}
		g = &atomic.Int64{}
		m.dropped.tables[table] = g
		m.reg.GaugeFunc(columnsDroppedName,
			"Columns of the table's current version left out of its messages because Tributary cannot encode their type (set source.include_unknown_types to publish them as text).",
			Labels{"pipeline", m.name, "table", table}, func() float64 { return float64(g.Load()) })
	}
	g.Store(int64(n))
}
