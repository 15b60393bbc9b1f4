package mysql

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
)

// FuzzLoggedColumns: whatever column types and metadata a table map event
// carries (they come from the server), reading them never panics, and a
// shape never matches the catalog's unless it has as many columns.
func FuzzLoggedColumns(f *testing.F) {
	f.Add([]byte{3, 15, 254, 252, 246}, []byte{0, 0, 40, 0, 0xf7, 1, 2, 0, 10, 2}, true)
	f.Fuzz(func(t *testing.T, types, meta []byte, full bool) {
		n := len(types)
		tm := &replication.TableMapEvent{ColumnCount: uint64(n), ColumnType: types, ColumnMeta: make([]uint16, n), NullBitmap: make([]byte, (n+7)/8)}
		for i := range n {
			if 2*i+1 < len(meta) {
				tm.ColumnMeta[i] = uint16(meta[2*i])<<8 | uint16(meta[2*i+1])
			}
			if full {
				tm.ColumnName = append(tm.ColumnName, []byte{'c', byte('a' + i%26)})
			}
		}
		if full {
			tm.DefaultCharset = []uint64{8}
			tm.SignednessBitmap = make([]byte, (n+7)/8)
		}
		cols := loggedColumns(tm, flavorMySQL, map[uint64]string{8: "latin1", 33: "utf8mb3"})
		if len(cols) != n {
			t.Fatalf("%d columns from %d types", len(cols), n)
		}
		if sameColumns(cols, cols[:n/2], full) && n/2 != n {
			t.Fatal("shapes of different widths compared equal")
		}
	})
}
