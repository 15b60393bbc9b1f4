package mysql

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// Snapshots run in the capture engine (pkg/snapshot) while the binlog
// streams. The watermarks are rows written to a signal table
// (source.signal_table, default <database>.tributary_signal), which the
// binlog carries in commit order; chunks are autocommit SELECTs. No
// FLUSH TABLES WITH READ LOCK, no long transaction: the privileges of an
// RDS/Aurora master user are enough (SELECT on the tables, REPLICATION
// SLAVE, REPLICATION CLIENT / BINLOG MONITOR, and INSERT, UPDATE (and
// CREATE, to create it) on the signal table).

// signalDDL creates the signal table: one row per snapshot worker, whose
// mark column carries the watermark.
const signalDDL = "CREATE TABLE IF NOT EXISTS %s (id VARCHAR(64) NOT NULL PRIMARY KEY, mark VARCHAR(128) NOT NULL) ENGINE=InnoDB"

// signalTable is source.signal_table or its default: the URL's database,
// else that of the first listed table, else "tributary".
func (s *Source) signalTable() (db, name string) {
	if t := settingsOf(s.opts).SignalTable; t != "" {
		db, name, _ = strings.Cut(t, ".")
		return db, name
	}
	db = s.conn.Database
	if plain := s.sel.PlainNames(); db == "" && len(plain) > 0 {
		db, _, _ = strings.Cut(plain[0], ".")
	}
	if db == "" {
		db = "tributary"
	}
	return db, "tributary_signal"
}

// isSignal tells the signal table's rows apart in the binlog.
func (s *Source) isSignal(db, name string) bool {
	sdb, sname := s.signalTable()
	return db == sdb && name == sname
}

// ensureSignalTable checks that the user may write the signal table,
// creating it when it is missing, and names the grant that fixes it.
func (s *Source) ensureSignalTable(conn *client.Conn) error {
	db, name := s.signalTable()
	q := quoteIdent(db) + "." + quoteIdent(name)
	upsert := fmt.Sprintf("INSERT INTO %s (id, mark) VALUES ('check', '') ON DUPLICATE KEY UPDATE mark = ''", q)
	_, err := conn.Execute(upsert)
	var me *gomysql.MyError
	if errors.As(err, &me) && me.Code == gomysql.ER_NO_SUCH_TABLE {
		_, err = conn.Execute(fmt.Sprintf(signalDDL, q))
		if errors.As(err, &me) && me.Code == gomysql.ER_BAD_DB_ERROR {
			// Not the signal table's problem: creating it cannot help.
			return fmt.Errorf("%w: the signal table %s.%s (source.signal_table) cannot be created: database %s does not exist; "+
				"create the database, or name an existing one in source.url (or source.signal_table)", ErrPrerequisite, db, name, db)
		}
		if err != nil {
			return fmt.Errorf("%w: snapshots write their watermarks to the signal table %s.%s (source.signal_table), which does not exist and could not be created: %w; "+
				"create it (%s) and GRANT SELECT, INSERT, UPDATE ON %s TO <user>, or GRANT CREATE, INSERT, UPDATE ON %s.* TO <user>",
				ErrPrerequisite, db, name, err, fmt.Sprintf(signalDDL, q), q, quoteIdent(db))
		}
		_, err = conn.Execute(upsert)
	}
	if err != nil {
		return fmt.Errorf("%w: snapshots write their watermarks to the signal table %s.%s (source.signal_table): %w; GRANT SELECT, INSERT, UPDATE ON %s TO <user>",
			ErrPrerequisite, db, name, err, q)
	}
	return nil
}

