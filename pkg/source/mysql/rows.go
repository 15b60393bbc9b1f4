package mysql

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// A MariaDB stream decodes the row images of its rows events itself,
// from the event's bytes into the row's change.Values: go-mysql's decode
// (RowsEvent.DecodeData) boxed every column into an interface, formatted
// DECIMALs and times with fmt and time.Format, and made a slice per row,
// 18 of the 31 allocations of a streamed insert (decode_bench_test.go).
// The header is read in place (rowsHeader) or, where go-mysql's parser
// parses the event, by it alone (decodeRowsHeader: the table map, the
// flags, the column bitmaps); the images are read here,
// in the stream's goroutine, where the table's shape at the event is
// known. rowsReader reads what go-mysql's decodeValue reads, value by
// value, into a binVal of the Go type go-mysql would give it, which
// decodeBinlog converts as it converts go-mysql's values; text and binary
// values are sub-slices of the event (go-mysql reads each event into a new
// buffer, which nothing writes again), a DECIMAL's text is cut from the
// slabs, dates and times are read from the text go-mysql would write of
// them, formatted into a scratch buffer. FuzzRowsDecode holds it to
// go-mysql's decode followed by decodeRow, valid and malformed events
// alike, seeded with a real server's events of every column type.
//
// Compressed rows events (MariaDB's log_bin_compress) are inflated first.
// go-mysql decodes the rest: the event types MariaDB does not write (v0,
// v2, MySQL's partial updates), a table map holding MySQL's binary JSON
// type, which MariaDB does not log (its JSON is text), and the signal
// table's rows (snapshot watermarks, signalMark).

// decodeRowsHeader is the MariaDB stream's RowsEventDecodeFunc: go-mysql's
// parser reads a rows event's header (which its table maps' end of
// statement needs), not its rows, which the stream reads (rowImages).
func decodeRowsHeader(e *replication.RowsEvent, data []byte) error {
	_, err := e.DecodeHeader(data)
	return err
}

// rowsInPlace handles raw, a MariaDB rows event (v1, compressed or not),
// without go-mysql's parse: its header is read by rowsHeader, its rows by
// rowImages. done is false where the parser is to parse it.
func (st *streamer) rowsInPlace(ctx context.Context, raw []byte) (done bool, err error) {
	e, ok, err := st.rowsHeader(raw)
	if !ok || err != nil {
		return ok, err
	}
	if err := st.rows(ctx, &st.header, e, raw); err != nil {
		return true, err
	}
	if e.Flags&replication.RowsEventStmtEndFlag != 0 {
		return true, st.statementEnd(false)
	}
	return true, nil
}

// rowsHeader reads the header of raw, a MariaDB v1 rows event, into the
// streamer's header and rowsEvent: the fields go-mysql's DecodeHeader
// sets, the table map the stream's (the parser's parse of the same
// bytes). ok is false where the parser is to parse the event: a table id
// without a table map noted (the parser's error says so), a table whose
// rows go-mysql decodes (mapShape.inPlace).
func (st *streamer) rowsHeader(raw []byte) (*replication.RowsEvent, bool, error) {
	h := &st.header
	if err := h.Decode(raw); err != nil || int(h.EventSize) != len(raw) {
		return nil, false, nil
	}
	body, ok := st.body(raw)
	n := st.tableIDSize(h.EventType)
	if !ok || len(body) < n+2 {
		return nil, false, nil
	}
	m := st.maps[gomysql.FixedLengthInt(body[:n])]
	if m == nil || !m.inPlace {
		return nil, false, nil
	}
	short := func() error {
		return fmt.Errorf("%s at %s:%d: short rows event", m.id, st.file, int64(h.LogPos)-int64(h.EventSize))
	}
	e := &st.rowsEvent
	*e = replication.RowsEvent{Version: 1, TableID: m.tm.TableID, Flags: binary.LittleEndian.Uint16(body[n:]), Table: m.tm}
	pos := n + 2
	size := lenencSize(body[pos:]) // 0 at the end: no columns, as go-mysql reads it
	if pos+size > len(body) {
		return nil, true, short()
	}
	e.ColumnCount, _, _ = gomysql.LengthEncodedInt(body[pos:])
	pos += size
	bitmap := (e.ColumnCount + 7) / 8
	images := uint64(1)
	if h.EventType == replication.UPDATE_ROWS_EVENTv1 || h.EventType == replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1 {
		images = 2
	}
	if bitmap > uint64(len(body)-pos)/images {
		return nil, true, short()
	}
	e.ColumnBitmap1 = body[pos : pos+int(bitmap) : pos+int(bitmap)]
	if images == 2 {
		pos += int(bitmap)
		e.ColumnBitmap2 = body[pos : pos+int(bitmap) : pos+int(bitmap)]
	}
	return e, true, nil
}

