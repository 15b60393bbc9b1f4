package mysql

import (
	"errors"
	"fmt"
	"unsafe"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Every statement's rows events come after a table map event of their
// table, the same bytes from one statement to the next until the table
// changes: a MariaDB stream has go-mysql parse a table map only when its
// bytes are new (knownMap), a MySQL stream each time. The
// shape a table map's rows are decoded with (loggedColumns, shapeFor, the
// schema history's rowTable) is decided once per distinct table map and
// kept with it, rather than decided again for every rows event. The
// decision is made again for different bytes under the same table id, a
// new format description (a new binlog file), after a DDL statement (the
// catalog and the schema history change there), and when the catalog's
// table it was made against is no longer the same value or has other
// columns.

// maxMaps bounds streamer.maps (statementEnd): a server gives a table a
// new id when it reopens it, so ids of tables long gone pile up in a long
// stream.
const maxMaps = 4096

// mapShape is the last table map of a table id and what was decided for it.
type mapShape struct {
	body         string                     // the event after its header, checksum left out
	tm           *replication.TableMapEvent // go-mysql's parse of body, which its rows events point to
	db, name, id string                     // the table's database, name, and db.name
	// inPlace: the rows are read in place (rowsInPlace); not where
	// go-mysql decodes them (a signal table, MySQL's binary JSON).
	inPlace bool
	// shape is the table the rows are decoded with (nil: not decided),
	// decided against catalog (nil: the table was not in the catalog),
	// while catalog's change.Table and columns were these.
	shape       *table
	catalog     *table
	catalogT    *change.Table
	catalogCols *column
	ncols       int
}

// tableMap notes a table map event the parser parsed; raw is the event
// as the server sent it.
func (st *streamer) tableMap(raw []byte, tm *replication.TableMapEvent) error {
	body, ok := st.body(raw)
	if !ok {
		return nil
	}
	if m := st.maps[tm.TableID]; m != nil && m.body == string(body) {
		m.tm = tm
		return nil
	}
	if st.maps == nil {
		st.maps = map[uint64]*mapShape{}
	}
	db, name := string(tm.Schema), string(tm.Table)
	st.maps[tm.TableID] = &mapShape{body: string(body), tm: tm, db: db, name: name, id: db + "." + name,
		inPlace: !binaryJSON(tm) && !st.src.isSignal(db, name)}
	return nil
}

// knownMap reports whether raw, a table map event, is the last table map
// of its table id, byte for byte: a MariaDB stream reads it no further
// (event). The parser keeps its parse of those bytes (it forgets its table
// maps at the end of a statement it parsed, and statementEnd forgets
// the stream's then).
func (st *streamer) knownMap(raw []byte) bool {
	body, ok := st.body(raw)
	n := st.tableIDSize(replication.TABLE_MAP_EVENT)
	if !ok || len(body) < n {
		return false
	}
	m := st.maps[gomysql.FixedLengthInt(body[:n])]
	return m != nil && m.body == string(body)
}

// body is an event's bytes after its header, its checksum left out.
func (st *streamer) body(raw []byte) ([]byte, bool) {
	if len(raw) < replication.EventHeaderSize {
		return nil, false
	}
	body := raw[replication.EventHeaderSize:]
	if st.crc {
		if len(body) < replication.BinlogChecksumLength {
			return nil, false
		}
		body = body[:len(body)-replication.BinlogChecksumLength]
	}
	return body, true
}

// tableIDSize is the length of the table id in events of type t, as
// go-mysql reads it: 4 bytes where the format description's post-header
// length of the type is 6, else 6.
func (st *streamer) tableIDSize(t replication.EventType) int {
	if i := int(t) - 1; i < len(st.postHeader) && st.postHeader[i] == 6 {
		return 4
	}
	return 6
}

// skipOptionalMeta is the TableMapOptionalMetaDecodeFunc of the syncer of
// replay.go, which reads only a table map's names.
func skipOptionalMeta([]byte) error { return nil }

// statementEnd is called after a statement's last rows event; parsed: the
// parser parsed it, and forgot its table maps, so the stream forgets its
// own (their bytes read no further, knownMap, would find no parse). The
// stream's table maps are forgotten, with a new parser's, once they are
// maxMaps, never between a statement's table maps (all written before its
// rows: a multi-table UPDATE, a trigger's table) and its rows.
func (st *streamer) statementEnd(parsed bool) error {
	if parsed && st.inPlace {
		st.maps = nil
		return nil
	}
	if len(st.maps) < maxMaps {
		return nil
	}
	st.maps = nil
	if !st.inPlace {
		return nil // the parser forgets its own at each statement's end
	}
	st.parser = st.src.newParser()
	if st.format != nil {
		if _, err := st.parse(st.format); err != nil {
			return fmt.Errorf("binlog format description: %w", err)
		}
	}
	return nil
}

// forgetShapes makes every table map's decision again.
func (st *streamer) forgetShapes() {
	for _, m := range st.maps {
		m.shape = nil
	}
}

// decided returns the shape decided for m's rows, or nil when there is
// none or it was decided against another state of the catalog, whose
// table for m is catalog now.
func (m *mapShape) decided(catalog *table) *table {
	if m == nil || m.shape == nil || catalog != m.catalog {
		return nil
	}
	if catalog != nil && (catalog.t != m.catalogT || unsafe.SliceData(catalog.cols) != m.catalogCols || len(catalog.cols) != m.ncols) {
		return nil
	}
	return m.shape
}

// decide returns the shape to decode the rows of tm with (nil: the table
// is not captured), and keeps it in m (nil: a table map not noted).
// catalog is the captured table of that name now, pos the rows event's.
func (st *streamer) decide(m *mapShape, db, name string, catalog *table, tm *replication.TableMapEvent, pos int64) (*table, error) {
	at := fmt.Sprintf("%s:%d", st.file, pos)
	cur := catalog
	if st.hist != nil && len(tm.ColumnName) != int(tm.ColumnCount) {
		// No names in the event: the schema history says the shape.
		var err error
		if cur, err = st.hist.rowTable(db, name, tm, st.src.flavor, at); cur == nil || err != nil {
			return nil, err
		}
	} else if cur == nil {
		if cur = st.src.goneTable(db, name, tm); cur == nil {
			return nil, nil
		}
	}
	if st.tx.xa {
		return nil, st.refuseXA(cur, pos)
	}
	t, err := st.shapeFor(cur, tm, at)
	if errors.Is(err, errShapeUnknown) {
		// Perhaps a DDL we did not recognise: re-read the catalog once.
		st.forgetShapes()
		if err := describe(st.src.db, cur, cur.t); err != nil {
			return nil, err
		}
		t, err = st.shapeFor(cur, tm, at)
	}
	if err != nil {
		return nil, err
	}
	if m != nil {
		m.shape, m.catalog, m.catalogT, m.catalogCols, m.ncols = t, catalog, nil, nil, 0
		if catalog != nil {
			m.catalogT, m.catalogCols, m.ncols = catalog.t, unsafe.SliceData(catalog.cols), len(catalog.cols)
		}
	}
	return t, nil
}

// refuseXA is the error for rows of t in an XA transaction: a prepared XA
// transaction can still be rolled back after its rows are in the binlog;
// publishing them could publish changes that never commit, and holding
// them back needs state we do not keep. Refused before any is published.
func (st *streamer) refuseXA(t *table, pos int64) error {
	return fmt.Errorf("%s at %s:%d: an XA transaction (XA START … XA PREPARE) changes a captured table; Tributary does not capture XA transactions: commit these changes with BEGIN … COMMIT, or leave the table out of source.tables",
		t.id(), st.file, pos)
}
