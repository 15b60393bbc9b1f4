package mysql

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/google/uuid"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source/sourcetest"
)

// recorder is a streamer over one captured table d.t (id INT primary
// key) that records what it emits; events are synthetic go-mysql events,
// as the server would send them.
type recorder struct {
	st     *streamer
	events []*change.Event
	logPos uint32
	ts     uint32 // the events' header timestamp, after 1700000000
}

func newRecorder(t *testing.T, flavor string, gset gomysql.GTIDSet) *recorder {
	t.Helper()
	tb := &table{db: "d", name: "t", key: []int{0}}
	c := column{name: "id", dataType: "int", columnType: "int(11)", precision: 10, scale: 0}
	c.typ = columnType(&c)
	tb.cols = []column{c}
	tb.dflts = []*change.Value{nil}
	tb.t = &change.Table{ID: change.TableID{DB: "d", Name: "t"}, Key: []int{0},
		Columns: []change.Column{{Name: "id", Type: c.typ}}}
	src := &Source{flavor: flavor, tables: map[string]*table{"d.t": tb}, log: slog.Default(),
		collations: map[uint64]string{8: "latin1", 33: "utf8mb3", 45: "utf8mb4", 63: "binary"}}
	src.opts.Config.Tables = []string{"d.t"}
	var err error
	if src.sel, err = src.opts.Config.Selection(); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	r.st = &streamer{src: src, file: "bin.000001", gset: gset, out: sourcetest.FuncStream(func(_ context.Context, e *change.Event) error {
		r.events = append(r.events, e)
		return nil
	})}
	return r
}

func (r *recorder) feed(t *testing.T, typ replication.EventType, ev replication.Event) error {
	t.Helper()
	r.logPos += 100
	var raw []byte
	if re, ok := ev.(*replication.RowsEvent); ok {
		raw = rowsEventBytes(t, re)
	}
	return r.st.handle(context.Background(), &replication.BinlogEvent{
		Header:  &replication.EventHeader{EventType: typ, LogPos: r.logPos, EventSize: 100, Timestamp: 1700000000 + r.ts, ServerID: 1},
		Event:   ev,
		RawData: raw,
	})
}

// rowsEventBytes is a v1 rows event of re's rows (every column present)
// as the server writes it, without a checksum, after an empty header; it
// sets re's bitmap as go-mysql's DecodeHeader would. A MariaDB stream
// reads the rows from these bytes (rows.go), a MySQL one takes re.Rows.
func rowsEventBytes(t *testing.T, re *replication.RowsEvent) []byte {
	t.Helper()
	n := int(re.ColumnCount)
	raw := make([]byte, replication.EventHeaderSize+6+2) // the header, table id, flags
	raw = append(raw, byte(n))
	re.ColumnBitmap1 = bytes.Repeat([]byte{0xff}, (n+7)/8)
	raw = append(raw, re.ColumnBitmap1...)
	for _, row := range re.Rows {
		nulls := make([]byte, (n+7)/8)
		for i, v := range row {
			if v == nil {
				nulls[i/8] |= 1 << (i % 8)
			}
		}
		raw = append(raw, nulls...)
		for _, v := range row {
			switch v := v.(type) {
			case nil:
			case int32:
				raw = binary.LittleEndian.AppendUint32(raw, uint32(v))
			case string: // a VARCHAR of fewer than 256 bytes
				raw = append(append(raw, byte(len(v))), v...)
			default:
				t.Fatalf("rowsEventBytes: %T", v)
			}
		}
	}
	return raw
}