// rowImages hands out a rows event's row images in order, decoded by
// rowsReader or, where go-mysql decoded the rows, by decodeRow.
type rowImages struct {
	rows   [][]any // go-mysql's decoded rows; nil with reader
	next   int
	reader *rowsReader
}

func (im *rowImages) more() bool {
	if im.reader != nil {
		return im.reader.more()
	}
	return im.next < len(im.rows)
}

// image decodes the next image of t as pub publishes it into row (Null
// values as wide as the published row).
func (im *rowImages) image(t *table, pub *projected, row change.Row, s *snapshot.Slabs) (change.Row, error) {
	if im.reader != nil {
		return im.reader.image(t, pub, row, s)
	}
	if im.next >= len(im.rows) {
		return nil, errors.New("the rows event ends inside an update's images")
	}
	im.next++
	return decodeRow(t, pub, im.rows[im.next-1], row, s)
}

// images returns the row images of e, a rows event whose header was read
// (rowsHeader, decodeRowsHeader); raw is the event as the server sent it.
func (st *streamer) images(h *replication.EventHeader, e *replication.RowsEvent, raw []byte) (rowImages, error) {
	if st.src.flavor != flavorMariaDB {
		return rowImages{rows: e.Rows}, nil
	}
	body, pos, err := st.rowsBody(h, e, raw)
	if err != nil {
		return rowImages{}, err
	}
	switch h.EventType {
	case replication.WRITE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv1,
		replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		if !binaryJSON(e.Table) {
			data := body[pos:]
			if compressed(h.EventType) {
				if data, err = decompressRows(data); err != nil {
					return rowImages{}, err
				}
			}
			st.reader = rowsReader{tm: e.Table, data: data, ncols: int(e.ColumnCount), row: -1, scratch: st.reader.scratch}
			st.reader.bitmaps[0], st.reader.bitmaps[1] = e.ColumnBitmap1, e.ColumnBitmap2
			st.reader.update = e.ColumnBitmap2 != nil
			return rowImages{reader: &st.reader}, nil
		}
	}
	if err := st.decodeRows(h, e, raw); err != nil {
		return rowImages{}, err
	}
	return rowImages{rows: e.Rows}, nil
}

// decodeRows has go-mysql decode the rows of e (e.Rows), a rows event
// its parser parsed the header of; raw is the event as the server sent
// it.
func (st *streamer) decodeRows(h *replication.EventHeader, e *replication.RowsEvent, raw []byte) error {
	body, pos, err := st.rowsBody(h, e, raw)
	if err != nil {
		return err
	}
	if compressed(h.EventType) {
		// go-mysql decompresses the rows after pos but reads the result
		// from pos on, not from its start (v1.12.0: every compressed
		// event failed, "slice bounds out of range"): hand it the rows
		// alone.
		body, pos = body[pos:], 0
	}
	return e.DecodeData(pos, body)
}

// compressed reports whether t is one of MariaDB's compressed rows events
// (log_bin_compress), whose rows are zlib-compressed after the header.
func compressed(t replication.EventType) bool {
	switch t {
	case replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		return true
	}
	return false
}

// maxRowsEvent is the largest event a server sends (max_allowed_packet's
// ceiling, 1 GiB): a larger length is a corrupt event, not memory to take.
const maxRowsEvent = 1 << 30

// decompressRows inflates a compressed rows event's rows: a byte whose
// low three bits count the bytes of the uncompressed length that follow
// (big-endian), then the zlib stream.
func decompressRows(data []byte) ([]byte, error) {
	if len(data) == 0 || int(data[0]&0x07) >= len(data) {
		return nil, errors.New("short compressed rows event")
	}
	if n := gomysql.BFixedLengthInt(data[1 : 1+data[0]&0x07]); n > maxRowsEvent {
		return nil, fmt.Errorf("compressed rows event of %d bytes, more than an event holds", n)
	}
	out, err := gomysql.DecompressMariadbData(data)
	if err != nil {
		return nil, fmt.Errorf("compressed rows event: %w", err)
	}
	return out, nil
}

