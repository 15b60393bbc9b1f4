// Package mysql is the MySQL / MariaDB driver of the capture loop
// (pkg/capture, capture.Database): it streams row events from the binary
// log (go-mysql's replication client), resuming from a GTID set or a
// file/position, and reads the chunks and writes the watermarks (to a
// signal table) of the snapshots taken while it streams (pkg/snapshot; no
// global read lock, so it runs with the privileges of an RDS master user).
//
// Promises: a position is emitted only after a transaction's commit (XID, or
// the statement of an implicitly committed DDL), so a checkpoint never sits
// inside a transaction; a binlog purged past the checkpoint fails with
// "resnapshot required" rather than silently starting from now. The flavour
// (MySQL or MariaDB) is detected at start and decides the GTID format and
// the Debezium connector name ("mysql" or "mariadb").
//
// Schema changes: a DDL statement in the binlog that names a captured table
// makes the source re-read that table's columns from information_schema
// (the shape now). Each rows event is then checked against the shape its
// table map event logged (shape.go): with binlog_row_metadata = FULL a
// row written under an older shape is decoded with that shape; without
// it, rows are decoded with a schema history that DDL from the binlog is
// applied to and that travels in the checkpoint (history.go, ddl.go); a
// history first read from the catalog needs the binlog between the
// checkpoint and that read to be replayable (replay.go).
//
// Transactions: only XID, COMMIT, a transaction-ending ROLLBACK, DDL and
// statements outside BEGIN … COMMIT are commits; SAVEPOINT, ROLLBACK TO
// and RELEASE inside a transaction are not. XA transactions that change a
// captured table are refused.
//
// Debezium format, checked side by side with Debezium's MariaDB connector
// (integration/mysql/mysql_fidelity_test.go): source.pos is the start of the
// rows event (not of the transaction) and source.row the row's index in
// it; thread is null on MariaDB (its GTID event replaces the BEGIN query
// that carries the thread id); snapshot rows have server_id 0 and gtid
// null, as no binlog event was read; MariaDB's JSON is LONGTEXT, so its
// columns are plain strings, not io.debezium.data.Json; schemas carry the
// columns' defaults (see columnDefault); FLOAT values are float32 widened
// to double; BINARY(n) keeps its trailing zero bytes; latin1 text is
// converted to UTF-8. One deliberate difference: Debezium writes a
// TIMESTAMP(n) value read by its snapshot with the fraction's trailing
// zeros dropped ("…00.12Z") and the same value from the binlog with n
// digits ("…00.120Z"); Tributary always writes n digits.
package mysql

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// ErrPrerequisite marks a server setting that CDC needs.
var ErrPrerequisite = errors.New("mysql prerequisite not met")

// errFreshWindowDDL is a fresh start that a schema change during it left
// undecodable (Start): retriable, the next attempt reads a newer position.
var errFreshWindowDDL = errors.New("a captured table's schema changed during this fresh start; starting again from a newer binlog position")

// Flavours, also the Debezium connector names.
const (
	flavorMySQL   = "mysql"
	flavorMariaDB = "mariadb"
)

// Source reads one MySQL or MariaDB server.
type Source struct {
	opts     source.Options
	conn     Conn
	serverID uint32
	log      *slog.Logger
	sel      *config.Selection // source.tables, exclude_tables, exclude_columns, mask_columns
	// projections caches the published form of each shape (columns.go):
	// *change.Table → *projected.
	projections sync.Map

	flavor string // flavorMySQL or flavorMariaDB, set by Run
	db     *client.Conn

	mu     sync.Mutex
	tables map[string]*table // "db.table" → captured table
	gone   map[string]*table // tables of the set met in the binlog that no longer exist (goneTable)
	acked  change.Position
	hist   *history // the schema history, without binlog_row_metadata = FULL (history.go)
	// collations maps the server's collation ids to their character
	// sets, for the table map's column charsets (selectTables reads it).
	collations map[uint64]string

	// streamStart is where the stream started (the file and pos of read
	// rows). CapturedSet is the captured set's names for the positions
	// (capturedChangedLocked); out the capture loop's side of the stream,
	// from Start on.
	streamStart atomic.Pointer[position]
	source.CapturedSet
	out source.Stream

	// What the current attempt of the capture loop found: the server's
	// settings and the binlog's end before discovery (Connect), the
	// checkpoint's position (Resume), where streaming starts (start), and
	// the cancel of the session's close at the attempt's end (stopClose).
	srv server
	// objects is the views' definitions and the triggers' bodies by
	// object (throughObjects), read by the stream when a statement logged
	// as text needs them; nil until then and after each DDL statement.
	objects   map[[2]string][]string
	now       position
	fresh     bool // Fresh ran: no position was handed on in this attempt
	from      position
	start     position
	stopClose func() bool
}

