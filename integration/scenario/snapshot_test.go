package scenario_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestSnapshotWhileWriting, on every source: the initial snapshot runs in
// small chunks while a writer inserts, updates, deletes and changes
// primary keys as fast as it can. Afterwards the last message of every key
// in Kafka is the database's row (or a delete for a key that is gone), and
// per key the rows' seq (every write sets a new, larger one) never goes
// back: no r row is older than a change published before it, and a
// deleted key is never brought back by an r.
func TestSnapshotWhileWriting(t *testing.T) {
	itest.ForEachBackend(t, "snapwrite", func(t *testing.T, b itest.Backend) {
		const rows = 6000
		w := newItemsWriting(t, b, rows)
		p := w.e.StartWith([]string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=150"}, "run", "--config", w.cfg)

		// Writes until the snapshot is done (the checkpoint shows no table
		// left), at least 3 s.
		next := int64(rows + 1)
		w.write(t, 0, false, func(n int64) string {
			k := rand.Int64N(next) + 1
			switch rand.IntN(10) {
			case 0, 1:
				return fmt.Sprintf(`DELETE FROM items WHERE k = %d`, k)
			case 2, 3:
				next++
				return fmt.Sprintf(`INSERT INTO items (k, seq, v) VALUES (%d, %d, 'new')`, next, n)
			case 4:
				next++
				return fmt.Sprintf(`UPDATE items SET k = %d, seq = %d, v = 'moved' WHERE k = %d`, next, n, k)
			default:
				return fmt.Sprintf(`UPDATE items SET seq = %d, v = 'upd' WHERE k = %d`, n, k)
			}
		})
		began := time.Now()
		itest.WaitOrDump(t, p, 180*time.Second, "the snapshot to finish", func() bool {
			st, ok := itest.ReadSnapshotState(w.ckpt)
			return ok && len(st.Tables) == 0 && time.Since(began) > 3*time.Second
		})
		_, want := w.end(t, p, itest.ReadTopic)

		// 6,000 rows in chunks of 75 per worker: two workers read the
		// table as two key ranges at once.
		if !strings.Contains(p.Out.String(), "read in key ranges at once") {
			t.Errorf("the table was not read in key ranges at once; output:\n%s", p.Out)
		}
		t.Logf("%d writes during the snapshot; %d rows in the table at the end", w.writes.Load(), len(want))
	})
}
