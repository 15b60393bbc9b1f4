package mysql

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
)

// FuzzRowsDecode holds the MariaDB stream's rows decoder (rows.go) to
// go-mysql's: a rows event of random columns (types and metadata as
// table maps carry them, the catalog's character sets, signedness, ENUM
// and SET members, and types the binlog does not name), random bitmaps
// (binlog_row_image MINIMAL and NOBLOB leave columns out) and random row
// bytes, valid and malformed, is decoded by go-mysql's RowsEvent.Decode
// and decodeRow, as a MySQL stream decodes it, and by streamer.images, as
// a MariaDB stream does: the same rows, or an error from both, with every
// column published or some excluded and masked. The seed corpus
// (testdata/fuzz/FuzzRowsDecode) holds a MariaDB 10.11 server's events of
// every column type of the fidelity tests (integration/mysql), full,
// NULL, edge and zero values, with full, minimal and noblob row images.
//
// An input is spec (five bytes a column: binlog type, meta high and low
// bytes, catalog attributes, catalog type), the event's bitmaps, its row
// bytes and the event kind (write, update, delete; 4: with column rules).
func FuzzRowsDecode(f *testing.F) {
	f.Add([]byte{gomysql.MYSQL_TYPE_LONG, 0, 0, 0, 0, gomysql.MYSQL_TYPE_VARCHAR, 0, 40, 2, 0}, []byte{0xff}, []byte{0, 1, 0, 0, 0, 3, 'a', 'b', 'c'}, uint8(0))
	f.Fuzz(func(t *testing.T, spec, bitmaps, rows []byte, kind uint8) {
		if len(spec) > 5*80 || len(rows) > 1<<13 {
			return
		}
		fx, err := newRowsFixture(spec, bitmaps, rows, kind)
		if err != nil {
			return // not a table map go-mysql parses
		}
		if fx.columnless && len(rows) > 0 {
			return // go-mysql reads rows of no column for ever
		}
		want, wantErr := fx.goMySQL()
		got, gotErr := fx.ours()
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("go-mysql: %v; ours: %v\nspec %x bitmaps %x rows %x kind %d", wantErr, gotErr, spec, bitmaps, rows, kind)
		}
		if wantErr != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%d images, go-mysql %d", len(got), len(want))
		}
		for i := range want {
			for j := range want[i] {
				if !identical(got[i][j], want[i][j]) {
					c := fx.t.cols[j]
					if fx.pub != nil {
						c = fx.t.cols[fx.pub.proj.Kept[j]]
					}
					t.Fatalf("image %d column %d (%s, kind %d): got %v, go-mysql %v\nspec %x bitmaps %x rows %x kind %d",
						i, j, c.columnType, c.typ.Kind, got[i][j], want[i][j], spec, bitmaps, rows, kind)
				}
			}
		}
	})
}

// identical: equal values, NaNs by their bits, nil and empty bytes apart.
func identical(a, b change.Value) bool {
	return a.Kind == b.Kind && a.Int == b.Int && math.Float64bits(a.Float) == math.Float64bits(b.Float) &&
		bytes.Equal(a.Bytes, b.Bytes) && (a.Bytes == nil) == (b.Bytes == nil)
}

// The catalog's choices for a column (spec's attribute byte).
var (
	fuzzCharsets = []string{"", "utf8mb4", "latin1", "binary", "cp1251", "sjis", "utf16", "klingon8"}
	fuzzMembers  = func() [][]string {
		m := [][]string{nil, {"red", "green", "blue"}, {"a", "b", "c"}, {"a,b", "Red", "Привет"}, {"x", "Y", "ü"},
			{"it's", `b\s`, "(p)", " sp"}, nil, nil}
		for i := range 64 {
			m[6] = append(m[6], fmt.Sprintf("m%d", i))
		}
		for i := range 300 {
			m[7] = append(m[7], fmt.Sprintf("e%d", i))
		}
		return m
	}()
)

// fuzzFormat is the benchmark's MariaDB format description without
// checksums: an event's bytes end with its rows, so reading past them
// fails in go-mysql as it does here.
func fuzzFormat() []byte {
	raw, _ := hexBytes(benchFormatEvent)
	raw[len(raw)-5] = replication.BINLOG_CHECKSUM_ALG_OFF
	return raw
}

func hexBytes(h string) ([]byte, error) {
	var b []byte
	_, err := fmt.Sscanf(h, "%x", &b)
	return b, err
}

// eventBytes is an event of type typ and body, with its header.
func eventBytes(typ replication.EventType, body []byte) []byte {
	raw := make([]byte, replication.EventHeaderSize, replication.EventHeaderSize+len(body))
	raw[4] = byte(typ)
	binary.LittleEndian.PutUint32(raw[9:], uint32(len(raw)+len(body)))
	return slices.Clip(append(raw, body...))
}

