package mysql

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/google/uuid"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// txState is the transaction being decoded.
type txState struct {
	gtid         string
	thread       int64
	commitMicros int64
	open         bool // after BEGIN (or XA START): only COMMIT/ROLLBACK/XID end it
	xa           bool // the transaction is an XA transaction
}

// streamer decodes the binlog after pos.
type streamer struct {
	src  *Source
	srv  server
	out  source.Stream   // the capture loop's
	file string          // current binlog file
	gset gomysql.GTIDSet // executed GTIDs up to the last commit; nil without GTIDs
	tx   txState
	// history holds the past shapes rows were decoded with (shapeFor),
	// by table and shape.
	history map[string]*table
	hist    *history // the schema history (MINIMAL metadata), or nil
	// crc: the binlog's events end in a CRC32 checksum (the format
	// description says so), which tableMap leaves out of a table map's
	// bytes.
	crc bool
	// maps holds, by table id, the last table map and the shape its rows
	// were decoded with (shapes.go).
	maps map[uint64]*mapShape
	// slabs hands out the events, rows and event IDs of streamed rows:
	// rows are never reused (pkg/change/change.go), an event struct is
	// only the consumer's while the loop's Change runs.
	slabs snapshot.Slabs
	// postHeader is the format description's post-header length of each
	// event type (rowsBody reads a rows event's header with it).
	postHeader []byte
	// reader reads a MariaDB rows event's row images (rows.go).
	reader rowsReader
	// parser parses the events not read in place (event); format is the
	// binlog file's format description event, which a new parser is
	// handed first (statementEnd).
	parser *replication.BinlogParser
	format []byte
	// inPlace: table maps seen before and rows events are read in place
	// (MariaDB, event); header and rowsEvent are what they are read into.
	inPlace   bool
	header    replication.EventHeader
	rowsEvent replication.RowsEvent
}

// stream reads the binlog from pos until ctx is done or an error occurs,
// emitting row changes of captured tables and a position after each commit.
func (s *Source) stream(ctx context.Context, srv server, pos position, out source.Stream) error {
	cfg, err := s.syncerConfig(s.serverID)
	if err != nil {
		return err
	}
	// Again here: a backfill takes long, and another task may have
	// started streaming meanwhile (reader.go).
	if err := s.checkReader(ctx, s.db); err != nil {
		return err
	}
	st := &streamer{src: s, srv: srv, out: out, file: pos.File, hist: s.hist, parser: s.newParser(), inPlace: s.flavor == flavorMariaDB}
	var gset gomysql.GTIDSet // where the dump starts: a copy, st.gset grows as the stream reads
	if pos.GTID != "" {
		if st.gset, err = parseGTIDSet(s.flavor, pos.GTID); err != nil {
			return err
		}
		gset = st.gset.Clone()
	}
	conn, err := dialBinlog(ctx, cfg, s.flavor, pos, gset)
	if err != nil {
		return s.takenOver(classify(fmt.Errorf("start binlog stream: %w", err)))
	}
	defer conn.close()
	defer context.AfterFunc(ctx, conn.interrupt)()
	source.MarkConnected(ctx)
	for {
		raw, err := conn.read()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return s.takenOver(classify(fmt.Errorf("binlog stream: %w", err)))
		}
		if err := st.event(ctx, raw); err != nil {
			return err
		}
	}
}

// The server sends a heartbeat event after heartbeatPeriod without binlog
// events, so a binlog connection silent for binlogReadTimeout (three
// heartbeats) is dead even when TCP says nothing: its packets vanish (a
// partition, a failover that moved the address). The read fails with a
// timeout, which is retriable, and the pipeline reconnects.
const (
	heartbeatPeriod   = 5 * time.Second
	binlogReadTimeout = 3 * heartbeatPeriod
)

