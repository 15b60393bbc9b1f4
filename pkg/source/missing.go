package source

import "slices"

// ReportMissing tells Options.MissingTables (status and metrics) which
// source.tables entries match no table now: listed tables missing at
// start, or dropped or renamed away while streaming. As Debezium treats
// include-list entries that match nothing, they are not an error, so
// this is where an operator sees them besides the log. tables is the
// whole current set (empty: none missing); the caller may reuse it.
func (o Options) ReportMissing(tables []string) {
	if o.MissingTables == nil {
		return
	}
	t := slices.Clone(tables)
	slices.Sort(t)
	o.MissingTables(slices.Compact(t))
}
