// Package mysql is the MySQL / MariaDB source: it streams row events from
// the binary log (go-mysql's replication client), resuming from a GTID set
// or a file/position, and snapshots tables while it streams (the capture
// engine, pkg/snapshot, with watermarks written to a signal table; no
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
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
)

func init() { source.Register(config.SourceMySQL, New) }

// ErrResnapshotRequired is source.ErrResnapshotRequired: the checkpoint's
// position can no longer be resumed from.
var ErrResnapshotRequired = source.ErrResnapshotRequired

// ErrPrerequisite marks a server setting that CDC needs.
var ErrPrerequisite = errors.New("mysql prerequisite not met")

// Flavours, also the Debezium connector names.
const (
	flavorMySQL   = "mysql"
	flavorMariaDB = "mariadb"
)

// Source reads one MySQL or MariaDB server.
type Source struct {
	opts     source.Options
	conn     config.MySQLConn
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

	// engine runs the snapshots; streamStart is where the stream started
	// (the file and pos of read rows). started says Run listed the
	// tables; all that Snapshot(nil) came before. tablesJSON is the
	// captured set's names for the positions (guarded by mu).
	engine      *snapshot.Engine
	streamStart atomic.Pointer[position]
	started     bool
	all         bool
	tablesJSON  []byte
}

// New parses the connection settings; it does not connect yet.
func New(_ context.Context, opts source.Options) (source.Source, error) {
	c, err := config.ParseMySQLURL(opts.Config.URL)
	if err != nil {
		return nil, fmt.Errorf("source.url: %w", err)
	}
	sel, err := opts.Config.Selection()
	if err != nil {
		return nil, err
	}
	id := opts.Config.ServerID
	if id == 0 {
		id = config.DefaultServerID(opts.Pipeline)
	}
	s := &Source{
		opts:     opts,
		conn:     c,
		serverID: id,
		sel:      sel,
		log:      opts.Log().With("source", "mysql"),
		tables:   map[string]*table{},
	}
	s.engine = snapshot.New(mySnapshots{s}, snapshot.Config{
		Parallelism: opts.Config.SnapshotParallelism,
		Backlog:     opts.SnapshotBacklog,
		IDPrefix:    "my",
		TableName:   func(id change.TableID) string { return id.DB + "." + id.Name },
		Log:         s.log,
	})
	return s, nil
}

// connect opens a session with the settings the decoders expect: UTC for
// TIMESTAMP values, utf8mb4 text, and a sql_mode without
// NO_BACKSLASH_ESCAPES (literals in backfill queries are escaped with
// backslashes).
func (s *Source) connect(ctx context.Context) (*client.Conn, error) {
	conn, err := client.ConnectWithDialer(ctx, "", s.conn.Addr(), s.conn.User, s.conn.Password, "", source.Dial(s.opts.Dial), s.tlsOption())
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

// Run implements source.Source.
func (s *Source) Run(ctx context.Context, from change.Position, emit func(context.Context, *change.Event) error) error {
	conn, err := s.connect(ctx)
	if err != nil {
		return err
	}
	s.db = conn
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	defer conn.Close() // a reconnect runs Run again with a new one

	if s.flavor, err = detectFlavor(conn); err != nil {
		return err
	}
	srv, err := checkPrerequisites(conn, s.flavor)
	if err != nil {
		return err
	}
	// Before the backfill: a second task must not publish the tables again.
	if err := s.checkReader(ctx, conn); err != nil {
		return err
	}
	tables, err := s.selectTables(conn)
	if err != nil {
		return err
	}
	var problems []error
	for _, t := range tables {
		if err := s.columnProblems(t); err != nil {
			problems = append(problems, err)
		}
	}
	if err := errors.Join(problems...); err != nil {
		return err
	}
	s.reportMissing()

	if err := s.ensureSignalTable(conn); err != nil {
		return err
	}

	var pos position
	if from != nil {
		if pos, err = decodePosition(from); err != nil {
			return err
		}
		if pos.Flavor != s.flavor {
			return fmt.Errorf("the checkpoint was taken on %s, the server is %s: %w", pos.Flavor, s.flavor, ErrResnapshotRequired)
		}
		if err := checkRetained(conn, s.flavor, pos); err != nil {
			return err
		}
	}
	state, err := snapshot.DecodeState(pos.Snapshot)
	if err != nil {
		return fmt.Errorf("mysql position: %w", err)
	}
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.id()
	}
	switch {
	case from == nil:
		// Stream from the binlog's end now, and snapshot every table
		// while streaming.
		if pos, err = s.binlogNow(conn, srv); err != nil {
			return err
		}
		s.engine.Restore(snapshot.State{})
		if s.opts.Config.BackfillEnabled() {
			s.engine.Queue(names, true)
		}
		s.log.Info("snapshotting while streaming", "file", pos.File, "pos", pos.Pos, "gtid", pos.GTID, "tables", len(tables))
	case !pos.Backfilled:
		// A backfill of an earlier release, unfinished: the engine reads
		// on after its last key while streaming from its start.
		s.engine.Restore(legacyState(pos, names))
	default:
		s.engine.Restore(state)
		if added := addedTables(pos.Tables, names); len(added) > 0 && s.opts.Config.BackfillEnabled() {
			s.log.Info("snapshotting tables added since the last run", "tables", strings.Join(added, ", "))
			s.engine.Queue(added, false)
		}
	}
	pos.Backfilled, pos.Table, pos.After = true, "", nil
	s.mu.Lock()
	s.started = true
	all := s.all
	s.all = false
	s.capturedChangedLocked()
	s.mu.Unlock()
	if all {
		s.engine.Queue(names, false)
	}
	if err := s.startHistory(ctx, srv, pos, emit); err != nil {
		return err
	}
	start := pos
	s.streamStart.Store(&start)
	if err := emit(ctx, &change.Event{Position: s.encode(pos)}); err != nil {
		return err
	}
	s.log.Info("streaming binlog", "flavor", s.flavor, "file", pos.File, "pos", pos.Pos, "gtid", pos.GTID, "row_metadata_full", srv.fullMetadata)
	// The snapshot workers live as long as this stream; one that fails
	// ends it (and the reconnect loop decides).
	sctx, cancel := context.WithCancelCause(ctx)
	wait := s.engine.Start(sctx, cancel)
	err = s.stream(sctx, srv, pos, emit)
	cancel(err)
	wait()
	if cause := context.Cause(sctx); ctx.Err() == nil && cause != nil && !errors.Is(cause, context.Canceled) && (err == nil || errors.Is(err, context.Canceled)) {
		return cause
	}
	return err
}

// Ack implements source.Source. The server expires binlog on its own
// schedule (binlog_expire_logs_seconds), so there is nothing to release;
// the position is kept for Close's log line.
func (s *Source) Ack(pos change.Position) {
	s.mu.Lock()
	s.acked = pos
	s.mu.Unlock()
}

// Close implements source.Source.
func (s *Source) Close() error {
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
