package mysql

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
)

// FuzzRowsHeader holds the stream's reading of a MariaDB rows event's
// header in place (rowsHeader) to go-mysql's (RowsEvent.DecodeHeader, the
// parser of the stream with the same table map): wherever go-mysql reads
// a header, rowsHeader reads the same table, flags, column count and
// bitmaps; where rowsHeader takes an event as read, go-mysql reads it
// too. The events are the benchmark's (decode_bench_test.go) and
// mutations of their bodies, under each v1 rows event type.
func FuzzRowsHeader(f *testing.F) {
	for _, h := range []string{benchWriteRows, benchUpdateRows} {
		raw := benchBytes(f, h)
		f.Add(raw[4], raw[replication.EventHeaderSize:])
	}
	f.Add(byte(replication.UPDATE_ROWS_EVENTv1), []byte{0x8e, 3, 0, 0, 0, 0, 1, 0, 0xfc, 0xff})
	f.Add(byte(replication.DELETE_ROWS_EVENTv1), []byte{0x8e, 3, 0, 0, 0, 0, 1, 0, 0xfe, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0})
	types := []replication.EventType{replication.WRITE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv1,
		replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1}
	f.Fuzz(func(t *testing.T, typ byte, body []byte) {
		et := types[int(typ)%len(types)]
		raw := append(bytes.Clone(benchBytes(t, benchWriteRows)[:replication.EventHeaderSize]), body...)
		raw[4] = byte(et)
		binary.LittleEndian.PutUint32(raw[9:], uint32(len(raw)))
		bs := newBenchStream(t)
		if err := bs.handle(benchBytes(t, benchTableMap)); err != nil {
			t.Fatal(err)
		}
		ours, ok, err := bs.st.rowsHeader(raw)
		var theirs *replication.RowsEvent
		perr := catch(func() error {
			ev, err := bs.st.parser.Parse(raw)
			if err == nil {
				theirs = ev.Event.(*replication.RowsEvent)
			}
			return err
		})
		if !ok {
			return // the parser's to parse (a table id without a map)
		}
		if err != nil {
			// go-mysql slices its bitmaps beyond the body, into the
			// checksum after it; rowsHeader calls such an event short.
			body, _ := bs.st.body(raw)
			if perr == nil && 6+2+lenencSize(body[8:])+len(theirs.ColumnBitmap1)+len(theirs.ColumnBitmap2) <= len(body) {
				t.Fatalf("rowsHeader: %v; go-mysql read %+v", err, theirs)
			}
			return
		}
		if perr != nil {
			t.Fatalf("rowsHeader read %+v; go-mysql: %v", ours, perr)
		}
		if ours.TableID != theirs.TableID || ours.Flags != theirs.Flags || ours.ColumnCount != theirs.ColumnCount ||
			!bytes.Equal(ours.ColumnBitmap1, theirs.ColumnBitmap1) || !bytes.Equal(ours.ColumnBitmap2, theirs.ColumnBitmap2) ||
			(ours.ColumnBitmap2 == nil) != (theirs.ColumnBitmap2 == nil) || ours.Table.TableID != theirs.Table.TableID ||
			string(ours.Table.Table) != string(theirs.Table.Table) {
			t.Fatalf("rowsHeader read %+v, go-mysql %+v", ours, theirs)
		}
	})
}