type rowsFixture struct {
	tmRaw, rowsRaw []byte
	typ            replication.EventType
	t              *table
	pub            *projected
	src            *Source
	columnless     bool // the rows' images hold no column
}

func newRowsFixture(spec, bitmaps, rows []byte, kind uint8) (*rowsFixture, error) {
	n := len(spec) / 5
	// The table map: table id 1, d.t, types, metadata.
	var types, meta []byte
	for i := range n {
		tp, hi, lo := spec[5*i], spec[5*i+1], spec[5*i+2]
		types = append(types, tp)
		switch tp {
		case gomysql.MYSQL_TYPE_STRING, gomysql.MYSQL_TYPE_NEWDECIMAL:
			meta = append(meta, hi, lo)
		case gomysql.MYSQL_TYPE_VAR_STRING, gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_BIT:
			meta = append(meta, lo, hi) // little-endian
		case gomysql.MYSQL_TYPE_BLOB, gomysql.MYSQL_TYPE_DOUBLE, gomysql.MYSQL_TYPE_FLOAT, gomysql.MYSQL_TYPE_GEOMETRY,
			gomysql.MYSQL_TYPE_VECTOR, gomysql.MYSQL_TYPE_JSON, gomysql.MYSQL_TYPE_TIME2, gomysql.MYSQL_TYPE_DATETIME2, gomysql.MYSQL_TYPE_TIMESTAMP2:
			meta = append(meta, lo)
		case gomysql.MYSQL_TYPE_NEWDATE, gomysql.MYSQL_TYPE_ENUM, gomysql.MYSQL_TYPE_SET,
			gomysql.MYSQL_TYPE_TINY_BLOB, gomysql.MYSQL_TYPE_MEDIUM_BLOB, gomysql.MYSQL_TYPE_LONG_BLOB:
			return nil, fmt.Errorf("type %d in a table map", tp)
		}
	}
	body := []byte{1, 0, 0, 0, 0, 0, 0, 0, 1, 'd', 0, 1, 't', 0}
	body = append(body, gomysql.PutLengthEncodedInt(uint64(n))...)
	body = append(body, types...)
	body = append(body, gomysql.PutLengthEncodedInt(uint64(len(meta)))...)
	body = append(body, meta...)
	body = append(body, make([]byte, (n+7)/8)...)
	fx := &rowsFixture{tmRaw: eventBytes(replication.TABLE_MAP_EVENT, body)}

	// The rows event.
	fx.typ = []replication.EventType{replication.WRITE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv1}[kind&3%3]
	body = []byte{1, 0, 0, 0, 0, 0, 1, 0}
	body = append(body, gomysql.PutLengthEncodedInt(uint64(n))...)
	nb := (n + 7) / 8
	fx.columnless = true
	for range map[bool]int{false: 1, true: 2}[fx.typ == replication.UPDATE_ROWS_EVENTv1] {
		bm := bytes.Repeat([]byte{0xff}, nb)
		bitmaps = bitmaps[copy(bm, bitmaps):]
		body = append(body, bm...)
		for i := range n {
			if bm[i/8]&(1<<(i%8)) != 0 {
				fx.columnless = false
			}
		}
	}
	fx.rowsRaw = eventBytes(fx.typ, append(body, rows...))

	// The catalog's columns: as logged, then the attributes the catalog
	// knows and the binlog may not say.
	p := replication.NewBinlogParser()
	p.SetFlavor(flavorMariaDB)
	var tm *replication.TableMapEvent
	if err := catch(func() error {
		for _, raw := range [][]byte{fuzzFormat(), fx.tmRaw} {
			ev, err := p.Parse(raw)
			if err != nil {
				return err
			}
			tm, _ = ev.Event.(*replication.TableMapEvent)
		}
		return nil
	}); err != nil || tm == nil {
		return nil, fmt.Errorf("table map: %v", err)
	}
	collations := map[uint64]string{8: "latin1", 33: "utf8mb3", 45: "utf8mb4", 63: "binary"}
	fx.t = &table{db: "d", name: "t", mariadb: true}
	fx.t.cols = loggedColumns(tm, flavorMariaDB, collations)
	fx.t.t = &change.Table{ID: change.TableID{DB: "d", Name: "t"}}
	for i := range fx.t.cols {
		c := &fx.t.cols[i]
		attr, catalog := spec[5*i+3], spec[5*i+4]
		c.name = fmt.Sprintf("c%d", i)
		switch catalog % 16 {
		case 1:
			c.dataType, c.columnType = "json", "json"
		case 2:
			c.dataType, c.columnType = "point", "point"
		case 3:
			c.dataType, c.columnType = "linestring", "linestring"
		case 4:
			c.dataType, c.columnType = "inet6", "inet6"
		case 5:
			c.dataType, c.columnType = "float", "float(7,3)"
		case 6:
			c.dataType, c.columnType, c.octets = "binary", "binary", int(spec[5*i+2])
		case 7:
			c.dataType, c.columnType, c.precision = "bit", "bit", int(spec[5*i+2]%66)
		case 8:
			c.dataType, c.columnType, c.scale = "decimal", "decimal", int(spec[5*i+2]%40)
		}
		if attr&1 != 0 && !strings.HasSuffix(c.columnType, " unsigned") {
			c.columnType += " unsigned"
		}
		switch realTp, _ := realType(tm.ColumnType[i], tm.ColumnMeta[i]); realTp {
		case gomysql.MYSQL_TYPE_STRING, gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_VAR_STRING, gomysql.MYSQL_TYPE_BLOB,
			gomysql.MYSQL_TYPE_ENUM, gomysql.MYSQL_TYPE_SET, gomysql.MYSQL_TYPE_GEOMETRY:
			c.charset = fuzzCharsets[attr>>1&7]
		}
		c.typ = columnType(c)
		if c.dataType == "enum" || c.dataType == "set" {
			c.members = fuzzMembers[attr>>4&7]
		}
		fx.t.t.Columns = append(fx.t.t.Columns, change.Column{Name: c.name, Type: c.typ})
	}
	fx.src = &Source{flavor: flavorMariaDB, log: slog.New(slog.DiscardHandler), tables: map[string]*table{"d.t": fx.t}}
	fx.src.opts.Config.Tables = []string{"d.t"}
	if kind&4 != 0 && n > 1 {
		// The first column left out, the second masked (a hash, or a
		// fixed text, which a NULL takes too).
		fx.src.opts.Config.ExcludeColumns = []string{`d\.t\.c0`}
		mask := config.MaskColumns{Columns: []string{`d\.t\.c1`}, Hash: "SHA-256", Salt: "s"}
		if kind&8 != 0 {
			mask = config.MaskColumns{Columns: []string{`d\.t\.c1`}, Replacement: "***"}
		}
		fx.src.opts.Config.MaskColumns = []config.MaskColumns{mask}
	}
	var err error
	if fx.src.sel, err = fx.src.opts.Config.Selection(); err != nil {
		return nil, err
	}
	fx.pub = fx.src.published(fx.t)
	return fx, nil
}