// syncerConfig is the replication connection's configuration: the
// stream's (binlogConn) and the scan's of replay.go, whose syncer reads
// only table names and statements (no row image, no table map's optional
// metadata). The stream's events are parsed by newParser's parser.
func (s *Source) syncerConfig(serverID uint32) (replication.BinlogSyncerConfig, error) {
	cfg := replication.BinlogSyncerConfig{
		ServerID:                       serverID,
		Flavor:                         s.flavor,
		Host:                           s.conn.Host,
		Port:                           s.conn.Port,
		User:                           s.conn.User,
		Password:                       s.conn.Password,
		Charset:                        "utf8mb4",
		HeartbeatPeriod:                heartbeatPeriod,
		ReadTimeout:                    binlogReadTimeout,
		DisableRetrySync:               true,
		Dialer:                         source.Dial(s.opts.Dial),
		Logger:                         slog.New(slog.DiscardHandler),
		Localhost:                      readerTag, // SHOW SLAVE HOSTS names this process (reader.go)
		RowsEventDecodeFunc:            decodeRowsHeader,
		TableMapOptionalMetaDecodeFunc: skipOptionalMeta,
	}
	var err error
	cfg.TLSConfig, err = s.tlsConfig()
	return cfg, err
}

// newParser returns the parser of the events a stream does not read in
// place (streamer.event).
func (s *Source) newParser() *replication.BinlogParser {
	p := replication.NewBinlogParser()
	p.SetFlavor(s.flavor)
	// A DECIMAL of a rows event: go-mysql writes its text with the
	// column's scale, and with UseDecimal parses that text into a
	// decimal.Decimal (four allocations) that decodeBinlog writes back
	// (three more); without, decodeBinlog takes the text as it is. MySQL
	// keeps UseDecimal: a DECIMAL inside its binary JSON is written by
	// the same switch, as decimal.Decimal's JSON (trailing zeros cut)
	// with it and as the text without, so turning it off would change
	// those documents. MariaDB's JSON is text, never decoded by go-mysql.
	p.SetUseDecimal(s.flavor != flavorMariaDB)
	p.SetParseTime(false)
	p.SetTimestampStringLocation(time.UTC)
	if s.flavor == flavorMariaDB {
		// The rows are read in the stream (rows.go).
		p.SetRowsEventDecodeFunc(decodeRowsHeader)
	}
	return p
}

// classify marks the server's "could not find the first log file / GTID"
// replies (ER_MASTER_FATAL_ERROR_READING_BINLOG, 1236) as a lost position.
func classify(err error) error {
	if strings.Contains(err.Error(), "same server_uuid/server_id") {
		return err // MySQL's 1236 for a stream another replica took over: takenOver
	}
	var me *gomysql.MyError
	if errors.As(err, &me) && me.Code == gomysql.ER_MASTER_FATAL_ERROR_READING_BINLOG {
		return fmt.Errorf("%w: %w", err, source.ErrResnapshotRequired)
	}
	if strings.Contains(err.Error(), "1236") {
		return fmt.Errorf("%w: %w", err, source.ErrResnapshotRequired)
	}
	return err
}

// event handles raw, a binlog event as the server sent it (nothing writes
// its bytes again). A MariaDB stream reads a table map it has seen and a
// rows event in place (inPlace; tablemap.go, rows.go), without go-mysql's
// parse; the rest, and the rows of a table whose rows go-mysql decodes
// (rowImages), go through the parser.
func (st *streamer) event(ctx context.Context, raw []byte) error {
	if len(raw) > eventBlockSize {
		// Its rows' values alias it: the slabs they are cut from must not
		// keep it in memory while later events are cut from them too.
		defer st.slabs.Release()
	}
	if st.inPlace && st.postHeader != nil && len(raw) >= replication.EventHeaderSize {
		switch t := replication.EventType(raw[4]); t {
		case replication.TABLE_MAP_EVENT:
			if st.knownMap(raw) {
				return nil
			}
		case replication.WRITE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv1,
			replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
			if done, err := st.rowsInPlace(ctx, raw); done || err != nil {
				return err
			}
		}
	}
	ev, err := st.parse(raw)
	if err != nil {
		return fmt.Errorf("binlog stream at %s: %w", st.file, err)
	}
	return st.handle(ctx, ev)
}

// parse is the parser's Parse, a panic of it (a malformed event) an error.
func (st *streamer) parse(raw []byte) (ev *replication.BinlogEvent, err error) {
	defer func() {
		if r := recover(); r != nil {
			ev, err = nil, fmt.Errorf("malformed binlog event: %v", r)
		}
	}()
	return st.parser.Parse(raw)
}