// rowsBody returns the body of a rows event whose header was read, and
// where its rows start.
func (st *streamer) rowsBody(h *replication.EventHeader, e *replication.RowsEvent, raw []byte) ([]byte, int, error) {
	body, ok := st.body(raw)
	if !ok {
		return nil, 0, errors.New("short rows event")
	}
	// The header as RowsEvent.DecodeHeader reads it: the table id,
	// flags, v2's extra data, the column count and the bitmaps.
	pos := st.tableIDSize(h.EventType) + 2
	switch h.EventType {
	case replication.WRITE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv2, replication.DELETE_ROWS_EVENTv2, replication.PARTIAL_UPDATE_ROWS_EVENT:
		if len(body) < pos+2 {
			return nil, 0, errors.New("short rows event")
		}
		pos += 2 + int(binary.LittleEndian.Uint16(body[pos:])-2)
	}
	if pos > len(body) {
		return nil, 0, errors.New("short rows event")
	}
	pos += lenencSize(body[pos:]) + len(e.ColumnBitmap1) + len(e.ColumnBitmap2)
	if pos > len(body) {
		return nil, 0, errors.New("short rows event")
	}
	return body, pos, nil
}

// lenencSize is the length of the length-encoded integer at the start of
// b, as gomysql.LengthEncodedInt reads it.
func lenencSize(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	switch b[0] {
	case 0xfc:
		return 3
	case 0xfd:
		return 4
	case 0xfe:
		return 9
	}
	return 1
}

// realType is the type and meta go-mysql's decodeValue reads a value of
// a column of binlog type tp with: a CHAR's real type (ENUM, SET, STRING)
// and its length's two high bits hide in the meta's first byte.
func realType(tp byte, meta uint16) (byte, int) {
	if tp != gomysql.MYSQL_TYPE_STRING {
		return tp, 0
	}
	if meta < 256 {
		return tp, int(meta)
	}
	b0, b1 := uint8(meta>>8), uint8(meta&0xff)
	if b0&0x30 != 0x30 {
		return b0 | 0x30, int(uint16(b1) | uint16((b0&0x30)^0x30)<<4)
	}
	return b0, int(meta & 0xff)
}

// binaryJSON reports whether tm has a column of MySQL's binary JSON,
// which rowsReader leaves to go-mysql.
func binaryJSON(tm *replication.TableMapEvent) bool {
	for i, tp := range tm.ColumnType {
		if i < len(tm.ColumnMeta) {
			if tp, _ = realType(tp, tm.ColumnMeta[i]); tp == gomysql.MYSQL_TYPE_JSON {
				return true
			}
		}
	}
	return false
}

// rowsReader reads the row images of a rows event from its bytes as
// go-mysql's RowsEvent.DecodeData reads them, image after image: the
// before image (bitmaps[0]), then an update's after image (bitmaps[1]).
type rowsReader struct {
	tm      *replication.TableMapEvent
	data    []byte // the row images
	pos     int    // where the next image starts; past data only after its last
	ncols   int    // the column count of the event's header
	bitmaps [2][]byte
	update  bool // images come in pairs, the second of bitmaps[1]
	after   bool // the next image is an update's after image
	// row is where the last row (its first image) started: a row of
	// images holding no column takes no bytes, and would be read again
	// and again (go-mysql's DecodeData loops forever there).
	row int
	// scratch holds a DECIMAL's or a time's text while it is read,
	// reused from value to value and event to event.
	scratch []byte
}

func (r *rowsReader) more() bool { return r.pos < len(r.data) }

var errShortRow = errors.New("rows event: a row image runs past the event's end")