// New parses the connection settings; it does not connect yet.
func New(_ context.Context, opts source.Options) (*Source, error) {
	c, err := ParseURL(opts.Config.URL)
	if err != nil {
		return nil, fmt.Errorf("source.url: %w", err)
	}
	sel, err := opts.Config.Selection()
	if err != nil {
		return nil, err
	}
	id := settingsOf(opts).ServerID
	if id == 0 {
		id = DefaultServerID(opts.Pipeline)
	}
	s := &Source{
		opts:     opts,
		conn:     c,
		serverID: id,
		sel:      sel,
		log:      opts.Log().With("source", "mysql"),
		tables:   map[string]*table{},
	}
	return s, nil
}

// Snapshots implements capture.Database: chunk reads, and watermarks in
// the signal table (snapshot.go).
func (s *Source) Snapshots() (snapshot.Database, snapshot.Config) {
	return mySnapshots{s}, snapshot.Config{
		IDPrefix:  "my",
		TableName: func(id change.TableID) string { return id.DB + "." + id.Name },
		Log:       s.log,
	}
}

// connect opens a session with the settings the decoders expect: UTC for
// TIMESTAMP values, utf8mb4 text, and a sql_mode without
// NO_BACKSLASH_ESCAPES (literals in backfill queries are escaped with
// backslashes).
//
// ctx ends the handshake and the settings too (go-mysql's reads have no
// deadline; a server or proxy that accepts and never answers held a stop
// for ever): the socket is closed when ctx is done until connect returns,
// and the caller's closeOnDone takes over from there.
func (s *Source) connect(ctx context.Context) (*client.Conn, error) {
	dial := source.Dial(s.opts.Dial)
	var stop func() bool
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	closing := func(dctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(dctx, network, addr)
		if err == nil {
			stop = context.AfterFunc(ctx, func() { c.Close() }) // ctx: the dial's own ends with the dial
		}
		return c, err
	}
	conn, err := client.ConnectWithDialer(ctx, "", s.conn.Addr(), s.conn.User, s.conn.Password, "", closing, s.tlsOption())
	if err != nil {
		// The driver's messages name the user and address, never the password.
		return nil, fmt.Errorf("connect to mysql at %s: %w", s.conn.Addr(), err)
	}
	for _, q := range []string{
		"SET time_zone = '+00:00'",
		"SET NAMES utf8mb4",
		"SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '')",
	} {
		if _, err := conn.Execute(q); err != nil {
			conn.Close()
			return nil, fmt.Errorf("mysql session setup (%s): %w", q, err)
		}
	}
	return conn, nil
}

// closeOnDone closes conn's socket when ctx is done, so that a query
// waiting on the server in another goroutine returns. The socket alone:
// go-mysql's Close also resets the connection's packet sequence, which
// that query and the owner's own Close write too (go test -race).
func closeOnDone(ctx context.Context, conn *client.Conn) (stop func() bool) {
	sock := socket(conn)
	return context.AfterFunc(ctx, func() { sock.Close() })
}

// socket is conn's network connection, under TLS when the session is
// encrypted: closing it ends a read in another goroutine at once, where a
// tls.Conn's Close first sends its close_notify alert, which waits up to
// five seconds for a server that stopped reading.
func socket(conn *client.Conn) net.Conn {
	if tc, ok := conn.Conn.Conn.(*tls.Conn); ok {
		return tc.NetConn()
	}
	return conn.Conn.Conn
}