func (st *streamer) handle(ctx context.Context, ev *replication.BinlogEvent) error {
	h := ev.Header
	switch e := ev.Event.(type) {
	case *replication.FormatDescriptionEvent:
		// A new binlog file: table ids and their maps start again.
		st.crc, st.maps = e.ChecksumAlgorithm == replication.BINLOG_CHECKSUM_ALG_CRC32, nil
		st.postHeader, st.format = e.EventTypeHeaderLengths, ev.RawData
	case *replication.TableMapEvent:
		return st.tableMap(ev.RawData, e)
	case *replication.RotateEvent:
		st.file = string(e.NextLogName)
	case *replication.GTIDEvent:
		u, err := uuid.FromBytes(e.SID)
		if err != nil {
			return fmt.Errorf("binlog GTID event: %w", err)
		}
		st.tx = txState{commitMicros: int64(h.Timestamp) * 1e6}
		if h.EventType == replication.ANONYMOUS_GTID_EVENT || u == uuid.Nil {
			// gtid_mode OFF / OFF_PERMISSIVE: a transaction without a GTID.
			// It must not enter the set (a zero UUID would make every later
			// resume fail); the position is the file and offset.
			return nil
		}
		st.tx.gtid = fmt.Sprintf("%s:%d", u, e.GNO)
		// Only a set read at start (gtid_executed, then every GTID since)
		// is complete; GTIDs that start to appear after the stream started
		// by file/position (gtid_mode turned ON meanwhile) would make a set
		// that claims only those, so such a stream keeps resuming by file.
		if set, ok := st.gset.(*gomysql.MysqlGTIDSet); ok {
			set.AddGTID(u, e.GNO)
		}
	case *replication.MariadbGTIDEvent:
		g := e.GTID
		// MariaDB writes no BEGIN query: a GTID event that is not
		// standalone (DDL is) opens a transaction that XID or COMMIT ends.
		st.tx = txState{gtid: g.String(), commitMicros: int64(h.Timestamp) * 1e6, open: !e.IsStandalone()}
		if st.gset == nil {
			st.gset = &gomysql.MariadbGTIDSet{Sets: map[uint32]map[uint32]*gomysql.MariadbGTID{}}
		}
		if set, ok := st.gset.(*gomysql.MariadbGTIDSet); ok {
			advance(set, g)
		}
	case *replication.QueryEvent:
		return st.query(ctx, h, e)
	case *replication.ExecuteLoadQueryEvent:
		// LOAD DATA in STATEMENT format: its text, and the file's
		// contents in Begin_load_query events, not rows.
		if schema, q, ok := loadQuery(ev.RawData); ok {
			if db, name, ok := dmlTable(q, schema); ok {
				return st.src.statementChange(db, name, q)
			}
		}
	case *replication.RowsEvent:
		if err := st.rows(ctx, ev.Header, e, ev.RawData); err != nil {
			return err
		}
		if e.Flags&replication.RowsEventStmtEndFlag != 0 {
			return st.statementEnd(true)
		}
	case *replication.XIDEvent:
		return st.commit(ctx, h)
	case *replication.GenericEvent:
		if h.EventType == replication.XA_PREPARE_LOG_EVENT {
			// The first phase of an XA transaction: not a commit (XA
			// COMMIT, later and in its own event group, is). Captured rows
			// in it were refused by rows().
			st.tx = txState{}
		}
	}
	return nil
}

// commit emits the position just after the committing event, with the
// committing event's time: when the transaction committed. A change's
// time is its statement's (Debezium's, in rows), up to the transaction's
// length before the commit; exactly-once's transactions space their
// commits by how old the last commit is (pipeline.behind).
func (st *streamer) commit(ctx context.Context, h *replication.EventHeader) error {
	p := position{Flavor: st.src.flavor, File: st.file, Pos: h.LogPos}
	if st.gset != nil {
		p.GTID = st.gset.String()
	}
	st.tx = txState{}
	st.hist.passed(st.file, h.LogPos)
	return st.out.Commit(ctx, st.src.encode(p), int64(h.Timestamp)*1e6)
}

