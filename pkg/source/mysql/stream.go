package mysql

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/google/uuid"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// txState is the transaction being decoded.
type txState struct {
	gtid         string
	thread       int64
	commitMicros int64
}

// streamer decodes the binlog after pos.
type streamer struct {
	src  *Source
	srv  server
	emit func(context.Context, *change.Event) error
	file string          // current binlog file
	gset gomysql.GTIDSet // executed GTIDs up to the last commit; nil without GTIDs
	tx   txState
}

// stream reads the binlog from pos until ctx is done or an error occurs,
// emitting row changes of captured tables and a position after each commit.
func (s *Source) stream(ctx context.Context, srv server, pos position, emit func(context.Context, *change.Event) error) error {
	cfg := replication.BinlogSyncerConfig{
		ServerID:                s.serverID,
		Flavor:                  s.flavor,
		Host:                    s.conn.Host,
		Port:                    s.conn.Port,
		User:                    s.conn.User,
		Password:                s.conn.Password,
		Charset:                 "utf8mb4",
		UseDecimal:              true,
		ParseTime:               false,
		TimestampStringLocation: time.UTC,
		HeartbeatPeriod:         10 * time.Second,
		ReadTimeout:             60 * time.Second,
		DisableRetrySync:        true,
		Logger:                  slog.New(slog.DiscardHandler),
	}
	var tlsErr error
	if cfg.TLSConfig, tlsErr = s.tlsConfig(); tlsErr != nil {
		return tlsErr
	}
	syncer := replication.NewBinlogSyncer(cfg)
	defer syncer.Close()

	st := &streamer{src: s, srv: srv, emit: emit, file: pos.File}
	var bs *replication.BinlogStreamer
	var err error
	if pos.GTID != "" {
		if st.gset, err = parseGTIDSet(s.flavor, pos.GTID); err != nil {
			return err
		}
		bs, err = syncer.StartSyncGTID(st.gset.Clone())
	} else {
		bs, err = syncer.StartSync(gomysql.Position{Name: pos.File, Pos: pos.Pos})
	}
	if err != nil {
		return classify(fmt.Errorf("start binlog stream: %w", err))
	}
	for {
		ev, err := bs.GetEvent(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return classify(fmt.Errorf("binlog stream: %w", err))
		}
		if err := st.handle(ctx, ev); err != nil {
			return err
		}
	}
}

// classify marks the server's "could not find the first log file / GTID"
// replies (ER_MASTER_FATAL_ERROR_READING_BINLOG, 1236) as a lost position.
func classify(err error) error {
	var me *gomysql.MyError
	if errors.As(err, &me) && me.Code == gomysql.ER_MASTER_FATAL_ERROR_READING_BINLOG {
		return fmt.Errorf("%w: %w", err, ErrResnapshotRequired)
	}
	if strings.Contains(err.Error(), "1236") {
		return fmt.Errorf("%w: %w", err, ErrResnapshotRequired)
	}
	return err
}

func (st *streamer) handle(ctx context.Context, ev *replication.BinlogEvent) error {
	h := ev.Header
	switch e := ev.Event.(type) {
	case *replication.RotateEvent:
		st.file = string(e.NextLogName)
	case *replication.GTIDEvent:
		u, err := uuid.FromBytes(e.SID)
		if err != nil {
			return fmt.Errorf("binlog GTID event: %w", err)
		}
		st.tx = txState{gtid: fmt.Sprintf("%s:%d", u, e.GNO), commitMicros: int64(h.Timestamp) * 1e6}
		if st.gset == nil {
			st.gset = &gomysql.MysqlGTIDSet{Sets: map[string]*gomysql.UUIDSet{}}
		}
		if set, ok := st.gset.(*gomysql.MysqlGTIDSet); ok {
			set.AddGTID(u, e.GNO)
		}
	case *replication.MariadbGTIDEvent:
		g := e.GTID
		st.tx = txState{gtid: g.String(), commitMicros: int64(h.Timestamp) * 1e6}
		if st.gset == nil {
			st.gset = &gomysql.MariadbGTIDSet{Sets: map[uint32]map[uint32]*gomysql.MariadbGTID{}}
		}
		if set, ok := st.gset.(*gomysql.MariadbGTIDSet); ok {
			if err := set.AddSet(&g); err != nil {
				return fmt.Errorf("binlog GTID %s: %w", g.String(), err)
			}
		}
	case *replication.QueryEvent:
		return st.query(ctx, h, e)
	case *replication.RowsEvent:
		return st.rows(ctx, ev.Header, e)
	case *replication.XIDEvent:
		return st.commit(ctx, h)
	}
	return nil
}