// Connect implements capture.Database: the session, the flavour, the
// prerequisites, and another live reader of the pipeline's binlog,
// refused before the backfill (a second task must not publish the tables
// again).
func (s *Source) Connect(ctx context.Context) error {
	s.Close()
	s.now, s.from, s.start, s.fresh = position{}, position{}, position{}, false
	conn, err := s.connect(ctx)
	if err != nil {
		return err
	}
	s.db = conn
	s.stopClose = closeOnDone(ctx, conn)
	if s.flavor, err = detectFlavor(conn); err != nil {
		return err
	}
	if s.srv, err = checkPrerequisites(conn, s.flavor); err != nil {
		return err
	}
	if err := s.checkReader(ctx, conn); err != nil {
		return err
	}
	// A fresh start streams from the binlog's end as it was before
	// Discover lists the tables: a table created in between is then in
	// the stream (its CREATE TABLE after the position), where a position
	// read after the list left it out of the run. Rows written between
	// the two are both streamed and read by the snapshot.
	s.now, err = s.binlogNow(conn, s.srv)
	return err
}

// Discover implements capture.Database: the selected tables and the
// signal table of the watermarks. A table whose key the column rules leave
// out or mask (or Tributary cannot encode) is an error naming it when
// source.tables names it, and is left out with a warning when only a
// pattern (or no list) selects it: the same at every start, a reconnect
// included, as when such a table is created while streaming.
func (s *Source) Discover(_ context.Context) ([]string, error) {
	tables, err := s.selectTables(s.db)
	if err != nil {
		return nil, err
	}
	var problems []error
	kept := tables[:0:0]
	for _, t := range tables {
		err := s.columnProblems(t)
		switch {
		case err == nil:
			kept = append(kept, t)
		case s.sel.Named(t.id()):
			problems = append(problems, err)
		default:
			s.log.Warn("a table is not captured: its key cannot be published whole", "table", t.id(), "problem", err.Error())
			s.mu.Lock()
			delete(s.tables, t.id())
			s.mu.Unlock()
		}
	}
	if err := errors.Join(problems...); err != nil {
		return nil, err
	}
	tables = kept
	s.reportMissing()
	if err := s.ensureSignalTable(s.db); err != nil {
		return nil, err
	}
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.id()
	}
	s.mu.Lock()
	s.capturedChangedLocked()
	s.mu.Unlock()
	return names, nil
}

// Resume implements capture.Database: the checkpoint must be of this
// flavour, and the server must still hold its binlog; the tables its
// captured set lacks were added while the pipeline was down.
func (s *Source) Resume(_ context.Context, from source.Checkpoint, st source.Stream) ([]string, error) {
	s.TellCaptured(st)
	if err := s.resume(from.Cursor); err != nil {
		return nil, err
	}
	return addedTables(from.Captured, s.CapturedNames()), nil
}

// resume reads the checkpoint's cursor.
func (s *Source) resume(from change.Position) error {
	pos, err := decodePosition(from)
	if err != nil {
		return err
	}
	if pos.Flavor != s.flavor {
		return fmt.Errorf("the checkpoint was taken on %s, the server is %s: %w", pos.Flavor, s.flavor, source.ErrResnapshotRequired)
	}
	if err := checkRetained(s.db, s.flavor, pos); err != nil {
		return err
	}
	s.from, s.start = pos, pos
	return nil
}

// Fresh implements capture.Database: stream from the binlog's end as it
// was before the tables were discovered (Connect).
func (s *Source) Fresh(_ context.Context, _ bool) error {
	pos := s.now
	s.start, s.fresh = pos, true
	s.log.Info("snapshotting while streaming", "file", pos.File, "pos", pos.Pos, "gtid", pos.GTID, "tables", len(s.CapturedNames()))
	return nil
}

// Legacy implements capture.Legacy: a backfill of an earlier release,
// unfinished, is read on after its last key while streaming from its
// start.
func (s *Source) Legacy(_ context.Context, cursor change.Position, tables []string) (snapshot.State, bool, error) {
	if err := s.resume(cursor); err != nil {
		return snapshot.State{}, false, err
	}
	return legacyState(s.from, tables), true, nil
}