// ddlTable finds the table names a DDL statement touches: ALTER / RENAME /
// DROP / CREATE / TRUNCATE TABLE name, and RENAME's targets.
var ddlTable = regexp.MustCompile("(?i)(?:ALTER\\s+(?:ONLINE\\s+|IGNORE\\s+)*TABLE|RENAME\\s+TABLE|DROP\\s+TABLE(?:\\s+IF\\s+EXISTS)?|CREATE\\s+(?:OR\\s+REPLACE\\s+)?TABLE(?:\\s+IF\\s+NOT\\s+EXISTS)?|TRUNCATE(?:\\s+TABLE)?|\\bTO|,)\\s+((?:`[^`]+`|[A-Za-z0-9_$]+)(?:\\s*\\.\\s*(?:`[^`]+`|[A-Za-z0-9_$]+))?)")

// query handles BEGIN (the thread id), the statements that end a
// transaction (COMMIT; ROLLBACK, which the binlog writes after changes to
// non-transactional tables that did happen), and statements outside a
// transaction: DDL (it commits implicitly; re-reads the shape of every
// captured table it names) and non-transactional statements, each a
// commit. Inside BEGIN … COMMIT nothing else commits: SAVEPOINT,
// ROLLBACK TO, RELEASE SAVEPOINT keep the transaction's GTID and thread,
// and emitting a position there would let a restart skip the rest of it.
// The one DDL logged inside a transaction is CREATE TABLE … SELECT
// (MariaDB with binlog_format = ROW: the CREATE, the rows and the commit
// in one GTID group; MySQL 8's atomic CREATE … SELECT likewise): its
// table is learnt there, before its rows, and the group's commit commits.
func (st *streamer) query(ctx context.Context, h *replication.EventHeader, e *replication.QueryEvent) error {
	q := strings.TrimSpace(string(e.Query))
	upper := strings.ToUpper(q)
	if ids, ok := dmlTables(q, string(e.Schema)); ok {
		for _, id := range ids {
			if err := st.src.statementChange(id[0], id[1], q); err != nil {
				return err
			}
			through, err := st.src.throughObjects(id[0], id[1])
			if err != nil {
				return err
			}
			for _, t := range through {
				if err := st.src.statementChange(t[0], t[1], q); err != nil {
					return err
				}
			}
		}
	}
	switch {
	case upper == "BEGIN":
		st.tx.open, st.tx.thread = true, int64(e.SlaveProxyID)
		if st.tx.commitMicros == 0 {
			st.tx.commitMicros = int64(h.Timestamp) * 1e6
		}
		return nil
	case strings.HasPrefix(upper, "XA START") || strings.HasPrefix(upper, "XA BEGIN"):
		st.tx.open, st.tx.xa, st.tx.thread = true, true, int64(e.SlaveProxyID)
		return nil
	case upper == "COMMIT" || upper == "ROLLBACK":
		return st.commit(ctx, h)
	case strings.HasPrefix(upper, "XA COMMIT") || strings.HasPrefix(upper, "XA ROLLBACK"):
		// The end of an XA transaction: ONE PHASE inside it, or the second
		// phase of a prepared one (its own event group).
		return st.commit(ctx, h)
	case st.tx.open && createTable.MatchString(q):
		return st.ddl(ctx, h, q, string(e.Schema))
	case st.tx.open:
		// SAVEPOINT, ROLLBACK TO, RELEASE SAVEPOINT, XA END, and any other
		// statement logged inside the transaction: not a commit.
		return nil
	}
	if err := st.ddl(ctx, h, q, string(e.Schema)); err != nil {
		return err
	}
	return st.commit(ctx, h)
}

// createTable matches a CREATE TABLE statement (comments before it aside).
var createTable = regexp.MustCompile(`(?is)^\s*(?:/\*.*?\*/\s*)*CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\b`)