// commit emits the position just after the committing event.
func (st *streamer) commit(ctx context.Context, h *replication.EventHeader) error {
	p := position{Flavor: st.src.flavor, File: st.file, Pos: h.LogPos, Backfilled: true}
	if st.gset != nil {
		p.GTID = st.gset.String()
	}
	st.tx = txState{}
	return st.emit(ctx, &change.Event{Position: p.encode()})
}

// ddlTable finds the table names a DDL statement touches: ALTER / RENAME /
// DROP / CREATE / TRUNCATE TABLE name, and RENAME's targets.
var ddlTable = regexp.MustCompile("(?i)(?:ALTER\\s+(?:ONLINE\\s+|IGNORE\\s+)*TABLE|RENAME\\s+TABLE|DROP\\s+TABLE(?:\\s+IF\\s+EXISTS)?|CREATE\\s+(?:OR\\s+REPLACE\\s+)?TABLE(?:\\s+IF\\s+NOT\\s+EXISTS)?|TRUNCATE(?:\\s+TABLE)?|\\bTO|,)\\s+((?:`[^`]+`|[A-Za-z0-9_$]+)(?:\\s*\\.\\s*(?:`[^`]+`|[A-Za-z0-9_$]+))?)")

// query handles BEGIN (the thread id), COMMIT of non-transactional
// changes, and DDL: re-reads the shape of every captured table it names,
// then emits a position (DDL commits implicitly).
func (st *streamer) query(ctx context.Context, h *replication.EventHeader, e *replication.QueryEvent) error {
	q := strings.TrimSpace(string(e.Query))
	upper := strings.ToUpper(q)
	switch {
	case upper == "BEGIN":
		st.tx.thread = int64(e.SlaveProxyID)
		if st.tx.commitMicros == 0 {
			st.tx.commitMicros = int64(h.Timestamp) * 1e6
		}
		return nil
	case upper == "COMMIT":
		return st.commit(ctx, h)
	}
	defaultDB := string(e.Schema)
	for _, m := range ddlTable.FindAllStringSubmatch(q, -1) {
		db, name := defaultDB, m[1]
		if i := dotOutsideQuotes(name); i >= 0 {
			db, name = unquote(name[:i]), name[i+1:]
		}
		name = unquote(name)
		if err := st.refresh(db, name); err != nil {
			return err
		}
	}
	return st.commit(ctx, h)
}

// refresh re-reads a captured table's shape after DDL.
func (st *streamer) refresh(db, name string) error {
	s := st.src
	s.mu.Lock()
	t := s.tables[db+"."+name]
	s.mu.Unlock()
	if t == nil {
		return nil
	}
	if err := describe(s.db, t, t.t); err != nil {
		if strings.Contains(err.Error(), "table not found") {
			return nil // dropped or renamed away: nothing more arrives for it
		}
		return err
	}
	s.log.Info("table shape re-read after DDL", "table", t.id(), "columns", len(t.cols), "version", t.t.Version)
	return nil
}

