package mysql

// reportMissing tells status and metrics (source.Options.ReportMissing)
// which source.tables entries match no captured table now: missing at
// start, or dropped or renamed away since (refresh).
func (s *Source) reportMissing() {
	var t []string
	s.mu.Lock()
	for _, id := range s.sel.PlainNames() {
		if s.tables[id] == nil {
			t = append(t, id)
		}
	}
	s.mu.Unlock()
	s.opts.ReportMissing(t)
}
