package postgres

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// retriableStates are the SQLSTATEs of a connection the server ended or
// could not take yet: reconnecting cures them.
var retriableStates = map[string]bool{
	"57P01": true, // admin_shutdown: pg_terminate_backend, a fast or smart shutdown
	"57P02": true, // crash_shutdown: another backend crashed, or an immediate shutdown
	"57P03": true, // cannot_connect_now: the server is starting up or shutting down
	"57P05": true, // idle_session_timeout
	"53300": true, // too_many_connections
	"55006": true, // object_in_use: the slot is still held by our previous walsender
	"58000": true, // system_error
	"58030": true, // io_error
}

// Retriable implements capture.Database: it classifies the errors of this
// source for the reconnect loop (pkg/capture/reconnect.go). A lost slot or any
// other "resnapshot required" is fatal (after a failover to a server
// without the slot, reconnecting cannot bring its WAL back), as are
// authentication (28xxx), privileges (42501), a missing database (3D000)
// and every other server error; connection exceptions (class 08), the
// shutdown states above and the network rules every source shares are
// retriable.
func (s *Source) Retriable(err error) bool {
	if errors.Is(err, source.ErrResnapshotRequired) || errors.Is(err, source.ErrReaderInUse) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return retriableStates[pe.Code] || strings.HasPrefix(pe.Code, "08")
	}
	if errors.Is(err, pgconn.ErrConnClosed) {
		return true
	}
	return source.NetworkRetriable(err)
}
