package mysql

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// A binlog stream has no slot: what marks a live reader on the server is
// its registration as a replica (SHOW SLAVE HOSTS), under the server_id
// every task of a pipeline derives from the pipeline name. A server ends
// the older dump connection when a replica registers with a server_id that
// is already streaming, so two tasks with the same pipeline name but
// different checkpoint stores would end each other's stream in turn (and
// the second would backfill again). As on PostgreSQL (holder.go), only a
// lease (Options.Leased) lets a task take the stream over, by registering:
// the other reader can only be a stale owner. Without one, the task waits a
// little for a reader that just died, then refuses, naming it.

// readerWait is how long a task with the file store waits for another
// reader to go away before it refuses: a task that just died leaves its
// dump thread behind until the server notices the closed connection.
const readerWait = 15 * time.Second

// readerTag is the host name this process registers its binlog streams
// under: it names the process (machine and pid, plus a random token, as
// containers all run as pid 1) to a task that finds the stream taken, and
// lets a task recognise its own registration left by a lost connection.
var readerTag = func() string {
	host, _ := os.Hostname()
	b := make([]byte, 3)
	rand.Read(b)
	tag := fmt.Sprintf("tributary pid %d on %s run %s", os.Getpid(), host, hex.EncodeToString(b))
	if len(tag) > 255 {
		tag = tag[len(tag)-255:]
	}
	return tag
}()

// registeredReader is a replica registration with our server_id.
type registeredReader struct {
	host string // what the replica reported: our readerTag, or another client's host name
	port string
}

// lookupReader finds the replica registered with serverID, if any.
func lookupReader(conn *client.Conn, serverID uint32) (*registeredReader, error) {
	r, err := conn.Execute("SHOW SLAVE HOSTS")
	if me := (*gomysql.MyError)(nil); errors.As(err, &me) && me.Code == gomysql.ER_PARSE_ERROR {
		// MySQL 8.4 knows only the new name.
		r, err = conn.Execute("SHOW REPLICAS")
	}
	if err != nil {
		return nil, fmt.Errorf("list the binlog readers (SHOW SLAVE HOSTS): %w", err)
	}
	id := strconv.FormatUint(uint64(serverID), 10)
	for i := 0; i < r.RowNumber(); i++ {
		if s, _ := r.GetString(i, 0); s != id {
			continue
		}
		h, _ := r.GetString(i, 1)
		p, _ := r.GetString(i, 2)
		return &registeredReader{host: h, port: p}, nil
	}
	return nil, nil
}

// dumpConnections lists the server's binlog dump connections of user, as
// "id N from addr (N s)": the server does not tell which one has which
// server_id, so the refusal lists the candidates for a KILL.
func dumpConnections(conn *client.Conn, user string) []string {
	r, err := conn.Execute(`SELECT ID, HOST, TIME FROM information_schema.PROCESSLIST
WHERE COMMAND LIKE 'Binlog Dump%' AND USER = ? ORDER BY ID`, user)
	if err != nil {
		return nil
	}
	var out []string
	for i := 0; i < r.RowNumber(); i++ {
		id, _ := r.GetInt(i, 0)
		host, _ := r.GetString(i, 1)
		secs, _ := r.GetInt(i, 2)
		out = append(out, fmt.Sprintf("id %d from %s (streaming for %d s)", id, host, secs))
	}
	return out
}

// checkReader makes sure no other live process streams this pipeline's
// binlog before this task backfills or starts its stream.
func (s *Source) checkReader(ctx context.Context, conn *client.Conn) error {
	r, err := lookupReader(conn, s.serverID)
	if me := (*gomysql.MyError)(nil); errors.As(err, &me) && deniedCodes[me.Code] {
		// MariaDB ≥ 10.5.2 lets only REPLICATION MASTER ADMIN list the
		// replicas, which a managed database's master user may lack: the
		// check is skipped, and the server still ends the older of two
		// readers with one server_id (then said in words, see stream.go).
		s.log.Warn("cannot check for another reader of this pipeline's binlog: the user may not list replicas (SHOW SLAVE HOSTS needs REPLICATION MASTER ADMIN on MariaDB ≥ 10.5.2, REPLICATION SLAVE on MySQL)", "err", err)
		return nil
	}
	if err != nil || r == nil {
		return err
	}
	if r.host == readerTag {
		return nil // our own stream, from before a lost connection: registering ends it
	}
	if s.opts.Leased {
		s.log.Warn("another connection streams this pipeline's binlog (a stale owner: this task holds the lease); registering with the same server_id makes the server end it",
			"server_id", s.serverID, "reader", r.host)
		return nil
	}
	if gone, err := s.readerGone(ctx, conn); gone || err != nil {
		return err
	}
	return fmt.Errorf("binlog stream %w: the binlog of pipeline %q is streamed by another reader registered with server_id %d as %q. "+
		"Only one task may stream a pipeline's binlog, and with the file checkpoint store Tributary does not end another reader's connection. "+
		"Stop the other task (a second task with the same pipeline name but another checkpoint store or path?), "+
		"or give this pipeline its own source.server_id; if the other reader is stuck, end its Binlog Dump connection with KILL <id> "+
		"(Binlog Dump connections of user %s: %s); then start again",
		source.ErrReaderInUse, s.opts.Pipeline, s.serverID, r.host, s.conn.User, s.dumpList(conn))
}

