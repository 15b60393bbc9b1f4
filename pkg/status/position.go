package status

import (
	"encoding/json"
	"strings"
)

// positionSummary renders a checkpoint's position for people: the
// source's cursor in its own words (words, its source type's
// source.Kind.Summary: an LSN and its slot, a binlog file:pos and GTID
// set), and whether the initial backfill is done. The position stays the
// sources' own JSON (Checkpoint.Position); one the words do not read
// (or no words) is "".
func positionSummary(pos []byte, words func(pos []byte) string) string {
	if words == nil {
		return ""
	}
	cursor := words(pos)
	if cursor == "" {
		return ""
	}
	parts := []string{cursor}
	var p struct {
		Backfilled *bool `json:"backfilled"`
	}
	if json.Unmarshal(pos, &p) == nil && p.Backfilled != nil && !*p.Backfilled {
		parts = append(parts, "initial backfill not done")
	}
	return strings.Join(parts, ", ")
}
