package mysql

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// The captured set rides on every position (the capture loop's tables,
// pkg/capture/envelope.go), so that a restart snapshots exactly the tables
// added to source.tables (or created in the database) while the pipeline
// was down.

// capturedChangedLocked re-encodes the captured set's names (its record
// is the list of them); s.mu held.
func (s *Source) capturedChangedLocked() {
	names := slices.Sorted(maps.Keys(s.tables))
	record, _ := json.Marshal(names) // strings: cannot fail
	s.SetCaptured(record, names)
}

// encode is the cursor at p, with the schema history; the capture loop
// seals it with the captured set and the snapshots' state.
func (s *Source) encode(p position) change.Position {
	p.Shapes = nil // the history's own encoding is spliced in (history.attach)
	return s.hist.attach(p.encode())
}

// addedTables are the names not in the recorded set; none when the
// position predates the record (every table was captured then).
func addedTables(recorded json.RawMessage, names []string) []string {
	if recorded == nil {
		return nil
	}
	var had []string
	if json.Unmarshal(recorded, &had) != nil {
		return nil
	}
	known := make(map[string]bool, len(had))
	for _, n := range had {
		known[n] = true
	}
	var out []string
	for _, n := range names {
		if !known[n] {
			out = append(out, n)
		}
	}
	return out
}
