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
// streams from LSN instead of backfilling again.
type position struct {
	Slot       string `json:"slot"`
	LSN        string `json:"lsn"`
	Backfilled bool   `json:"backfilled"`
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
