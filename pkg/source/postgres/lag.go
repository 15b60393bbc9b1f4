package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source"
)

var _ source.Lagger = (*Source)(nil)

// LagBytes implements source.Lagger: WAL bytes between the checkpoint's
// LSN and the server's current WAL position.
func (s *Source) LagBytes(ctx context.Context, pos []byte) (int64, error) {
	_, lsn, err := decodePosition(change.Position(pos))
	if err != nil {
		return 0, err
	}
	conn, err := pgx.ConnectConfig(ctx, s.connCfg)
	if err != nil {
		return 0, fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var lag int64
	err = conn.QueryRow(ctx, `SELECT GREATEST(pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn), 0)::bigint`, formatLSN(lsn)).Scan(&lag)
	return lag, err
}
