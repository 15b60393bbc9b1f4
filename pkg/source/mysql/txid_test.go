package mysql

import (
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Debezium names a binlog transaction by its GTID; without one, this
// source names none (the change has no transaction block).
func TestTransactionIDs(t *testing.T) {
	s := &change.Source{Strings: [change.SourceSlots]string{slotGTID: "0-1-156938", slotFile: "mariadb-bin.000006"}}
	for _, b := range []*change.SourceBlock{MariaDBSourceBlock, MySQLSourceBlock} {
		if got := b.TxID(s); got != "0-1-156938" {
			t.Errorf("%s: %q", b.Connector, got)
		}
		if b.TxEndID != nil {
			t.Errorf("%s: the END has its own id", b.Connector)
		}
	}
	s.Strings[slotGTID] = ""
	if got := MySQLSourceBlock.TxID(s); got != "" {
		t.Errorf("without a GTID: %q", got)
	}
}
