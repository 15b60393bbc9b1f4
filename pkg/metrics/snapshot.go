package metrics

// TableRows is one table's acknowledged rows per op letter (c, u, d, r)
// since the process started.
type TableRows struct {
	Table string            `json:"table"`
	Rows  map[string]uint64 `json:"rows"`
}

// Tables returns the rows acknowledged so far per table, in the order the
// tables were first seen (the status page and `status` show them so).
func (m *Pipeline) Tables() []TableRows {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]TableRows, 0, len(m.order))
	for _, r := range m.order {
		t := TableRows{Table: r.table, Rows: map[string]uint64{}}
		for i, c := range r.ops {
			t.Rows[opNames[i]] = c.Value()
		}
		out = append(out, t)
	}
	return out
}