// image decodes the next image into row, as decodeRow does go-mysql's.
func (r *rowsReader) image(t *table, pub *projected, row change.Row, s *snapshot.Slabs) (change.Row, error) {
	bitmap := r.bitmaps[0]
	if r.after {
		bitmap = r.bitmaps[1]
	} else {
		if r.pos == r.row {
			return nil, errors.New("rows event: rows of no column")
		}
		r.row = r.pos
	}
	r.after = r.update && !r.after
	if r.pos > len(r.data) {
		return nil, errShortRow
	}
	if r.ncols != len(t.cols) || r.ncols > len(r.tm.ColumnType) || r.ncols > len(r.tm.ColumnMeta) || (r.ncols+7)/8 > len(bitmap) {
		return nil, fmt.Errorf("row has %d values, table has %d columns", r.ncols, len(t.cols))
	}
	data := r.data[r.pos:]
	// The NULL bitmap has a bit for each column the image holds.
	present := 0
	for _, b := range bitmap[:r.ncols/8] {
		present += bits.OnesCount8(b)
	}
	if rest := r.ncols % 8; rest != 0 {
		present += bits.OnesCount8(bitmap[r.ncols/8] & byte(1<<rest-1))
	}
	pos := (present + 7) / 8
	if pos > len(data) {
		return nil, errShortRow
	}
	nulls, k := data[:pos], 0
	for i := range r.ncols {
		var val change.Value
		j := i // the published column
		if pub != nil {
			j = pub.proj.Out[i]
		}
		if bitmap[i>>3]&(1<<(i&7)) != 0 {
			null := nulls[k>>3]&(1<<(k&7)) != 0
			k++
			if !null {
				if pos > len(data) {
					return nil, errShortRow
				}
				v, n, formatted, err := r.value(data[pos:], r.tm.ColumnType[i], r.tm.ColumnMeta[i])
				if err != nil {
					return nil, fmt.Errorf("column %s: %w", t.cols[i].name, err)
				}
				pos += n
				if j < 0 {
					continue // excluded: read, not decoded
				}
				c := &t.cols[i]
				if formatted && !temporal(c.typ.Kind) {
					v.b = s.Keep(v.b) // kept in the value: out of the scratch buffer
				}
				if val, err = decodeBinlog(c, &v, s); err != nil {
					return nil, fmt.Errorf("column %s: %w", c.name, err)
				}
			}
		}
		if j < 0 {
			continue
		}
		if pub != nil {
			if m := pub.proj.Masks[j]; m != nil {
				val = source.MaskValue(m, &pub.t.Columns[j], val.Bytes, val.Kind == change.Null)
			}
		}
		row[j] = val
	}
	r.pos += pos
	return row, nil
}

func temporal(k change.Kind) bool {
	return k == change.KindDate || k == change.KindTime || k == change.KindTimestamp || k == change.KindTimestampTZ
}

