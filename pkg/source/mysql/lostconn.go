package mysql

import (
	"errors"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// retriableCodes are the server and client error numbers of a connection
// that went away or a server that is restarting: reconnecting cures them.
var retriableCodes = map[uint16]bool{
	1040: true, // ER_CON_COUNT_ERROR: too many connections (for now)
	1053: true, // ER_SERVER_SHUTDOWN: shutdown in progress
	1077: true, // ER_NORMAL_SHUTDOWN
	1152: true, // ER_ABORTING_CONNECTION
	1158: true, // ER_NET_READ_ERROR
	1159: true, // ER_NET_READ_INTERRUPTED
	1160: true, // ER_NET_ERROR_ON_WRITE
	1161: true, // ER_NET_WRITE_INTERRUPTED
	1927: true, // ER_CONNECTION_KILLED (MariaDB: KILL of our thread)
	2002: true, // CR_CONNECTION_ERROR
	2003: true, // CR_CONN_HOST_ERROR
	2006: true, // CR_SERVER_GONE_ERROR
	2013: true, // CR_SERVER_LOST
	4031: true, // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
}

// Retriable implements capture.Database: it classifies the errors of this
// source for the reconnect loop (pkg/capture/reconnect.go): a lost binlog position
// or a missing prerequisite is fatal, as is any other server error
// (authentication 1045, privileges 1044/1142/1227, …); a lost connection,
// a server shutting down, a fresh start a schema change made undecodable
// and the network rules every source shares are retriable.
func (s *Source) Retriable(err error) bool {
	if errors.Is(err, errFreshWindowDDL) {
		return true // a fresh start begun again (Start)
	}
	if errors.Is(err, source.ErrResnapshotRequired) || errors.Is(err, ErrPrerequisite) || errors.Is(err, source.ErrReaderInUse) || source.CertificateProblem(err) {
		return false
	}
	var me *gomysql.MyError
	if errors.As(err, &me) {
		return retriableCodes[me.Code]
	}
	if errors.Is(err, gomysql.ErrBadConn) {
		return true // go-mysql's "connection was bad": the socket read failed
	}
	return source.NetworkRetriable(err)
}
