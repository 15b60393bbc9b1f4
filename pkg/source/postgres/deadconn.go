package postgres

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
)

// A replication connection whose packets vanish (no FIN, no RST) blocks in
// ReceiveMessage forever. The stream asks the walsender to answer
// (a standby status update with reply requested) once it has been silent
// for pingAfter, and gives the connection up after silenceLimit.
const (
	pingAfter = 2 * time.Second
	// minSilence and defaultSilence bound silenceLimit: a floor so a tiny
	// wal_sender_timeout does not drop live connections, and the limit
	// when the server disabled its own timeout (wal_sender_timeout = 0).
	minSilence     = 10 * time.Second
	defaultSilence = 60 * time.Second
)

// silenceLimit is how long the replication stream may stay silent before
// the connection is taken for dead: wal_sender_timeout, at least
// minSilence. A live walsender answers a reply request when it next reads
// the connection, and while it decodes without sending it pings on its
// own after wal_sender_timeout/2 without hearing from us; so a live
// server is never silent that long, and twice that is proof enough.
func silenceLimit(ctx context.Context, conn *pgx.Conn) time.Duration {
	var ms int64
	// wal_sender_timeout in milliseconds; 0 disables it.
	if err := conn.QueryRow(ctx, `SELECT setting::bigint FROM pg_settings WHERE name = 'wal_sender_timeout'`).Scan(&ms); err != nil || ms <= 0 {
		return defaultSilence
	}
	return max(time.Duration(ms)*time.Millisecond, minSilence)
}

// errSilent is the error of a replication connection silent for longer
// than its limit. It wraps os.ErrDeadlineExceeded: a timeout, retriable.
func errSilent(silent, limit time.Duration) error {
	return fmt.Errorf("no message from the server for %s although replies were requested (limit %s, from wal_sender_timeout): connection presumed dead: %w",
		silent.Round(100*time.Millisecond), limit, os.ErrDeadlineExceeded)
}
