package status

import "slices"

// TablesMissing records the source.tables entries that match no table
// now (source.Options.MissingTables): the next snapshot lists them.
func (r *Recorder) TablesMissing(tables []string) {
	r.mu.Lock()
	r.live.MissingTables = slices.Clone(tables)
	r.mu.Unlock()
}
