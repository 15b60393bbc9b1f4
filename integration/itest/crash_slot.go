package itest

import (
	"context"

	"github.com/jackc/pglogrepl"
)

// SlotLSN is the confirmed flush LSN of the pipeline's slot (0: no slot).
func (e *Env) SlotLSN() uint64 {
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

func (e *Env) WalLSN() uint64 {
	e.T.Helper()
	var lsn string
	if err := e.Conn.QueryRow(context.Background(), `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		e.T.Fatal(err)
	}
	l, _ := pglogrepl.ParseLSN(lsn)
	return uint64(l)
}
