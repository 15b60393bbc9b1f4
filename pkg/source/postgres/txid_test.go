package postgres

import (
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Debezium names a PostgreSQL transaction "<txId>:<lsn>": in a change,
// the change's own LSN; in the END, where the commit was read (the
// cursor's last commit, or its LSN when that is the same).
func TestTransactionIDs(t *testing.T) {
	first := &change.Source{Ints: [change.SourceSlots]int64{slotTxID: 364507, slotLSN: 11392567408}}
	if got := SourceBlock.TxID(first); got != "364507:11392567408" {
		t.Errorf("change: %q", got)
	}
	for _, c := range []struct {
		pos  position
		want string
	}{
		{position{Slot: "s", LSN: formatLSN(11392568024)}, "364507:11392568024"},
		{position{Slot: "s", LSN: formatLSN(11392568100), Commit: formatLSN(11392568024)}, "364507:11392568024"},
	} {
		if got := SourceBlock.TxEndID(first, c.pos.encode()); got != c.want {
			t.Errorf("END at %+v: %q, want %q", c.pos, got, c.want)
		}
	}
}
