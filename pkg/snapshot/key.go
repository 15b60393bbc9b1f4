package snapshot

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// rowKey is the identity of row's primary key in t, comparable between a
// chunk's row and a streamed change of the same row: both are decoded
// values, so the database's two wire forms (text query results, log
// records) meet here.
func rowKey(t *change.Table, row change.Row) string {
	var b []byte
	for _, k := range t.Key {
		if k >= len(row) {
			b = append(b, 0xff)
			continue
		}
		b = appendValue(b, row[k])
	}
	return string(b)
}

func appendValue(b []byte, v change.Value) []byte {
	b = append(b, byte(v.Kind))
	switch v.Kind {
	case change.Int:
		b = binary.BigEndian.AppendUint64(b, uint64(v.Int))
	case change.Float:
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(v.Float))
	case change.Text, change.Binary:
		b = binary.AppendUvarint(b, uint64(len(v.Bytes)))
		b = append(b, v.Bytes...)
	case change.Array:
		b = binary.AppendUvarint(b, uint64(len(v.Elems)))
		for _, e := range v.Elems {
			b = appendValue(b, e)
		}
	}
	return b
}

// appendIDKey appends a read event's key for its ID: the same row gets
// the same ID in a resumed snapshot. A table without a key has only the
// row's rank n. The key's values are their change.Value.String text,
// joined by commas.
func appendIDKey(b []byte, ev *change.Event, n int64) []byte {
	if ev.Table == nil || len(ev.Table.Key) == 0 {
		return strconv.AppendInt(append(b, '#'), n, 10)
	}
	first := true
	for _, k := range ev.Table.Key {
		if k >= len(ev.After) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = ev.After[k].AppendText(b)
	}
	return b
}