// value reads a value of binlog type tp with meta at the start of data as
// go-mysql's RowsEvent.decodeValue does: the value of the Go type it
// gives, the bytes it takes, an error where it errs or panics (reading
// past the event's end among them). Text and binary values are
// sub-slices of data; DECIMALs, dates and times are go-mysql's text of
// them (formatted), written into r.scratch.
func (r *rowsReader) value(data []byte, tp byte, meta uint16) (v binVal, n int, formatted bool, err error) {
	tp, length := realType(tp, meta)
	need := func(k int) bool { return k <= len(data) }
	buf := r.scratch[:0]
	text := func() (binVal, int, bool, error) {
		r.scratch = buf[:0] // grown, for the next value
		return binVal{kind: binString, b: buf}, n, true, nil
	}
	switch tp {
	case gomysql.MYSQL_TYPE_NULL:
		return binVal{}, 0, false, nil
	case gomysql.MYSQL_TYPE_TINY:
		if !need(1) {
			return v, 0, false, errShortRow
		}
		return binVal{kind: binInt, width: 8, i: int64(int8(data[0]))}, 1, false, nil
	case gomysql.MYSQL_TYPE_SHORT:
		if !need(2) {
			return v, 0, false, errShortRow
		}
		return binVal{kind: binInt, width: 16, i: int64(int16(binary.LittleEndian.Uint16(data)))}, 2, false, nil
	case gomysql.MYSQL_TYPE_INT24:
		if !need(3) {
			return v, 0, false, errShortRow
		}
		u := uint32(data[0]) | uint32(data[1])<<8 | uint32(data[2])<<16
		if u&0x800000 != 0 {
			u |= 0xff000000
		}
		return binVal{kind: binInt, width: 32, i: int64(int32(u))}, 3, false, nil
	case gomysql.MYSQL_TYPE_LONG:
		if !need(4) {
			return v, 0, false, errShortRow
		}
		return binVal{kind: binInt, width: 32, i: int64(int32(binary.LittleEndian.Uint32(data)))}, 4, false, nil
	case gomysql.MYSQL_TYPE_LONGLONG:
		if !need(8) {
			return v, 0, false, errShortRow
		}
		return binVal{kind: binInt, width: 64, i: int64(binary.LittleEndian.Uint64(data))}, 8, false, nil
	case gomysql.MYSQL_TYPE_FLOAT:
		if !need(4) {
			return v, 0, false, errShortRow
		}
		return binVal{kind: binFloat32, f: float64(math.Float32frombits(binary.LittleEndian.Uint32(data)))}, 4, false, nil
	case gomysql.MYSQL_TYPE_DOUBLE:
		if !need(8) {
			return v, 0, false, errShortRow
		}
		return binVal{kind: binFloat64, f: math.Float64frombits(binary.LittleEndian.Uint64(data))}, 8, false, nil
	case gomysql.MYSQL_TYPE_NEWDECIMAL:
		buf, n, err = appendDecimal(buf, data, int(meta>>8), int(meta&0xff))
		if err != nil {
			return v, 0, false, err
		}
		return text()
	case gomysql.MYSQL_TYPE_BIT:
		nbits := int(meta>>8)*8 + int(meta&0xff)
		n = (nbits + 7) / 8
		if n < 1 || n > 8 || nbits <= 1 && n != 1 {
			return v, 0, false, fmt.Errorf("invalid bit length %d", n)
		}
		if !need(n) {
			return v, 0, false, errShortRow
		}
		return binVal{kind: binInt, width: 64, i: int64(gomysql.BFixedLengthInt(data[:n]))}, n, false, nil
	case gomysql.MYSQL_TYPE_TIMESTAMP:
		if !need(4) {
			return v, 0, false, errShortRow
		}
		n = 4
		if t := binary.LittleEndian.Uint32(data); t == 0 {
			buf = append(buf, "0000-00-00 00:00:00"...)
		} else {
			buf = time.Unix(int64(t), 0).In(time.UTC).AppendFormat(buf, fracTimeLayouts[0])
		}
		return text()
	case gomysql.MYSQL_TYPE_TIMESTAMP2:
		dec := int(meta)
		n = 4 + (dec+1)/2
		sec, usec, ok := secFrac(data, 4, dec)
		if !ok {
			return v, 0, false, errShortRow
		}
		if dec > 6 {
			return v, 0, false, fmt.Errorf("timestamp precision %d", dec)
		}
		if sec == 0 {
			buf = appendZeroTime(buf, usec, dec)
		} else if usec < 1e6 {
			// go-mysql's fracTime in TimestampStringLocation (newParser: UTC).
			year, month, day := civil(sec / 86400)
			buf = appendDateTime(buf, year, month, day, sec%86400/3600, sec%3600/60, sec%60, usec, dec)
		} else {
			buf = time.Unix(sec, usec*1000).In(time.UTC).AppendFormat(buf, fracTimeLayouts[dec])
		}
		return text()
	case gomysql.MYSQL_TYPE_DATETIME:
		if !need(8) {
			return v, 0, false, errShortRow
		}
		n = 8
		i64 := binary.LittleEndian.Uint64(data)
		if i64 == 0 {
			buf = append(buf, "0000-00-00 00:00:00"...)
			return text()
		}
		d, t := i64/1000000, i64%1000000
		buf = time.Date(int(d/10000), time.Month((d%10000)/100), int(d%100), int(t/10000), int((t%10000)/100), int(t%100), 0, time.UTC).AppendFormat(buf, fracTimeLayouts[0])
		return text()
	case gomysql.MYSQL_TYPE_DATETIME2:
		dec := int(meta)
		n = 5 + (dec+1)/2
		intPart, frac, ok := secFrac(data, 5, dec)
		if !ok {
			return v, 0, false, errShortRow
		}
		if dec > 6 {
			return v, 0, false, fmt.Errorf("datetime precision %d", dec)
		}
		intPart -= 0x8000000000
		if intPart == 0 {
			buf = appendZeroTime(buf, frac, dec)
			return text()
		}
		tmp := intPart<<24 + frac
		if tmp < 0 {
			tmp = -tmp
		}
		ymdhms := tmp >> 24
		ymd, hms := ymdhms>>17, ymdhms%(1<<17)
		ym := ymd >> 5
		day, month, year := int(ymd%(1<<5)), int(ym%13), int(ym/13)
		second, minute, hour := int(hms%(1<<6)), int((hms>>6)%(1<<6)), int(hms>>12)
		// Before 1970-01-01 00:00:00 go-mysql writes fmt's fields, not time's.
		if intPart < 107420450816 || validDateTime(year, month, day, hour, minute, second, frac) {
			buf = appendDateTime(buf, int64(year), int64(month), int64(day), int64(hour), int64(minute), int64(second), frac, dec)
		} else {
			// time.Date's normalization of an invalid date (ALLOW_INVALID_DATES, a zero month or day).
			buf = time.Date(year, time.Month(month), day, hour, minute, second, int(frac*1000), time.UTC).AppendFormat(buf, fracTimeLayouts[dec])
		}
		return text()
	case gomysql.MYSQL_TYPE_TIME:
		if !need(3) {
			return v, 0, false, errShortRow
		}
		n = 3
		if i := int64(gomysql.FixedLengthInt(data[:3])); i == 0 {
			buf = append(buf, "00:00:00"...)
		} else {
			buf = appendClock(buf, "", i/10000, i%10000/100, i%100, 0, 0)
		}
		return text()
	case gomysql.MYSQL_TYPE_TIME2:
		buf, n, err = appendTime2(buf, data, int(meta))
		if err != nil {
			return v, 0, false, err
		}
		return text()
	case gomysql.MYSQL_TYPE_DATE:
		if !need(3) {
			return v, 0, false, errShortRow
		}
		n = 3
		if i := int64(gomysql.FixedLengthInt(data[:3])); i == 0 {
			buf = append(buf, "0000-00-00"...)
		} else {
			buf = appendPadded(buf, i/(16*32), 4)
			buf = appendPadded(append(buf, '-'), i/32%16, 2)
			buf = appendPadded(append(buf, '-'), i%32, 2)
		}
		return text()
	case gomysql.MYSQL_TYPE_YEAR:
		if !need(1) {
			return v, 0, false, errShortRow
		}
		y := int64(data[0])
		if y != 0 {
			y += 1900
		}
		return binVal{kind: binInt, width: 64, i: y}, 1, false, nil
	case gomysql.MYSQL_TYPE_ENUM:
		switch meta & 0xff {
		case 1:
			if !need(1) {
				return v, 0, false, errShortRow
			}
			return binVal{kind: binInt, width: 64, i: int64(data[0])}, 1, false, nil
		case 2:
			if !need(2) {
				return v, 0, false, errShortRow
			}
			return binVal{kind: binInt, width: 64, i: int64(binary.LittleEndian.Uint16(data))}, 2, false, nil
		}
		return v, 0, false, fmt.Errorf("unknown ENUM packlen=%d", meta&0xff)
	case gomysql.MYSQL_TYPE_SET:
		n = int(meta & 0xff)
		if n < 1 || n > 8 {
			return v, 0, false, fmt.Errorf("invalid bit length %d", n)
		}
		if !need(n) {
			return v, 0, false, errShortRow
		}
		return binVal{kind: binInt, width: 64, i: int64(gomysql.FixedLengthInt(data[:n]))}, n, false, nil
	case gomysql.MYSQL_TYPE_BLOB, gomysql.MYSQL_TYPE_GEOMETRY, gomysql.MYSQL_TYPE_VECTOR:
		if meta < 1 || meta > 4 {
			return v, 0, false, fmt.Errorf("invalid blob packlen = %d", meta)
		}
		p := int(meta)
		if !need(p) {
			return v, 0, false, errShortRow
		}
		l := int(gomysql.FixedLengthInt(data[:p]))
		if l > len(data)-p {
			return v, 0, false, errShortRow
		}
		return binVal{kind: binBytes, b: data[p : p+l]}, p + l, false, nil
	case gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_VAR_STRING, gomysql.MYSQL_TYPE_STRING:
		if tp != gomysql.MYSQL_TYPE_STRING {
			length = int(meta)
		}
		p := 1
		if length >= 256 {
			p = 2
		}
		if !need(p) {
			return v, 0, false, errShortRow
		}
		l := int(gomysql.FixedLengthInt(data[:p]))
		if l > len(data)-p {
			return v, 0, false, errShortRow
		}
		return binVal{kind: binString, b: data[p : p+l]}, p + l, false, nil
	}
	// MYSQL_TYPE_JSON is go-mysql's (binaryJSON).
	return v, 0, false, fmt.Errorf("unsupported type %d in binlog", tp)
}

