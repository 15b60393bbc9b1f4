package status

import (
	"encoding/json"
	"fmt"
	"strings"
)

// positionSummary renders a checkpoint's position for people: a
// PostgreSQL LSN and its slot, a MySQL binlog file:pos and GTID set
// (pkg/source/postgres/position.go, pkg/source/mysql/position.go), and
// whether the initial backfill is done. The position stays the sources'
// own JSON (Checkpoint.Position); a shape this does not know is "".
func positionSummary(pos []byte) string {
	var p struct {
		Slot       string `json:"slot"`
		LSN        string `json:"lsn"`
		File       string `json:"file"`
		Pos        *int64 `json:"pos"`
		GTID       string `json:"gtid"`
		Backfilled *bool  `json:"backfilled"`
	}
	if json.Unmarshal(pos, &p) != nil {
		return ""
	}
	var parts []string
	switch {
	case p.LSN != "":
		s := "LSN " + p.LSN
		if p.Slot != "" {
			s += " (slot " + p.Slot + ")"
		}
		parts = append(parts, s)
	case p.File != "" && p.Pos != nil:
		parts = append(parts, fmt.Sprintf("binlog %s:%d", p.File, *p.Pos))
		if p.GTID != "" {
			parts = append(parts, "GTID set "+p.GTID)
		}
	default:
		return ""
	}
	if p.Backfilled != nil && !*p.Backfilled {
		parts = append(parts, "initial backfill not done")
	}
	return strings.Join(parts, ", ")
}