// Start implements capture.Database: the captured set, the schema
// history for the stream, then the position it starts from.
func (s *Source) Start(ctx context.Context, st source.Stream) error {
	pos := s.start
	pos.Table, pos.After = "", nil // those of a legacy backfill
	s.start = pos
	s.out = st
	s.TellCaptured(st)
	if err := s.startHistory(ctx, s.srv, pos, st); err != nil {
		if s.fresh && errors.Is(err, source.ErrResnapshotRequired) {
			// A table was altered after rows were written to it between
			// the start position (Connect) and the catalog's read: those
			// rows cannot be decoded (seedHistory). Nothing was handed on
			// yet, so nothing is lost: the reconnect loop starts again
			// from a newer position (Retriable).
			return fmt.Errorf("%w: %v", errFreshWindowDDL, err)
		}
		return err
	}
	start := pos
	s.streamStart.Store(&start)
	if err := st.Heartbeat(ctx, s.encode(pos)); err != nil {
		return err
	}
	s.log.Info("streaming binlog", "flavor", s.flavor, "file", pos.File, "pos", pos.Pos, "gtid", pos.GTID, "row_metadata_full", s.srv.fullMetadata)
	return nil
}

// Stream implements capture.Database.
func (s *Source) Stream(ctx context.Context, st source.Stream) error {
	s.out = st
	return s.stream(ctx, s.srv, s.start, st)
}

// legacyState turns an unfinished backfill of an earlier release (tables
// in name order; those before pos.Table done, pos.After the hex key of
// the last row published of pos.Table) into the engine's state.
func legacyState(pos position, names []string) snapshot.State {
	var st snapshot.State
	for _, n := range slices.Sorted(slices.Values(names)) {
		if pos.Table != "" && n < pos.Table {
			st.Done = append(st.Done, n)
			continue
		}
		ts := snapshot.TableState{Table: n, Initial: true}
		if n == pos.Table {
			for _, h := range pos.After {
				raw, err := hex.DecodeString(h)
				if err != nil {
					ts.Key = nil
					break
				}
				ts.Key = append(ts.Key, raw)
			}
		}
		st.Tables = append(st.Tables, ts)
	}
	return st
}

// binlogNow is the binlog position of the server now (needs REPLICATION
// CLIENT, MariaDB: BINLOG MONITOR): streaming starts there, and the
// initial snapshot is read while it streams.
func (s *Source) binlogNow(conn *client.Conn, srv server) (position, error) {
	pos := position{Flavor: s.flavor}
	r, err := conn.Execute("SHOW MASTER STATUS")
	if err != nil {
		r, err = conn.Execute("SHOW BINARY LOG STATUS") // MySQL 8.4+
	}
	if err != nil {
		return pos, fmt.Errorf("read the binlog position (needs REPLICATION CLIENT; MariaDB: BINLOG MONITOR): %w", err)
	}
	if len(r.Values) == 0 {
		return pos, fmt.Errorf("no binlog position: %w: enable the binary log (log_bin)", ErrPrerequisite)
	}
	f, _ := r.GetString(0, 0)
	p, _ := r.GetInt(0, 1)
	pos.File, pos.Pos = strings.Clone(f), uint32(p)
	switch {
	case s.flavor == flavorMariaDB:
		r, err := conn.Execute(fmt.Sprintf("SELECT BINLOG_GTID_POS(%s, %d)", quoteString(pos.File), pos.Pos))
		if err != nil {
			return pos, fmt.Errorf("BINLOG_GTID_POS: %w", err)
		}
		g, _ := r.GetString(0, 0)
		pos.GTID = strings.Clone(g)
	case srv.gtid && len(r.Fields) >= 5:
		g, _ := r.GetString(0, 4)
		pos.GTID = strings.Join(strings.Fields(g), "")
	}
	return pos, nil
}

// Acknowledge implements capture.Database. The server expires binlog on
// its own schedule (binlog_expire_logs_seconds), so there is nothing to
// release; the position is kept for Close's log line.
func (s *Source) Acknowledge(cursor change.Position) {
	s.mu.Lock()
	s.acked = cursor
	s.mu.Unlock()
}

// Close implements capture.Database.
func (s *Source) Close() error {
	if s.stopClose != nil {
		s.stopClose()
	}
	if s.db != nil {
		s.db.Close()
	}
	return nil
}

// detectFlavor tells MariaDB from MySQL by the version string.
func detectFlavor(conn *client.Conn) (string, error) {
	r, err := conn.Execute("SELECT VERSION()")
	if err != nil {
		return "", fmt.Errorf("read server version: %w", err)
	}
	v, _ := r.GetString(0, 0)
	if strings.Contains(strings.ToLower(v), "mariadb") {
		return flavorMariaDB, nil
	}
	return flavorMySQL, nil
}