// ddl applies a statement to the schema history and re-reads the shape of
// every table it names.
func (st *streamer) ddl(ctx context.Context, h *replication.EventHeader, q, defaultDB string) error {
	st.forgetShapes()
	if objectDDL.MatchString(q) {
		st.src.forgetObjects()
	}
	if st.hist != nil {
		if err := st.hist.apply(q, defaultDB, st.file, h.LogPos); err != nil {
			return err
		}
	}
	renames := renameStmt.MatchString(q)
	for _, m := range ddlTable.FindAllStringSubmatch(q, -1) {
		db, name := defaultDB, m[1]
		if i := dotOutsideQuotes(name); i >= 0 {
			db, name = unquote(name[:i]), name[i+1:]
		}
		name = unquote(name)
		// ", name" is a table only in RENAME TABLE a TO b, c TO d.
		mayAdd := renames || !strings.HasPrefix(m[0], ",")
		// "TO name" of a RENAME: the table now under name was another.
		renamedTo := renames && len(m[0]) > 2 && strings.EqualFold(m[0][:2], "TO")
		if err := st.src.refresh(db, name, mayAdd, renamedTo, q); err != nil {
			return err
		}
		st.src.mu.Lock()
		captured := st.src.tables[db+"."+name] != nil
		st.src.mu.Unlock()
		if captured && !st.srv.fullMetadata && st.hist == nil {
			// The shape just read is the one at the end of the binlog:
			// right for the rows after this DDL unless another one of the
			// table follows them before the end (the stream lags).
			if err := st.src.checkReplayable(ctx, st.file, h.LogPos, st.src.scanServerID()); err != nil {
				return err
			}
		}
	}
	return nil
}