// readerGone waits up to readerWait for the registration with our
// server_id to go away (a task that just died leaves it behind a while).
func (s *Source) readerGone(ctx context.Context, conn *client.Conn) (bool, error) {
	deadline := time.Now().Add(readerWait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		if r2, err := lookupReader(conn, s.serverID); err != nil || r2 == nil {
			return err == nil, err
		}
	}
	return false, nil
}

// dumpList is dumpConnections in words.
func (s *Source) dumpList(conn *client.Conn) string {
	if c := dumpConnections(conn, s.conn.User); len(c) > 0 {
		return strings.Join(c, "; ")
	}
	return "none listed"
}

// checkNoReader is drop's guard: a pipeline whose binlog another process
// streams (registered with its server_id: a running task, perhaps on
// another host with another checkpoint store) is not dropped, as
// PostgreSQL refuses to drop a slot in use. Its signal rows and offsets
// record belong to the running task. A lease (Options.Leased) does not
// change that: the lease drop holds fences only tasks of the same store,
// table and region, and a copy of the configuration that names another
// (or the DynamoDB store beside a task with the file store) holds a lease
// the running task never sees. A stale owner of drop's own lease that
// still streams goes away once it fails to renew; one that is stuck is
// named, with the connections to KILL.
func (s *Source) checkNoReader(ctx context.Context, conn *client.Conn) error {
	r, err := lookupReader(conn, s.serverID)
	if me := (*gomysql.MyError)(nil); errors.As(err, &me) && deniedCodes[me.Code] {
		return fmt.Errorf("cannot tell whether another task streams pipeline %q's binlog: the user may not list replicas (SHOW SLAVE HOSTS needs REPLICATION MASTER ADMIN on MariaDB ≥ 10.5.2, REPLICATION SLAVE on MySQL); "+
			"grant it, or make sure no task of the pipeline runs and delete its rows of the signal table by hand: %w", s.opts.Pipeline, err)
	}
	if err != nil || r == nil || r.host == readerTag {
		return err
	}
	if gone, err := s.readerGone(ctx, conn); gone || err != nil {
		return err
	}
	return fmt.Errorf("binlog stream %w: pipeline %q is running: its binlog is streamed by a reader registered with server_id %d as %q "+
		"(a task with this pipeline name, perhaps on another host or with another checkpoint store or path, or another pipeline given the same source.server_id). "+
		"Dropping it would delete the running task's signal rows and offsets record. Stop that task first, then drop; "+
		"if it is stuck, end its Binlog Dump connection with KILL <id> (Binlog Dump connections of user %s: %s)",
		source.ErrReaderInUse, s.opts.Pipeline, s.serverID, r.host, s.conn.User, s.dumpList(conn))
}

// takenOver recognises the server's reply to a stream whose server_id
// another replica registered with meanwhile (MariaDB's 4052
// ER_SLAVE_SAME_ID, MySQL's 1236 "A slave with the same server_uuid/
// server_id …"): not a lost binlog position, but another task that took
// the stream over.
func (s *Source) takenOver(err error) error {
	if err == nil || !strings.Contains(err.Error(), "same server_uuid/server_id") {
		return err
	}
	return fmt.Errorf("binlog stream %w: another reader registered with this pipeline's server_id %d and the server ended this task's binlog stream "+
		"(a second task with the same pipeline name, holding the lease or started by an older Tributary?): %s",
		source.ErrReaderInUse, s.serverID, err.Error())
}

// deniedCodes are the server's "not allowed" errors: access denied for
// the database, the table, or a privilege the statement needs.
var deniedCodes = map[uint16]bool{gomysql.ER_DBACCESS_DENIED_ERROR: true, gomysql.ER_TABLEACCESS_DENIED_ERROR: true, gomysql.ER_SPECIFIC_ACCESS_DENIED_ERROR: true}