// secFrac reads a TIMESTAMP2's or DATETIME2's integral part (size bytes,
// big-endian) and the fraction of dec digits after it, as microseconds
// (go-mysql's decodeTimestamp2, decodeDatetime2).
func secFrac(data []byte, size, dec int) (int64, int64, bool) {
	if len(data) < size {
		return 0, 0, false
	}
	i := int64(gomysql.BFixedLengthInt(data[:size]))
	switch dec {
	case 1, 2:
		if len(data) < size+1 {
			return 0, 0, false
		}
		return i, int64(data[size]) * 10000, true
	case 3, 4:
		if len(data) < size+2 {
			return 0, 0, false
		}
		return i, int64(binary.BigEndian.Uint16(data[size:])) * 100, true
	case 5, 6:
		if len(data) < size+3 {
			return 0, 0, false
		}
		return i, int64(gomysql.BFixedLengthInt(data[size : size+3])), true
	}
	return i, 0, true
}

// fracTimeLayouts are go-mysql's time layouts by fractional digits.
var fracTimeLayouts = [7]string{
	"2006-01-02 15:04:05",
	"2006-01-02 15:04:05.0",
	"2006-01-02 15:04:05.00",
	"2006-01-02 15:04:05.000",
	"2006-01-02 15:04:05.0000",
	"2006-01-02 15:04:05.00000",
	"2006-01-02 15:04:05.000000",
}