// signalMark returns the watermark a signal table row carries, or "".
func signalMark(row []any) string {
	if len(row) < 2 {
		return ""
	}
	switch v := row[1].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// mySnapshots is the snapshot.Database of a Source.
type mySnapshots struct{ s *Source }

var sessions atomic.Int64

// Session implements snapshot.Database.
func (d mySnapshots) Session(ctx context.Context) (snapshot.Session, error) {
	conn, err := d.s.connect(ctx)
	if err != nil {
		return nil, err
	}
	db, name := d.s.signalTable()
	return &mySession{s: d.s, conn: conn, signal: quoteIdent(db) + "." + quoteIdent(name),
		id: fmt.Sprintf("%d:%d", d.s.serverID, sessions.Add(1))}, nil
}

type mySession struct {
	s      *Source
	conn   *client.Conn
	signal string  // `db`.`table` of the signal table
	id     string  // this session's row in it
	scan   *myScan // the open scan of a table without a primary key
}

func (m *mySession) Close() error {
	m.closeScan()
	return m.conn.Close()
}

// WriteWatermark implements snapshot.Session: an autocommit upsert of the
// session's own row.
func (m *mySession) WriteWatermark(ctx context.Context, mark string) error {
	stop := closeOnDone(ctx, m.conn)
	defer stop()
	_, err := m.conn.Execute(fmt.Sprintf("INSERT INTO %s (id, mark) VALUES (%s, %s) ON DUPLICATE KEY UPDATE mark = VALUES(mark)",
		m.signal, quoteString(m.id), quoteString(mark)))
	return err
}

// Estimate implements snapshot.Session: information_schema's TABLE_ROWS.
func (m *mySession) Estimate(_ context.Context, table string) (int64, error) {
	db, name, _ := strings.Cut(table, ".")
	r, err := m.conn.Execute(fmt.Sprintf("SELECT IFNULL(TABLE_ROWS, 0) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
		quoteString(db), quoteString(name)))
	if err != nil || len(r.Values) == 0 {
		return 0, err
	}
	n, _ := r.GetInt(0, 0)
	return n, nil
}

// ReadChunk implements snapshot.Session: one keyset query on the text
// protocol, read in autocommit (its own consistent read, no lock); a
// table without a primary key is read by one streaming query (myScan).
func (m *mySession) ReadChunk(ctx context.Context, name string, after, until snapshot.Key, limit int) ([]snapshot.Row, error) {
	s := m.s
	t, err := s.snapTable(name)
	if err != nil {
		return nil, err
	}
	all := make([]string, len(t.cols))
	for i, c := range t.cols {
		all[i] = quoteIdent(c.name)
	}
	keys, where, err := keyRange(&t, after, until)
	if err != nil {
		return nil, fmt.Errorf("%s: resume key: %w", name, err)
	}
	// An excluded column is not read (columns.go).
	pub := s.published(&t)
	cols := all
	if pub != nil {
		cols = make([]string, len(pub.proj.Kept))
		for j, i := range pub.proj.Kept {
			cols[j] = all[i]
		}
	}
	rd := &chunkReader{s: s, t: &t, pub: pub, name: name, now: time.Now().UnixMicro(), start: s.streamStart.Load(), out: make([]snapshot.Row, 0, limit)}
	for i, k := range keySelect(&t) {
		if k != keys[i] {
			cols = append(cols, k)
			rd.exact = append(rd.exact, i)
		}
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM " + t.quoted()
	if len(keys) > 0 {
		q += where + " ORDER BY " + strings.Join(keys, ", ") + fmt.Sprintf(" LIMIT %d", limit)
	}
	if len(keys) == 0 {
		return m.readScan(ctx, rd, q, after, limit)
	}
	m.closeScan() // a keyless table's scan left open (the table dropped from the snapshot)
	stop := closeOnDone(ctx, m.conn)
	defer stop()
	var res gomysql.Result
	if err := m.conn.ExecuteSelectStreaming(q, &res, rd.row, nil); err != nil {
		return nil, rd.error(err)
	}
	return rd.out, nil
}

// snapTable is a copy of the table name as the stream knows it now (the
// stream re-describes tables under s.mu).
func (s *Source) snapTable(name string) (table, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.tables[name]
	if cur == nil {
		return table{}, fmt.Errorf("%s: %w", name, snapshot.ErrNoTable)
	}
	return *cur, nil
}

// keyRange is t's key columns, quoted, in key order, and the condition
// (" WHERE …", or "" with both bounds nil) of the rows after the key after
// up to the key until.
func keyRange(t *table, after, until snapshot.Key) (keys []string, where string, err error) {
	keys = make([]string, len(t.key))
	for i, k := range t.key {
		keys[i] = quoteIdent(t.cols[k].name)
	}
	var conds []string
	for _, b := range []struct {
		key  snapshot.Key
		upTo bool
	}{{after, false}, {until, true}} {
		if len(keys) == 0 || len(b.key) != len(keys) {
			continue
		}
		lits := make([]string, len(keys))
		for i, k := range t.key {
			if lits[i], err = keyLiteral(&t.cols[k], hex.EncodeToString(b.key[i])); err != nil {
				return nil, "", err
			}
		}
		conds = append(conds, keyBound(keys, lits, b.upTo))
	}
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	return keys, where, nil
}

// keySelect is what a query selects of t's key columns to read each back
// as the key's text: the column, or for a FLOAT its value as a DOUBLE.
// The server writes a FLOAT with 6 digits, which 1.2345678, 1.2345679 and
// 1.234569 all print as 1.23457: a chunk that ended at the first read on
// after 1.23457 and never published the two others.
func keySelect(t *table) []string {
	out := make([]string, len(t.key))
	for i, k := range t.key {
		out[i] = quoteIdent(t.cols[k].name)
		if t.cols[k].typ.Kind == change.KindFloat32 {
			out[i] = "CAST(" + out[i] + " AS DOUBLE)"
		}
	}
	return out
}

// keyBound is the condition "the key columns keys come after the values
// lits" in key order, or with upTo "come up to them" (lits included).
// MariaDB does not read a row comparison, (a, b) > (x, y), as a range of
// the primary key: each chunk scanned the key from its start (a
// composite-key table's backfill grew with its square). It reads
// a >= x AND (a > x OR (a = x AND b > y)) as one.
func keyBound(keys, lits []string, upTo bool) string {
	strict, loose, last := " > ", " >= ", " > "
	if upTo {
		strict, loose, last = " < ", " <= ", " <= "
	}
	n := len(keys)
	cmp := keys[n-1] + last + lits[n-1]
	if n == 1 {
		return cmp
	}
	for i := n - 2; i >= 0; i-- {
		cmp = keys[i] + strict + lits[i] + " OR (" + keys[i] + " = " + lits[i] + " AND (" + cmp + "))"
	}
	return keys[0] + loose + lits[0] + " AND (" + cmp + ")"
}

// Split implements snapshot.Session: the key at each range's end, found
// by a walk of the primary key (OFFSET) per split point.
func (m *mySession) Split(ctx context.Context, name string, after snapshot.Key, rows int64, parts int) ([]snapshot.Key, error) {
	t, err := m.s.snapTable(name)
	if err != nil || len(t.key) == 0 {
		return nil, err
	}
	keys, where, err := keyRange(&t, after, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: resume key: %w", name, err)
	}
	stop := closeOnDone(ctx, m.conn)
	defer stop()
	// The query up to its OFFSET, the same for every split point.
	q := fmt.Sprintf("SELECT %s FROM %s%s ORDER BY %s LIMIT 1 OFFSET ", strings.Join(keySelect(&t), ", "), t.quoted(), where, strings.Join(keys, ", "))
	var out []snapshot.Key
	var scratch [32]byte
	for i := 1; i < parts; i++ {
		r, err := m.conn.Execute(q + strconv.FormatInt(max(0, int64(i)*rows/int64(parts)-1), 10))
		if err != nil {
			rd := chunkReader{name: name}
			return nil, rd.error(err)
		}
		if len(r.Values) == 0 {
			break // fewer rows than the estimate: the last range runs to the end
		}
		k := make(snapshot.Key, len(keys))
		for j := range k {
			k[j] = slices.Clone(valueText(&r.Values[0][j], scratch[:0]))
		}
		out = append(out, k)
	}
	return out, nil
}

// error is a chunk query's error err: the row the reader refused, or err
// naming the table, marking a dropped table (snapshot.ErrNoTable) and a
// column the query names that is gone (snapshot.ErrShapeMoved).
func (rd *chunkReader) error(err error) error {
	var me *gomysql.MyError
	switch {
	case rd.err != nil:
		return rd.err
	case errors.As(err, &me) && me.Code == gomysql.ER_NO_SUCH_TABLE:
		return fmt.Errorf("%s: %w: %w", rd.name, snapshot.ErrNoTable, err)
	case errors.As(err, &me) && me.Code == gomysql.ER_BAD_FIELD_ERROR:
		// A column dropped or renamed by a DDL the stream has not
		// reached yet: the stream re-describes the table there.
		return fmt.Errorf("%s: %w: %w", rd.name, snapshot.ErrShapeMoved, err)
	}
	return fmt.Errorf("%s: %w", rd.name, err)
}

// myScan reads a table without a primary key: one streaming SELECT on a
// connection of its own (the session's writes the watermarks), whose rows
// a goroutine hands over a chunk at a time. Between chunks it reads
// nothing, and the server waits to send more: the query's consistent read
// and its metadata lock (an ALTER TABLE of the table waits) last until
// the last chunk (docs/snapshots.md).
type myScan struct {
	name string
	conn *client.Conn
	want chan int            // a chunk asked for: up to n rows
	got  chan []snapshot.Row // its rows; fewer than asked: the scan ended
	quit chan struct{}       // closed by closeScan
	done chan struct{}       // closed when the goroutine ends, err set
	err  error
}

// scanWriteTimeout is the scan connection's net_write_timeout: how long
// the server waits for the next chunk to be asked for (the stream placing
// the previous one, the destination taking it) before it drops the scan.
const scanWriteTimeout = 3600

var errScanClosed = errors.New("scan closed")

// readScan implements ReadChunk for a table without a primary key (see
// snapshot.Session): after nil opens a scan of q, snapshot.ReadOn reads on.
func (m *mySession) readScan(ctx context.Context, rd *chunkReader, q string, after snapshot.Key, limit int) ([]snapshot.Row, error) {
	if after == nil {
		m.closeScan()
		conn, err := m.s.connect(ctx)
		if err != nil {
			return nil, err
		}
		if _, err := conn.Execute(fmt.Sprintf("SET SESSION net_write_timeout = %d", scanWriteTimeout)); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", rd.name, err)
		}
		m.scan = &myScan{name: rd.name, conn: conn, want: make(chan int), got: make(chan []snapshot.Row),
			quit: make(chan struct{}), done: make(chan struct{})}
		go m.scan.run(rd, q)
	} else if m.scan == nil || m.scan.name != rd.name {
		return nil, fmt.Errorf("%s: no scan open to read on", rd.name)
	}
	rows, err := m.scan.next(ctx, limit)
	if err != nil || len(rows) < limit {
		m.closeScan()
	}
	return rows, err
}

// run streams q's rows through rd, handing them over a chunk at a time.
func (sc *myScan) run(rd *chunkReader, q string) {
	defer close(sc.done)
	var n int
	ask := func() error {
		select {
		case n = <-sc.want:
			rd.out = make([]snapshot.Row, 0, n)
			return nil
		case <-sc.quit:
			return errScanClosed
		}
	}
	hand := func() error {
		select {
		case sc.got <- rd.out:
			return nil
		case <-sc.quit:
			return errScanClosed
		}
	}
	if ask() != nil {
		return
	}
	var res gomysql.Result
	err := sc.conn.ExecuteSelectStreaming(q, &res, func(fields []gomysql.FieldValue) error {
		if err := rd.row(fields); err != nil || len(rd.out) < n {
			return err
		}
		if err := hand(); err != nil {
			return err
		}
		return ask()
	}, nil)
	if err != nil {
		sc.err = rd.error(err)
		return
	}
	hand() // the last rows, fewer than asked for
}

// next returns the scan's next chunk of up to n rows.
func (sc *myScan) next(ctx context.Context, n int) ([]snapshot.Row, error) {
	ended := func() error {
		if sc.err != nil {
			return sc.err
		}
		return fmt.Errorf("%s: the scan ended", sc.name)
	}
	select {
	case sc.want <- n:
	case <-sc.done:
		return nil, ended()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case rows := <-sc.got:
		return rows, nil
	case <-sc.done:
		return nil, ended()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (m *mySession) closeScan() {
	if sc := m.scan; sc != nil {
		close(sc.quit)
		// A read of the server's rows returns once the socket is closed;
		// go-mysql's Close, which resets the packet sequence that read
		// writes too, only after it did (go test -race).
		socket(sc.conn).Close()
		<-sc.done
		sc.conn.Close()
		m.scan = nil
	}
}

// chunkReader turns a chunk's rows, as they stream in, into read events;
// go-mysql reuses a row's buffers for the next row, so what a value keeps
// is copied into the chunk's slabs (the seed's backfiller held the whole
// result and copied every value twice).
type chunkReader struct {
	s     *Source
	t     *table
	pub   *projected // the columns read and published; nil: all
	name  string
	now   int64
	start *position
	out   []snapshot.Row
	err   error // a row the reader refused
	slabs snapshot.Slabs
	// fill says when a keyed chunk reached snapshot.ChunkBytes: the rows
	// after are not kept (the next chunk reads on after the last one kept).
	fill snapshot.ChunkFill
	// exact are the key columns (positions in the key) whose text is read
	// from a field of its own after the columns (keySelect), in order.
	exact []int
}

func (rd *chunkReader) row(fields []gomysql.FieldValue) error {
	if rd.fill.Full() {
		return nil
	}
	t, pt, nc := rd.t, rd.pub.table(rd.t.t), len(rd.t.cols)
	if rd.pub != nil {
		nc = len(rd.pub.proj.Kept)
	}
	if len(fields) != nc+len(rd.exact) {
		rd.err = fmt.Errorf("snapshot %s: %d columns read, %d described", rd.name, len(fields), nc+len(rd.exact))
		return rd.err
	}
	exact := fields[nc:]
	fields = fields[:nc]
	ev, row := rd.slabs.Event(), rd.slabs.Row(nc)
	var scratch [32]byte
	for j := range fields {
		fv, c := &fields[j], &t.cols[j]
		if rd.pub != nil {
			c = &t.cols[rd.pub.proj.Kept[j]]
			if m := rd.pub.proj.Masks[j]; m != nil {
				null := fv.Type == gomysql.FieldValueTypeNull
				var val change.Value
				if !null {
					var err error
					if val, err = decodeText(c, valueText(fv, scratch[:0])); err != nil {
						rd.err = fmt.Errorf("snapshot %s column %s: %w", rd.name, c.name, err)
						return rd.err
					}
				}
				row[j] = source.MaskValue(m, &pt.Columns[j], val.Bytes, null)
				continue
			}
		}
		if fv.Type == gomysql.FieldValueTypeNull {
			continue
		}
		if isIntKind(c.typ.Kind) && (fv.Type == gomysql.FieldValueTypeSigned || fv.Type == gomysql.FieldValueTypeUnsigned) {
			row[j] = change.IntValue(fv.AsInt64()) // BIGINT UNSIGNED wraps, as Debezium's long mode does
			continue
		}
		val, err := decodeText(c, rd.slabs.Keep(valueText(fv, scratch[:0])))
		if err != nil {
			rd.err = fmt.Errorf("snapshot %s column %s: %w", rd.name, c.name, err)
			return rd.err
		}
		row[j] = val
	}
	var key snapshot.Key
	if nk := len(t.key); nk > 0 {
		key = rd.slabs.Key(nk)
		for i, k := range t.key {
			if rd.pub != nil {
				if k = rd.pub.proj.Out[k]; k < 0 {
					continue // refused before capture (columnProblems)
				}
			}
			if fv := &fields[k]; fv.Type != gomysql.FieldValueTypeNull {
				key[i] = rd.slabs.Keep(valueText(fv, scratch[:0]))
			}
		}
		for j, i := range rd.exact {
			key[i] = rd.slabs.Keep(valueText(&exact[j], scratch[:0]))
		}
	}
	*ev = change.Event{
		Table: pt,
		Op:    change.OpRead,
		After: row,
		Source: change.Source{
			Block:        sourceBlockOf(rd.s.flavor),
			Name:         rd.s.opts.TopicPrefix,
			DB:           t.db,
			Table:        t.name,
			CommitMicros: rd.now,
			// Debezium leaves server_id at 0 in snapshot records: no binlog event was read.
		},
	}
	if rd.start != nil {
		ev.Source.Strings[slotFile], ev.Source.Ints[slotPos] = rd.start.File, int64(rd.start.Pos)
	}
	rd.out = append(rd.out, snapshot.Row{Key: key, Event: ev})
	rd.fill.Keep(rd.out[len(rd.out)-1])
	return nil
}

// valueText is a text-protocol value as the server sent it (go-mysql
// parses numbers; they are written back in their shortest form), appended
// to buf for numbers.
func valueText(fv *gomysql.FieldValue, buf []byte) []byte {
	switch fv.Type {
	case gomysql.FieldValueTypeSigned:
		return strconv.AppendInt(buf, fv.AsInt64(), 10)
	case gomysql.FieldValueTypeUnsigned:
		return strconv.AppendUint(buf, fv.AsUint64(), 10)
	case gomysql.FieldValueTypeFloat:
		return strconv.AppendFloat(buf, fv.AsFloat64(), 'g', -1, 64)
	}
	return fv.AsString()
}

func isIntKind(k change.Kind) bool {
	switch k {
	case change.KindInt16, change.KindInt32, change.KindInt64, change.KindYear:
		return true
	}
	return false
}

// keyLiteral turns a hex-encoded key value back into an SQL literal.
func keyLiteral(c *column, hexVal string) (string, error) {
	raw, err := hex.DecodeString(hexVal)
	if err != nil {
		return "", err
	}
	switch c.typ.Kind {
	case change.KindInt16, change.KindInt32, change.KindInt64, change.KindYear, change.KindDecimal, change.KindFloat32, change.KindFloat64:
		for _, ch := range raw {
			if !(ch >= '0' && ch <= '9' || ch == '-' || ch == '.' || ch == 'e' || ch == 'E' || ch == '+') {
				return "", fmt.Errorf("bad numeric key %q", raw)
			}
		}
		return string(raw), nil
	case change.KindBytes, change.KindBits, change.KindBool:
		return "X'" + hexVal + "'", nil
	case change.KindEnum, change.KindSet:
		// The key orders an ENUM by its members' declaration order and a
		// SET by its bitmap, and a number compares with them so; a text
		// would compare as text, skipping or repeating rows.
		if n, ok := memberNumber(c, string(raw)); ok {
			return strconv.FormatUint(n, 10), nil
		}
	}
	return "_utf8mb4 X'" + hexVal + "'", nil
}

// memberNumber is an ENUM value's 1-based index among c's members, or a
// SET value's bitmap; ok is false for a text that is not c's.
func memberNumber(c *column, text string) (uint64, bool) {
	if c.typ.Kind == change.KindEnum {
		i := slices.Index(c.members, text)
		if i < 0 && text == "" {
			return 0, true // the error value, index 0
		}
		return uint64(i + 1), i >= 0
	}
	var n uint64
	if text == "" {
		return 0, true
	}
	for _, m := range strings.Split(text, ",") {
		i := slices.Index(c.members, m)
		if i < 0 || i >= 64 {
			return 0, false
		}
		n |= 1 << i
	}
	return n, true
}