func (st *streamer) rows(ctx context.Context, h *replication.EventHeader, e *replication.RowsEvent) error {
	var op change.Op
	switch h.EventType {
	case replication.WRITE_ROWS_EVENTv0, replication.WRITE_ROWS_EVENTv1, replication.WRITE_ROWS_EVENTv2, replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1:
		op = change.OpCreate
	case replication.UPDATE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2, replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1, replication.PARTIAL_UPDATE_ROWS_EVENT:
		op = change.OpUpdate
	case replication.DELETE_ROWS_EVENTv0, replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2, replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		op = change.OpDelete
	default:
		return nil
	}
	db, name := string(e.Table.Schema), string(e.Table.Table)
	st.src.mu.Lock()
	t := st.src.tables[db+"."+name]
	st.src.mu.Unlock()
	if t == nil {
		return nil
	}
	if int(e.ColumnCount) != len(t.cols) {
		// A DDL we did not see (or not yet): re-read once.
		if err := describe(st.src.db, t, t.t); err != nil {
			return err
		}
		if int(e.ColumnCount) != len(t.cols) {
			return fmt.Errorf("%s: binlog row has %d columns, the table has %d now (DDL since this event; see the package doc): %w",
				t.id(), e.ColumnCount, len(t.cols), ErrResnapshotRequired)
		}
	}
	pos := int64(h.LogPos) - int64(h.EventSize)
	src := change.Source{
		Connector:    st.src.flavor,
		Name:         st.src.opts.TopicPrefix,
		DB:           db,
		Table:        name,
		CommitMicros: st.tx.commitMicros,
		ServerID:     int64(h.ServerID),
		GTID:         st.tx.gtid,
		File:         st.file,
		Pos:          pos,
		Thread:       st.tx.thread,
	}
	if src.CommitMicros == 0 {
		src.CommitMicros = int64(h.Timestamp) * 1e6
	}
	step := 1
	if op == change.OpUpdate {
		step = 2
	}
	for i, r := 0, 0; i+step <= len(e.Rows); i, r = i+step, r+1 {
		ev := &change.Event{Table: t.t, Op: op, Source: src, ID: fmt.Sprintf("my:%s:%d:%d", st.file, pos, r)}
		ev.Source.Row = int32(r)
		first, err := decodeRow(t, e.Rows[i])
		if err != nil {
			return fmt.Errorf("%s at %s:%d: %w", t.id(), st.file, pos, err)
		}
		switch op {
		case change.OpCreate:
			ev.After = first
		case change.OpDelete:
			ev.Before = first
		case change.OpUpdate:
			ev.Before = first
			if ev.After, err = decodeRow(t, e.Rows[i+1]); err != nil {
				return fmt.Errorf("%s at %s:%d: %w", t.id(), st.file, pos, err)
			}
			if keyChanged(t, ev.Before, ev.After) {
				// Like Debezium: a delete of the old key, then a create of the new one.
				del := *ev
				del.Op, del.After, del.ID = change.OpDelete, nil, ev.ID+":old"
				if err := st.emit(ctx, &del); err != nil {
					return err
				}
				ev.Op, ev.Before = change.OpCreate, nil
			}
		}
		if err := st.emit(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

func decodeRow(t *table, vals []any) (change.Row, error) {
	if len(vals) != len(t.cols) {
		return nil, fmt.Errorf("row has %d values, table has %d columns", len(vals), len(t.cols))
	}
	row := make(change.Row, len(vals))
	for i, v := range vals {
		val, err := decodeBinlog(&t.cols[i], v)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", t.cols[i].name, err)
		}
		row[i] = val
	}
	return row, nil
}

func keyChanged(t *table, a, b change.Row) bool {
	for _, k := range t.key {
		x, y := a[k], b[k]
		if x.Kind != y.Kind || x.Int != y.Int || x.Float != y.Float || string(x.Bytes) != string(y.Bytes) {
			return true
		}
	}
	return false
}

func dotOutsideQuotes(s string) int {
	in := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '`':
			in = !in
		case '.':
			if !in {
				return i
			}
		}
	}
	return -1
}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
	}
	return s
}
