package scenario_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestSnapshotKeyMovesBothWays, on every source: while the snapshot reads
// the table in small chunks, a writer moves rows' primary keys behind
// every chunk (negative keys, already read), far ahead of them (keys not
// read yet), and back from behind into the middle, besides inserts,
// updates and deletes. Each key's history must end at the database's row
// and its seq never go back: the delete of the old key and the create of
// the new one are both seen by the chunk windows, so no chunk re-emits a
// stale row of either key.
func TestSnapshotKeyMovesBothWays(t *testing.T) {
	itest.ForEachBackend(t, "snapmove", func(t *testing.T, b itest.Backend) {
		const rows = 6000
		w := newItemsWriting(t, b, rows)
		p := w.e.StartWith([]string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=100"}, "run", "--config", w.cfg)

		var behind []int64 // keys moved behind every chunk
		// A move into the middle may hit a key in use: a duplicate key,
		// skipped.
		w.write(t, 0, true, func(n int64) string {
			k := rand.Int64N(rows) + 1
			switch rand.IntN(8) {
			case 0:
				return fmt.Sprintf(`DELETE FROM items WHERE k = %d`, k)
			case 1, 2:
				behind = append(behind, -n)
				return fmt.Sprintf(`UPDATE items SET k = %d, seq = %d, v = 'back' WHERE k = %d`, -n, n, k)
			case 3:
				return fmt.Sprintf(`UPDATE items SET k = %d, seq = %d, v = 'ahead' WHERE k = %d`, n, n, k)
			case 4:
				if len(behind) == 0 {
					return ""
				}
				i := rand.IntN(len(behind))
				from := behind[i]
				behind = append(behind[:i], behind[i+1:]...)
				// Into the middle of the table, a key freed by a delete
				// or a move (else a duplicate key, skipped): one a chunk
				// may be reading now, or will read, or has read.
				return fmt.Sprintf(`UPDATE items SET k = %d, seq = %d, v = 'middle' WHERE k = %d`, rand.Int64N(rows)+1, n, from)
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
		t.Logf("%d writes during the snapshot; %d rows in the table at the end", w.writes.Load(), len(want))
	})
}
