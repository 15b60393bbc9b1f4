package postgres

import "strings"

// reportMissing tells status and metrics (source.Options.ReportMissing)
// which source.tables entries match no table now; s.missing also holds
// "add:"-keys of tables the publication refused and "identity:"-keys of
// tables without a replica identity (identity.go), which are not listed
// entries.
func (s *Source) reportMissing() {
	var t []string
	for k := range s.missing {
		if !strings.HasPrefix(k, "add:") && !strings.HasPrefix(k, "identity:") {
			t = append(t, k)
		}
	}
	s.opts.ReportMissing(t)
}