// appendDateTime appends "YYYY-MM-DD HH:MM:SS[.ffffff]" as
// time.Time.AppendFormat writes fracTimeLayouts[dec] of those fields (the
// fraction frac in microseconds, cut to dec digits), for fields time.Date
// keeps as they are (validDateTime), without building the time.Time:
// formatting one was most of a streamed DATETIME's cost.
func appendDateTime(buf []byte, year, month, day, hour, minute, second, frac int64, dec int) []byte {
	buf = appendPadded(buf, year, 4)
	buf = appendPadded(append(buf, '-'), month, 2)
	buf = appendPadded(append(buf, '-'), day, 2)
	return appendClock(append(buf, ' '), "", hour, minute, second, frac, dec)
}

// validDateTime reports whether time.Date keeps these fields as they are
// (a year of four digits, a day of the month, a fraction below a second).
func validDateTime(year, month, day, hour, minute, second int, frac int64) bool {
	return year >= 0 && year <= 9999 && month >= 1 && month <= 12 && day >= 1 && day <= daysIn(month, year) &&
		hour >= 0 && hour < 24 && minute >= 0 && minute < 60 && second >= 0 && second < 60 && frac >= 0 && frac < 1e6
}

// daysIn is the number of days of month in year (proleptic Gregorian).
func daysIn(month, year int) int {
	if month == 2 {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 30 + (month+month/8)%2
}

// civil is the date days after 1970-01-01 (days ≥ 0), proleptic
// Gregorian, as time.Unix(…).In(time.UTC) has it (Howard Hinnant's
// days-to-civil algorithm).
func civil(days int64) (year, month, day int64) {
	z := days + 719468
	era := z / 146097
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365]
	mp := (5*doy + 2) / 153                                // [0, 11], from March
	day = doy - (153*mp+2)/5 + 1
	month = mp + 3
	if month > 12 {
		month -= 12
	}
	year = yoe + era*400
	if month <= 2 {
		year++
	}
	return year, month, day
}

// appendZeroTime appends go-mysql's zero TIMESTAMP or DATETIME
// (formatZeroTime; dec ≤ 6).
func appendZeroTime(buf []byte, frac int64, dec int) []byte {
	return appendClock(append(buf, "0000-00-00 "...), "", 0, 0, 0, frac, dec)
}

// appendClock appends "[sign]HH:MM:SS[.ffffff]" as go-mysql's fmt formats
// write it: each field at least two digits, the fraction (frac, at least
// six digits) cut by 6-dec digits at its end, none for dec 0 (dec ≤ 6).
func appendClock(buf []byte, sign string, h, m, s, frac int64, dec int) []byte {
	buf = appendPadded(append(buf, sign...), h, 2)
	buf = appendPadded(append(buf, ':'), m, 2)
	buf = appendPadded(append(buf, ':'), s, 2)
	if dec == 0 {
		return buf
	}
	buf = appendPadded(append(buf, '.'), frac, 6)
	return buf[:len(buf)-(6-dec)]
}

// appendPadded appends v (not negative) with at least width digits, as
// fmt's %0<width>d.
func appendPadded(buf []byte, v int64, width int) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], v, 10)
	for range width - len(d) {
		buf = append(buf, '0')
	}
	return append(buf, d...)
}

