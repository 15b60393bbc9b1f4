package postgres_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/jackc/pglogrepl"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// slotLSN is the confirmed flush LSN of e's pipeline slot (0: no slot).
func slotLSN(e *itest.Env) uint64 {
	e.T.Helper()
	var lsn *string
	err := e.Conn.QueryRow(context.Background(),
		`SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1`, "tributary_"+e.Name).Scan(&lsn)
	if err != nil || lsn == nil {
		return 0
	}
	l, _ := pglogrepl.ParseLSN(*lsn)
	return uint64(l)
}

// walLSN is the server's current WAL position.
func walLSN(e *itest.Env) uint64 {
	e.T.Helper()
	var lsn string
	if err := e.Conn.QueryRow(context.Background(), `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		e.T.Fatal(err)
	}
	l, _ := pglogrepl.ParseLSN(lsn)
	return uint64(l)
}

// fileCheckpointLSN reads the LSN of e's file checkpoint (0: none yet).
func fileCheckpointLSN(e *itest.Env) uint64 {
	e.T.Helper()
	b, err := os.ReadFile(filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json"))
	if err != nil {
		return 0
	}
	var f struct {
		Position struct {
			LSN string `json:"lsn"`
		} `json:"position"`
	}
	if json.Unmarshal(b, &f) != nil {
		return 0
	}
	l, _ := pglogrepl.ParseLSN(f.Position.LSN)
	return uint64(l)
}
