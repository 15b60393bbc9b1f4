package scenario_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestTableSwappedIntoCapturedName, on every source: while the pipeline
// streams, a table of other rows is renamed onto a captured table's name
// (RENAME items TO items_old, items_new TO items; the online schema
// change tools' swap). The rows it held are in no log of the captured
// table: the new table must be snapshotted, so that each of its keys ends
// at its row.
func TestTableSwappedIntoCapturedName(t *testing.T) {
	itest.ForEachBackend(t, "swap", func(t *testing.T, b itest.Backend) {
		itest.CreateTables(t, b, "items", "items_new")
		itest.MustExecOn(t, b, b.BulkInsert("items", 0, 0, 50))
		itest.MustExecOn(t, b, b.BulkInsert("items_new", 1000, 5000, 50))
		e := b.Env()
		p := e.Start("run", "--config", b.Config([]string{"items"}, ""))
		e.WaitBackfilled(t, p, 60*time.Second, "the initial snapshot")
		swap := `ALTER TABLE items RENAME TO items_old; ALTER TABLE items_new RENAME TO items`
		if b.Kind() == "mariadb" {
			swap = `RENAME TABLE items TO items_old, items_new TO items`
		}
		itest.MustExecOn(t, b, swap)
		time.Sleep(3 * time.Second)
		itest.MustExecOn(t, b, fmt.Sprintf(`INSERT INTO items (k, seq, v) VALUES (%d, %d, 'last')`, -1, 9999))
		topic := b.Topic("items")
		itest.WaitOrDump(t, p, 60*time.Second, "the last write", func() bool {
			for _, m := range itest.ReadTopic(t, topic) {
				if k, _ := m.Key["payload"].(map[string]any)["k"].(float64); k == -1 {
					return true
				}
			}
			return false
		})
		time.Sleep(5 * time.Second)
		got := map[int64]bool{}
		for _, m := range itest.ReadTopic(t, topic) {
			got[int64(m.Key["payload"].(map[string]any)["k"].(float64))] = true
		}
		missing := 0
		for k := int64(1001); k <= 1050; k++ {
			if !got[k] {
				missing++
			}
		}
		if missing > 0 {
			t.Errorf("%d of the 50 rows of the table swapped in never published; output:\n%s", missing, itest.Tail(p.Out.String(), 3000))
		}
		p.Stop(t)
	})
}
