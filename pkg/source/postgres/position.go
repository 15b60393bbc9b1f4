package postgres

import (
	"encoding/json"
	"fmt"

	"github.com/jackc/pglogrepl"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// position is this source's resumable point. LSN is the end of the last
// transaction whose changes are all published (the slot's confirmed flush
// point); Backfilled says the initial backfill finished, so a restart
// streams from LSN instead of backfilling again. While the backfill runs,
// LSN is the slot's consistent point and Backfill says how far it got.
type position struct {
	Slot       string            `json:"slot"`
	LSN        string            `json:"lsn"`
	Backfilled bool              `json:"backfilled"`
	Backfill   *backfillProgress `json:"backfill,omitempty"`
}

// backfillProgress is how far an unfinished backfill got: every row up to
// and including it is published and acknowledged (the position is only
// checkpointed once they are).
type backfillProgress struct {
	// Done lists the tables (schema.table) whose every row is published.
	Done []string `json:"done,omitempty"`
	// Table is the table being read and After the primary key of its last
	// published row, as text values in key order; After is empty when the
	// table has no primary key (it is then read again from its start).
	Table string   `json:"table,omitempty"`
	After []string `json:"after,omitempty"`
	// Rows counts the rows published so far, over all tables.
	Rows int64 `json:"rows"`
}

func (p position) encode() change.Position {
	b, _ := json.Marshal(p) // strings and a bool: cannot fail
	return b
}

func decodePosition(b change.Position) (position, uint64, error) {
	var p position
	if err := json.Unmarshal(b, &p); err != nil {
		return p, 0, fmt.Errorf("postgres position %q: %w", trunc(b), err)
	}
	lsn, err := parseLSN(p.LSN)
	if err != nil {
		return p, 0, fmt.Errorf("postgres position: %w", err)
	}
	if p.Backfill != nil && (p.Backfilled || p.Backfill.Rows < 0 || (len(p.Backfill.After) > 0 && p.Backfill.Table == "")) {
		return p, 0, fmt.Errorf("postgres position: inconsistent backfill progress")
	}
	return p, lsn, nil
}

func parseLSN(s string) (uint64, error) {
	lsn, err := pglogrepl.ParseLSN(s)
	if err != nil {
		return 0, fmt.Errorf("bad LSN %q", s)
	}
	return uint64(lsn), nil
}

func formatLSN(lsn uint64) string { return pglogrepl.LSN(lsn).String() }
