package mysql

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Every statement's rows events come after a table map event of their
// table, which go-mysql parses into a new value each time; the bytes are
// the same from one statement to the next until the table changes. The
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
	full         *replication.TableMapEvent // tm with its optional metadata (fullMaps); tm where the syncer reads it
	db, name, id string                     // the table's database, name, and db.name
	// shape is the table the rows are decoded with (nil: not decided),
	// decided against catalog (nil: the table was not in the catalog),
	// while catalog's change.Table and columns were these.
	shape       *table
	catalog     *table
	catalogT    *change.Table
	catalogCols *column
	ncols       int
}

// tableMap notes a table map event; raw is the event as the server sent it.
func (st *streamer) tableMap(raw []byte, tm *replication.TableMapEvent) error {
	if len(raw) < replication.EventHeaderSize {
		return nil
	}
	body := raw[replication.EventHeaderSize:]
	if st.crc {
		if len(body) < replication.BinlogChecksumLength {
			return nil
		}
		body = body[:len(body)-replication.BinlogChecksumLength]
	}
	if m := st.maps[tm.TableID]; m != nil && m.body == string(body) {
		m.tm = tm
		return nil
	}
	if st.maps == nil {
		st.maps = map[uint64]*mapShape{}
	}
	full := tm
	if st.full != nil {
		var err error
		if full, err = st.full.parse(raw); err != nil {
			return err
		}
	}
	db, name := string(tm.Schema), string(tm.Table)
	st.maps[tm.TableID] = &mapShape{body: string(body), tm: tm, full: full, db: db, name: name, id: db + "." + name}
	return nil
}

// A MariaDB stream's syncer leaves out a table map's optional metadata
// (syncerConfig: the column names, the key, the signedness, charsets and
// ENUM and SET values), three allocations and a fifth of go-mysql's parse
// in front of every statement's rows; only the shape decided for a table
// map (decide) reads it, and that is decided once per distinct table map.
// fullMaps parses a table map whose bytes are new again, in full, with a
// parser of the stream's own, which has seen the binlog file's format
// description.
type fullMaps struct {
	format []byte // the binlog file's format description event
	p      *replication.BinlogParser
}

// skipOptionalMeta is the syncer's TableMapOptionalMetaDecodeFunc for
// MariaDB: fullMaps reads the metadata where it is needed.
func skipOptionalMeta([]byte) error { return nil }

// formatDescription starts the parser over for a binlog file whose format
// description event is raw.
func (f *fullMaps) formatDescription(raw []byte) error {
	f.format = raw
	return f.reset()
}

// reset starts the parser over (it keeps every table map it parsed, by
// table id; statementEnd resets it with the stream's own maps).
func (f *fullMaps) reset() error {
	f.p = replication.NewBinlogParser()
	f.p.SetFlavor(flavorMariaDB)
	if f.format == nil {
		return nil
	}
	if _, err := f.p.Parse(f.format); err != nil {
		return fmt.Errorf("binlog format description: %w", err)
	}
	return nil
}

// parse returns the table map event raw with its optional metadata.
func (f *fullMaps) parse(raw []byte) (*replication.TableMapEvent, error) {
	if f.format == nil {
		return nil, errors.New("a table map event before the binlog's format description")
	}
	ev, err := f.p.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("binlog table map: %w", err)
	}
	tm, ok := ev.Event.(*replication.TableMapEvent)
	if !ok {
		return nil, fmt.Errorf("binlog table map: parsed as %T", ev.Event)
	}
	return tm, nil
}

// statementEnd is called after a statement's last rows event: the table
// maps are forgotten there once they are maxMaps, never between a
// statement's table maps (all written before its rows: a multi-table
// UPDATE, a trigger's table) and its rows.
func (st *streamer) statementEnd() error {
	if len(st.maps) < maxMaps {
		return nil
	}
	st.maps = nil
	if st.full != nil {
		return st.full.reset()
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
