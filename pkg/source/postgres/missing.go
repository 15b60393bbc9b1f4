package postgres

import "strings"

// reportMissing tells status and metrics (source.Options.ReportMissing)
// which source.tables entries match no table now; s.missing also holds
// "add:"-keys of tables the publication refused, "identity:"-keys of
// tables without a replica identity (identity.go) and "columns:"-keys of
// tables whose key the column rules touch (columns.go), which are not
// listed entries.
func (s *Source) reportMissing() {
	var t []string
	for k := range s.missing {
		if !strings.HasPrefix(k, "add:") && !strings.HasPrefix(k, "identity:") && !strings.HasPrefix(k, "columns:") {
			t = append(t, k)
		}
	}
	s.opts.ReportMissing(t)
}