// appendTime2 appends go-mysql's text of a TIME2 of dec fractional
// digits (decodeTime2, timeFormat) and returns the bytes it takes.
func appendTime2(buf, data []byte, dec int) ([]byte, int, error) {
	n := 3 + (dec+1)/2
	var tmp, intPart, frac int64
	switch dec {
	case 1, 2:
		if len(data) < 4 {
			return buf, 0, errShortRow
		}
		intPart = int64(gomysql.BFixedLengthInt(data[:3])) - 0x800000
		frac = int64(data[3])
		if intPart < 0 && frac != 0 {
			intPart++
			frac -= 0x100
		}
		tmp = intPart<<24 + frac*10000
	case 3, 4:
		if len(data) < 5 {
			return buf, 0, errShortRow
		}
		intPart = int64(gomysql.BFixedLengthInt(data[:3])) - 0x800000
		frac = int64(binary.BigEndian.Uint16(data[3:5]))
		if intPart < 0 && frac != 0 {
			intPart++
			frac -= 0x10000
		}
		tmp = intPart<<24 + frac*100
	case 5, 6:
		if len(data) < 6 {
			return buf, 0, errShortRow
		}
		tmp = int64(gomysql.BFixedLengthInt(data[:6])) - 0x800000000000
	default:
		if len(data) < 3 {
			return buf, 0, errShortRow
		}
		tmp = (int64(gomysql.BFixedLengthInt(data[:3])) - 0x800000) << 24
	}
	sign := ""
	if tmp < 0 {
		tmp, sign = -tmp, "-"
	}
	hms, secPart := tmp>>24, tmp%(1<<24)
	if secPart == 0 {
		dec = 0 // timeFormat writes no fraction then
	}
	return appendClock(buf, sign, (hms>>12)%(1<<10), (hms>>6)%(1<<6), hms%(1<<6), secPart, dec), n, nil
}

// decimalCompressed is the bytes of a DECIMAL's group of fewer than nine
// digits, by its digits.
var decimalCompressed = [9]int{0, 1, 1, 2, 2, 3, 3, 4, 4}

// appendDecimal appends go-mysql's text of a DECIMAL(precision,
// decimals) (decodeDecimal without UseDecimal) and returns the bytes it
// takes.
func appendDecimal(buf, data []byte, precision, decimals int) ([]byte, int, error) {
	integral := precision - decimals
	if integral < 0 {
		return buf, 0, fmt.Errorf("decimal(%d,%d)", precision, decimals)
	}
	uncompIntegral, uncompFractional := integral/9, decimals/9
	compIntegral, compFractional := integral-uncompIntegral*9, decimals-uncompFractional*9
	size := uncompIntegral*4 + decimalCompressed[compIntegral] + uncompFractional*4 + decimalCompressed[compFractional]
	if size == 0 {
		return buf, 0, fmt.Errorf("decimal(%d,%d)", precision, decimals)
	}
	if size > len(data) {
		return buf, 0, errShortRow
	}
	data = data[:size]
	var mask uint32
	if data[0]&0x80 == 0 {
		mask = math.MaxUint32
		buf = append(buf, '-')
	}
	// The sign bit is flipped in the first byte.
	at := func(i int) uint32 {
		if i == 0 {
			return uint32(data[0]^0x80) ^ mask&0xff
		}
		return uint32(data[i]) ^ mask&0xff
	}
	group := func(pos, size int) uint32 {
		var v uint32
		for i := range size {
			v = v<<8 | at(pos+i)
		}
		return v
	}
	var digits [10]byte
	pos, zeroLeading := decimalCompressed[compIntegral], true
	if v := group(0, pos); v != 0 {
		zeroLeading = false
		buf = strconv.AppendUint(buf, uint64(v), 10)
	}
	for range uncompIntegral {
		v := group(pos, 4)
		pos += 4
		if zeroLeading {
			if v != 0 {
				zeroLeading = false
				buf = strconv.AppendUint(buf, uint64(v), 10)
			}
			continue
		}
		d := strconv.AppendUint(digits[:0], uint64(v), 10)
		if len(d) > 9 {
			return buf, 0, fmt.Errorf("decimal group %d", v)
		}
		buf = append(append(buf, "000000000"[len(d):]...), d...)
	}
	if zeroLeading {
		buf = append(buf, '0')
	}
	if pos < len(data) {
		buf = append(buf, '.')
		for range uncompFractional {
			v := group(pos, 4)
			pos += 4
			d := strconv.AppendUint(digits[:0], uint64(v), 10)
			if len(d) > 9 {
				return buf, 0, fmt.Errorf("decimal group %d", v)
			}
			buf = append(append(buf, "000000000"[len(d):]...), d...)
		}
		if size := decimalCompressed[compFractional]; size > 0 {
			d := strconv.AppendUint(digits[:0], uint64(group(pos, size)), 10)
			for range compFractional - len(d) {
				buf = append(buf, '0')
			}
			buf = append(buf, d...)
			pos += size
		}
	}
	return buf, pos, nil
}
