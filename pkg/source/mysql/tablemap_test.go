package mysql

import (
	"encoding/binary"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
)

// A statement's table maps all come before its rows (a multi-table
// UPDATE, a trigger's table). The stream forgets its table maps once it
// holds maxMaps, but only at a statement's end: forgotten between the
// maps and the rows, the first table's rows had no table map left and
// stopped the pipeline (a review found it with 3,000 five-table UPDATEs
// and FLUSH TABLES between them).
func TestTableMapsForgottenAtStatementEnd(t *testing.T) {
	bs := newBenchStream(t)
	bs.st.maps = map[uint64]*mapShape{}
	for i := range maxMaps - 1 {
		bs.st.maps[uint64(1_000_000+i)] = &mapShape{}
	}
	other := benchBytes(t, bs.tableMap)
	other[replication.EventHeaderSize]++ // another table id, the same table: the statement's second map
	for _, raw := range [][]byte{benchBytes(t, bs.tableMap), other, benchBytes(t, benchWriteRows)} {
		if err := bs.handle(raw); err != nil {
			t.Fatalf("a statement's rows after its table maps filled the stream's maps: %v", err)
		}
	}
	if bs.emitted != 1 {
		t.Fatalf("%d events, want the statement's 1", bs.emitted)
	}
	if len(bs.st.maps) != 0 {
		t.Fatalf("%d table maps kept after the statement that passed %d", len(bs.st.maps), maxMaps)
	}
	bs.statement(t, benchWriteRows)() // the next statement: its map parsed in full again
	if bs.emitted != 2 || bs.st.maps[binary.LittleEndian.Uint64(append(benchBytes(t, bs.tableMap)[replication.EventHeaderSize:][:6], 0, 0))] == nil {
		t.Fatalf("%d events and maps %v after the next statement", bs.emitted, bs.st.maps)
	}
}