// rows emits the row changes of a rows event; raw is the event as the
// server sent it.
func (st *streamer) rows(ctx context.Context, h *replication.EventHeader, e *replication.RowsEvent, raw []byte) error {
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
	m := st.maps[e.Table.TableID]
	if m != nil && m.tm != e.Table {
		m = nil // not the table map go-mysql decoded these rows with
	}
	var db, name, id string
	if m != nil {
		db, name, id = m.db, m.name, m.id
	} else {
		db, name = string(e.Table.Schema), string(e.Table.Table)
		id = db + "." + name
	}
	if st.src.isSignal(db, name) {
		// A snapshot watermark (its row's mark, after the change), from
		// go-mysql's decode of the rows.
		if st.src.flavor == flavorMariaDB {
			if err := st.decodeRows(h, e, raw); err != nil {
				return err
			}
		}
		step, after := 1, 0
		if op == change.OpUpdate {
			step, after = 2, 1
		}
		for i := after; op != change.OpDelete && i < len(e.Rows); i += step {
			if err := st.out.Watermark(ctx, signalMark(e.Rows[i])); err != nil {
				return err
			}
		}
		return nil
	}
	pos := int64(h.LogPos) - int64(h.EventSize)
	st.src.mu.Lock()
	catalog := st.src.tables[id]
	st.src.mu.Unlock()
	t := m.decided(catalog)
	if t == nil {
		var err error
		if t, err = st.decide(m, db, name, catalog, e.Table, pos); t == nil || err != nil {
			return err
		}
	} else if st.tx.xa {
		return st.refuseXA(t, pos)
	}
	src := change.Source{
		Block:        sourceBlockOf(st.src.flavor),
		Name:         st.src.opts.TopicPrefix,
		DB:           db,
		Table:        name,
		CommitMicros: st.tx.commitMicros,
		Ints:         [change.SourceSlots]int64{slotServerID: int64(h.ServerID), slotPos: pos, slotThread: st.tx.thread},
		Strings:      [change.SourceSlots]string{slotGTID: st.tx.gtid, slotFile: st.file},
	}
	if src.CommitMicros == 0 || st.src.flavor == flavorMariaDB {
		// Debezium's MariaDB connector takes every event's own time
		// (MariaDbStreamingChangeEventSource.setEventTimestamp), so the
		// rows of a transaction spanning a second carry both seconds.
		src.CommitMicros = int64(h.Timestamp) * 1e6
	}
	pub := st.src.published(t)
	width := len(t.cols)
	if pub != nil {
		width = len(pub.t.Columns)
	}
	// A session may log MINIMAL or NOBLOB row images (binlog_row_image;
	// the pipeline checks the global setting at start): an image that
	// leaves out a published column has no value to publish for it. Read
	// as NULL it became the column's default or zero in the message, and
	// an update's unchanged key a delete of the row and a create without
	// a key. Refused before any row of the event is published.
	for b, logged := range [][]byte{e.ColumnBitmap1, e.ColumnBitmap2} {
		if b == 1 && op != change.OpUpdate {
			break
		}
		if c := unloggedColumn(logged, t, pub); c != "" {
			return fmt.Errorf("%s at %s:%d: a row image of this %s leaves out column %s: the session that wrote it logs binlog_row_image MINIMAL or NOBLOB, and the message cannot hold a value the binlog does not; set binlog_row_image = FULL for every session (no SET SESSION binlog_row_image), then backfill the table again: %w",
				t.id(), st.file, pos, map[change.Op]string{change.OpCreate: "insert", change.OpUpdate: "update", change.OpDelete: "delete"}[op], c, source.ErrResnapshotRequired)
		}
	}
	images, err := st.images(h, e, raw)
	if err != nil {
		return fmt.Errorf("%s at %s:%d: %w", t.id(), st.file, pos, err)
	}
	for r := 0; images.more(); r++ {
		ev := st.slabs.Event()
		*ev = change.Event{Table: pub.table(t.t), Op: op, Source: src, ID: st.eventID(pos, r)}
		ev.Source.Ints[slotRow] = int64(r)
		first, err := images.image(t, pub, st.slabs.Row(width), &st.slabs)
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
			if ev.After, err = images.image(t, pub, st.slabs.Row(width), &st.slabs); err != nil {
				return fmt.Errorf("%s at %s:%d: %w", t.id(), st.file, pos, err)
			}
		}
		if err := st.out.Change(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// eventID is the ID of the row-th row of the rows event at pos, cut from
// the slabs (an allocation per event otherwise, and fmt's several).
func (st *streamer) eventID(pos int64, row int) string {
	var buf [96]byte
	b := append(buf[:0], "my:"...)
	b = append(b, st.file...)
	b = append(b, ':')
	b = strconv.AppendInt(b, pos, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(row), 10)
	return st.slabs.String(b)
}

// decodeRow decodes a binlog row of t, as go-mysql decoded it, as pub
// publishes it (nil: every column) into row, of Null values as wide as
// the published row: an excluded column is not decoded, a masked one is
// masked before the row is handed on. Bytes it makes are cut from s.
func decodeRow(t *table, pub *projected, vals []any, row change.Row, s *snapshot.Slabs) (change.Row, error) {
	if len(vals) != len(t.cols) {
		return nil, fmt.Errorf("row has %d values, table has %d columns", len(vals), len(t.cols))
	}
	if pub == nil {
		for i, v := range vals {
			bv := boxed(v)
			val, err := decodeBinlog(&t.cols[i], &bv, s)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", t.cols[i].name, err)
			}
			row[i] = val
		}
		return row, nil
	}
	for i, v := range vals {
		j := pub.proj.Out[i]
		if j < 0 {
			continue
		}
		bv := boxed(v)
		val, err := decodeBinlog(&t.cols[i], &bv, s)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", t.cols[i].name, err)
		}
		if m := pub.proj.Masks[j]; m != nil {
			val = source.MaskValue(m, &pub.t.Columns[j], val.Bytes, val.Kind == change.Null)
		}
		row[j] = val
	}
	return row, nil
}

// unloggedColumn names the first column of t, published by pub, that a
// row image of the bitmap logged (over the binlog's columns) leaves out;
// "" when it holds them all.
func unloggedColumn(logged []byte, t *table, pub *projected) string {
	for i := range t.cols {
		if i>>3 < len(logged) && logged[i>>3]&(1<<(i&7)) != 0 {
			continue
		}
		if pub == nil || pub.proj.Out[i] >= 0 {
			return t.cols[i].name
		}
	}
	return ""
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

// HandsOff implements capture's handsOff: the stream never reuses an
// event, or memory an event points to, once it emitted it (events and rows
// are cut from slabs, values alias binlog blocks never written again,
// binlog.go), so the capture loop may emit them on a goroutine of its own
// (source.Handoff).
func (s *Source) HandsOff() bool { return true }