func (r *recorder) query(t *testing.T, q string) {
	t.Helper()
	if err := r.feed(t, replication.QUERY_EVENT, &replication.QueryEvent{Schema: []byte("d"), Query: []byte(q), SlaveProxyID: 42}); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func (r *recorder) insert(t *testing.T, ids ...int32) error {
	t.Helper()
	var rows [][]any
	for _, id := range ids {
		rows = append(rows, []any{id})
	}
	return r.feed(t, replication.WRITE_ROWS_EVENTv1, &replication.RowsEvent{
		Table:       &replication.TableMapEvent{Schema: []byte("d"), Table: []byte("t"), ColumnCount: 1, ColumnType: []byte{gomysql.MYSQL_TYPE_LONG}, ColumnMeta: []uint16{0}, NullBitmap: []byte{0}},
		ColumnCount: 1,
		Rows:        rows,
	})
}

// positions lists the indexes of emitted events that carry a position.
func (r *recorder) positions() []int {
	var at []int
	for i, e := range r.events {
		if e.Position != nil {
			at = append(at, i)
		}
	}
	return at
}

func TestSavepointsAreNotCommits(t *testing.T) {
	for _, flavor := range []string{flavorMariaDB, flavorMySQL} {
		t.Run(flavor, func(t *testing.T) {
			r := newRecorder(t, flavor, nil)
			wantGTID := "0-1-7"
			if flavor == flavorMariaDB {
				if err := r.feed(t, replication.MARIADB_GTID_EVENT, &replication.MariadbGTIDEvent{GTID: gomysql.MariadbGTID{DomainID: 0, ServerID: 1, SequenceNumber: 7}}); err != nil {
					t.Fatal(err)
				}
			} else {
				u := uuid.MustParse("3e11fa47-71ca-11e1-9e33-c80aa9429562")
				wantGTID = u.String() + ":7"
				r.st.gset, _ = gomysql.ParseMysqlGTIDSet(u.String() + ":1-6")
				if err := r.feed(t, replication.GTID_EVENT, &replication.GTIDEvent{SID: u[:], GNO: 7}); err != nil {
					t.Fatal(err)
				}
			}
			if flavor == flavorMySQL {
				r.query(t, "BEGIN") // MariaDB's GTID event stands for it
			}
			must(t, r.insert(t, 1))
			r.query(t, "SAVEPOINT `a`")
			must(t, r.insert(t, 2, 3))
			r.query(t, "ROLLBACK TO `a`")
			must(t, r.insert(t, 4))
			r.query(t, "SAVEPOINT `to`") // a savepoint named like a table keyword
			r.query(t, "RELEASE SAVEPOINT `to`")
			must(t, r.insert(t, 5))
			if got := r.positions(); len(got) != 0 {
				t.Fatalf("positions emitted inside the transaction at events %v", got)
			}
			must(t, r.feed(t, replication.XID_EVENT, &replication.XIDEvent{XID: 9}))
			if got := r.positions(); len(got) != 1 || got[0] != len(r.events)-1 {
				t.Fatalf("positions at %v of %d events, want only the last (the XID)", got, len(r.events))
			}
			for _, e := range r.events[:len(r.events)-1] {
				if e.Source.Strings[slotGTID] != wantGTID {
					t.Errorf("row %s has GTID %q, want the transaction's %q", e.ID, e.Source.Strings[slotGTID], wantGTID)
				}
				if flavor == flavorMySQL && e.Source.Ints[slotThread] != 42 {
					t.Errorf("row %s has thread %d, want the transaction's 42", e.ID, e.Source.Ints[slotThread])
				}
			}
			p, err := decodePosition(r.events[len(r.events)-1].Position)
			must(t, err)
			if !strings.Contains(p.GTID, "7") {
				t.Errorf("commit position %+v does not include the transaction's GTID", p)
			}
		})
	}
}

// source.ts_ms of a MariaDB row is its rows event's time, as Debezium's
// MariaDbStreamingChangeEventSource.setEventTimestamp takes every event's:
// a transaction that spans a second boundary has rows of both seconds.
// MySQL's rows keep the GTID event's time (Debezium takes the GTID event's
// commit timestamp there).
func TestRowTimestampMariaDB(t *testing.T) {
	for _, flavor := range []string{flavorMariaDB, flavorMySQL} {
		t.Run(flavor, func(t *testing.T) {
			r := newRecorder(t, flavor, nil)
			if flavor == flavorMariaDB {
				must(t, r.feed(t, replication.MARIADB_GTID_EVENT, &replication.MariadbGTIDEvent{GTID: gomysql.MariadbGTID{DomainID: 0, ServerID: 1, SequenceNumber: 7}}))
			} else {
				u := uuid.MustParse("3e11fa47-71ca-11e1-9e33-c80aa9429562")
				r.st.gset, _ = gomysql.ParseMysqlGTIDSet(u.String() + ":1-6")
				must(t, r.feed(t, replication.GTID_EVENT, &replication.GTIDEvent{SID: u[:], GNO: 7}))
				r.query(t, "BEGIN")
			}
			must(t, r.insert(t, 1))
			r.ts = 1
			must(t, r.insert(t, 2))
			must(t, r.feed(t, replication.XID_EVENT, &replication.XIDEvent{XID: 9}))
			want := []int64{1700000000e6, 1700000001e6}
			if flavor == flavorMySQL {
				want[1] = 1700000000e6
			}
			for i, w := range want {
				if got := r.events[i].Source.CommitMicros; got != w {
					t.Errorf("row %d: source time %d µs, want %d", i+1, got, w)
				}
			}
		})
	}
}

// A transaction that changed a non-transactional table ends with a
// ROLLBACK query: that is the end of the transaction, and the rows stand.
func TestRollbackQueryEndsTransaction(t *testing.T) {
	r := newRecorder(t, flavorMariaDB, nil)
	must(t, r.feed(t, replication.MARIADB_GTID_EVENT, &replication.MariadbGTIDEvent{GTID: gomysql.MariadbGTID{ServerID: 1, SequenceNumber: 3}}))
	r.query(t, "BEGIN")
	must(t, r.insert(t, 1))
	r.query(t, "ROLLBACK")
	if got := r.positions(); len(got) != 1 || got[0] != 1 {
		t.Fatalf("positions at %v, want one after the row", got)
	}
	// DDL outside a transaction is a commit.
	must(t, r.feed(t, replication.MARIADB_GTID_EVENT, &replication.MariadbGTIDEvent{GTID: gomysql.MariadbGTID{ServerID: 1, SequenceNumber: 4}, Flags: replication.BINLOG_MARIADB_FL_STANDALONE | replication.BINLOG_MARIADB_FL_DDL}))
	r.query(t, "CREATE TABLE other (id int primary key)")
	if got := r.positions(); len(got) != 2 {
		t.Fatalf("positions at %v, want one more after the DDL", got)
	}
}

func TestXARefused(t *testing.T) {
	r := newRecorder(t, flavorMySQL, nil)
	must(t, r.feed(t, replication.ANONYMOUS_GTID_EVENT, &replication.GTIDEvent{SID: make([]byte, 16)}))
	r.query(t, "XA START X'78',X'',1")
	err := r.insert(t, 1)
	if err == nil || !strings.Contains(err.Error(), "XA transaction") || !strings.Contains(err.Error(), "d.t at bin.000001:") {
		t.Fatalf("captured rows in an XA transaction: err %v, want a refusal naming the table and position", err)
	}
	if len(r.events) != 0 {
		t.Fatalf("%d events published from an XA transaction", len(r.events))
	}

	// XA on tables that are not captured: no position until it commits.
	r = newRecorder(t, flavorMySQL, nil)
	must(t, r.feed(t, replication.ANONYMOUS_GTID_EVENT, &replication.GTIDEvent{SID: make([]byte, 16)}))
	r.query(t, "XA START X'78',X'',1")
	r.query(t, "XA END X'78',X'',1")
	must(t, r.feed(t, replication.XA_PREPARE_LOG_EVENT, &replication.GenericEvent{}))
	if len(r.events) != 0 {
		t.Fatalf("a position was emitted at XA END / XA PREPARE")
	}
	must(t, r.feed(t, replication.ANONYMOUS_GTID_EVENT, &replication.GTIDEvent{SID: make([]byte, 16)}))
	r.query(t, "XA COMMIT X'78',X'',1")
	if got := r.positions(); len(got) != 1 {
		t.Fatalf("positions %v after XA COMMIT, want 1", got)
	}
}

// gtid_mode OFF / OFF_PERMISSIVE: anonymous GTID events must leave the
// position a file and offset, never a GTID set of zero UUIDs.
func TestAnonymousGTIDsResumeByFile(t *testing.T) {
	r := newRecorder(t, flavorMySQL, nil)
	for i := range 2 {
		must(t, r.feed(t, replication.ANONYMOUS_GTID_EVENT, &replication.GTIDEvent{SID: make([]byte, 16)}))
		r.query(t, "BEGIN")
		must(t, r.insert(t, int32(i)))
		must(t, r.feed(t, replication.XID_EVENT, &replication.XIDEvent{}))
	}
	last := r.events[len(r.events)-1]
	var raw map[string]any
	must(t, json.Unmarshal(last.Position, &raw))
	if g, ok := raw["gtid"]; ok {
		t.Fatalf("position %s has a GTID set %v; want file/position only", last.Position, g)
	}
	p, err := decodePosition(last.Position)
	must(t, err)
	if p.File != "bin.000001" || p.Pos != r.logPos {
		t.Fatalf("position %+v, want bin.000001:%d", p, r.logPos)
	}
	if r.events[0].Source.Strings[slotGTID] != "" {
		t.Fatalf("row GTID %q, want none", r.events[0].Source.Strings[slotGTID])
	}

	// A stream started by file while GTIDs start to appear (gtid_mode
	// turned ON meanwhile) keeps resuming by file: a set of only the GTIDs
	// seen since would claim the server has executed nothing else.
	u := uuid.MustParse("3e11fa47-71ca-11e1-9e33-c80aa9429562")
	must(t, r.feed(t, replication.GTID_EVENT, &replication.GTIDEvent{SID: u[:], GNO: 100}))
	r.query(t, "BEGIN")
	must(t, r.insert(t, 9))
	must(t, r.feed(t, replication.XID_EVENT, &replication.XIDEvent{}))
	if p, _ := decodePosition(r.events[len(r.events)-1].Position); p.GTID != "" {
		t.Fatalf("position GTID %q from a stream started by file", p.GTID)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// tableMap is a table map event for d.t as the server logs it: types and
// metadata always, names and the rest with binlog_row_metadata = FULL.
func tableMap(full bool, names []string, types []byte, meta []uint16) *replication.TableMapEvent {
	tm := &replication.TableMapEvent{Schema: []byte("d"), Table: []byte("t"), ColumnCount: uint64(len(types)),
		ColumnType: types, ColumnMeta: meta, NullBitmap: make([]byte, (len(types)+7)/8)}
	if full {
		for _, n := range names {
			tm.ColumnName = append(tm.ColumnName, []byte(n))
		}
		tm.DefaultCharset = []uint64{45} // utf8mb4_general_ci
		tm.SignednessBitmap = []byte{0}
		tm.PrimaryKey = []uint64{0}
	}
	return tm
}

// With FULL metadata, a row written before a schema change is decoded
// with its own columns: here the table is (id) now, the row was logged as
// (id, a VARCHAR).
func TestRowDecodedWithLoggedShape(t *testing.T) {
	r := newRecorder(t, flavorMariaDB, nil)
	must(t, r.feed(t, replication.MARIADB_GTID_EVENT, &replication.MariadbGTIDEvent{GTID: gomysql.MariadbGTID{ServerID: 1, SequenceNumber: 1}}))
	tm := tableMap(true, []string{"id", "a"}, []byte{gomysql.MYSQL_TYPE_LONG, gomysql.MYSQL_TYPE_VARCHAR}, []uint16{0, 40})
	for range 2 {
		must(t, r.feed(t, replication.WRITE_ROWS_EVENTv1, &replication.RowsEvent{Table: tm, ColumnCount: 2, Rows: [][]any{{int32(2), "two"}}}))
	}
	ev := r.events[0]
	if len(ev.Table.Columns) != 2 || ev.Table.Columns[1].Name != "a" || ev.Table.Columns[1].Type.Kind != change.KindString {
		t.Fatalf("decoded with columns %+v, want id, a varchar", ev.Table.Columns)
	}
	if string(ev.After[1].Bytes) != "two" || ev.After[0].Int != 2 {
		t.Fatalf("row %+v", ev.After)
	}
	if r.events[1].Table != ev.Table {
		t.Fatal("one past shape must make one change.Table")
	}
	// The current shape again: the catalog's table, with its defaults.
	tm = tableMap(true, []string{"id"}, []byte{gomysql.MYSQL_TYPE_LONG}, []uint16{0})
	must(t, r.feed(t, replication.WRITE_ROWS_EVENTv1, &replication.RowsEvent{Table: tm, ColumnCount: 1, Rows: [][]any{{int32(3)}}}))
	if got := r.events[2].Table; got != r.st.src.tables["d.t"].t {
		t.Fatalf("a row of the current shape was decoded with %+v", got.Columns)
	}
}

// A stream that lags re-reads the catalog at one DDL when a later DDL has
// already run: rows between the two are in a past shape the catalog no
// longer has, and their columns keep the defaults of the shape read
// before (here s SMALLINT DEFAULT -3, since retyped to INT without one),
// as Debezium's schema history has them.
func TestPastShapeKeepsEarlierDefaults(t *testing.T) {
	r := newRecorder(t, flavorMariaDB, nil)
	cur := r.st.src.tables["d.t"]
	small := column{name: "s", dataType: "smallint", columnType: "smallint(6)", precision: 5, scale: 0}
	small.typ = columnType(&small)
	cur.cols, cur.dflts = append(cur.cols, small), append(cur.dflts, &change.Value{Kind: change.Int, Int: -3})
	cur.remember() // what describe does before it reads the catalog again
	wide := column{name: "s", dataType: "int", columnType: "int(11)", precision: 10, scale: 0}
	wide.typ = columnType(&wide)
	cur.cols, cur.dflts = []column{cur.cols[0], wide}, []*change.Value{nil, nil}
	cur.remember() // two re-reads of the same shape: id and s INT once each, s SMALLINT kept
	cur.remember()
	if len(cur.earlier) != 3 {
		t.Fatalf("earlier holds %d columns after re-reads of one shape, want 3 (id, s INT, s SMALLINT)", len(cur.earlier))
	}

	tm := tableMap(true, []string{"id", "s"}, []byte{gomysql.MYSQL_TYPE_LONG, gomysql.MYSQL_TYPE_SHORT}, []uint16{0, 0})
	got, err := r.st.shapeFor(cur, tm, "bin.000001:400")
	must(t, err)
	if d := got.t.Columns[1].Default; d == nil || d.Int != -3 {
		t.Fatalf("past shape's s default %+v, want -3 from the earlier shape", d)
	}
	// A column no shape read had: no default, never another column's.
	tm = tableMap(true, []string{"id", "s"}, []byte{gomysql.MYSQL_TYPE_LONG, gomysql.MYSQL_TYPE_LONGLONG}, []uint16{0, 0})
	got, err = r.st.shapeFor(cur, tm, "bin.000001:500")
	must(t, err)
	if d := got.t.Columns[1].Default; d != nil {
		t.Fatalf("BIGINT s took default %+v", d)
	}
}

// Without FULL metadata a shape that differs from the catalog's cannot
// be rebuilt: the error names the table, the position and the fix.
func TestRowShapeUnknownWithoutMetadata(t *testing.T) {
	r := newRecorder(t, flavorMySQL, nil)
	cur := r.st.src.tables["d.t"]
	tm := tableMap(false, nil, []byte{gomysql.MYSQL_TYPE_VARCHAR}, []uint16{40})
	_, err := r.st.shapeFor(cur, tm, "bin.000001:400")
	if err == nil {
		t.Fatal("a VARCHAR row decoded as the table's INT column")
	}
	for _, want := range []string{"d.t at bin.000001:400", "binlog_row_metadata = FULL", "DB parameter group", "resnapshot required"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// Same types: nothing says the shape changed; the catalog's is used.
	tm = tableMap(false, nil, []byte{gomysql.MYSQL_TYPE_LONG}, []uint16{0})
	if got, err := r.st.shapeFor(cur, tm, "bin.000001:500"); err != nil || got != cur {
		t.Fatalf("same types: %v, %v", got, err)
	}
}

// MariaDB's signedness bitmap has a bit for YEAR columns, MySQL's does
// not: the INT after a YEAR must read its own bit.
func TestUnsignedMapAfterYear(t *testing.T) {
	types := []byte{gomysql.MYSQL_TYPE_LONG, gomysql.MYSQL_TYPE_YEAR, gomysql.MYSQL_TYPE_LONG}
	tm := &replication.TableMapEvent{ColumnCount: 3, ColumnType: types, ColumnMeta: make([]uint16, 3)}
	tm.SignednessBitmap = []byte{0b1100_0000} // MariaDB: id unsigned, year "unsigned", c signed
	if m := unsignedMap(tm, flavorMariaDB); !m[0] || m[2] {
		t.Fatalf("MariaDB: %v, want column 0 unsigned and 2 signed", m)
	}
	tm.SignednessBitmap = []byte{0b1000_0000} // MySQL: id unsigned, c signed
	if m := unsignedMap(tm, flavorMySQL); !m[0] || m[2] {
		t.Fatalf("MySQL: %v, want column 0 unsigned and 2 signed", m)
	}
}