// catch turns a panic into an error: go-mysql's parser recovers its rows
// decode, not a table map's or a rows event header's.
func catch(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// parse parses the fixture's events with the MariaDB stream's parser
// (newParser), with its rows decode or without.
func (fx *rowsFixture) parse(hook bool) (*replication.BinlogEvent, *streamer, error) {
	p := fx.src.newParser()
	if !hook {
		p.SetRowsEventDecodeFunc(nil)
	}
	st := &streamer{src: fx.src}
	var ev *replication.BinlogEvent
	err := catch(func() error {
		for _, raw := range [][]byte{fuzzFormat(), fx.tmRaw, fx.rowsRaw} {
			var err error
			if ev, err = p.Parse(raw); err != nil {
				return err
			}
			if fd, ok := ev.Event.(*replication.FormatDescriptionEvent); ok {
				st.crc, st.postHeader = fd.ChecksumAlgorithm == replication.BINLOG_CHECKSUM_ALG_CRC32, fd.EventTypeHeaderLengths
			}
		}
		return nil
	})
	return ev, st, err
}

func (fx *rowsFixture) width() int {
	if fx.pub != nil {
		return len(fx.pub.t.Columns)
	}
	return len(fx.t.cols)
}

// goMySQL decodes the rows as a MySQL stream does.
func (fx *rowsFixture) goMySQL() ([]change.Row, error) {
	ev, _, err := fx.parse(false)
	if err != nil {
		return nil, err
	}
	var s snapshot.Slabs
	var out []change.Row
	for _, vals := range ev.Event.(*replication.RowsEvent).Rows {
		row, err := decodeRow(fx.t, fx.pub, vals, s.Row(fx.width()), &s)
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, nil
}

// ours decodes the rows as the MariaDB stream does.
func (fx *rowsFixture) ours() ([]change.Row, error) {
	ev, st, err := fx.parse(true)
	if err != nil {
		return nil, err
	}
	images, err := st.images(ev.Header, ev.Event.(*replication.RowsEvent), ev.RawData)
	if err != nil {
		return nil, err
	}
	var out []change.Row
	for images.more() {
		for range map[bool]int{false: 1, true: 2}[fx.typ == replication.UPDATE_ROWS_EVENTv1] {
			row, err := images.image(fx.t, fx.pub, st.slabs.Row(fx.width()), &st.slabs)
			if err != nil {
				return nil, err
			}
			out = append(out, row)
		}
	}
	return out, nil
}
