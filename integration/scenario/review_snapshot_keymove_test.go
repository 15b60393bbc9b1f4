package scenario_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
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
		itest.CreateTables(t, b, "items")
		itest.MustExecOn(t, b, b.BulkInsert("items", 0, 0, rows))
		e := b.Env()
		p := e.StartWith([]string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=100"}, "run", "--config", b.Config(nil, ""))

		var seq atomic.Int64
		seq.Store(1_000_000)
		var stop atomic.Bool
		var wg sync.WaitGroup
		var writes atomic.Int64
		wg.Add(1)
		go func() {
			defer wg.Done()
			var behind []int64 // keys moved behind every chunk
			for !stop.Load() {
				k := rand.Int64N(rows) + 1
				n := seq.Add(1)
				var sql string
				switch rand.IntN(8) {
				case 0:
					sql = fmt.Sprintf(`DELETE FROM items WHERE k = %d`, k)
				case 1, 2:
					sql = fmt.Sprintf(`UPDATE items SET k = %d, seq = %d, v = 'back' WHERE k = %d`, -n, n, k)
					behind = append(behind, -n)
				case 3:
					sql = fmt.Sprintf(`UPDATE items SET k = %d, seq = %d, v = 'ahead' WHERE k = %d`, n, n, k)
				case 4:
					if len(behind) == 0 {
						continue
					}
					i := rand.IntN(len(behind))
					from := behind[i]
					behind = append(behind[:i], behind[i+1:]...)
					// Into the middle of the table, a key freed by a delete
					// or a move (else a duplicate key, skipped): one a chunk
					// may be reading now, or will read, or has read.
					sql = fmt.Sprintf(`UPDATE items SET k = %d, seq = %d, v = 'middle' WHERE k = %d`, rand.Int64N(rows)+1, n, from)
				default:
					sql = fmt.Sprintf(`UPDATE items SET seq = %d, v = 'upd' WHERE k = %d`, n, k)
				}
				if err := b.Exec(sql); err != nil && !strings.Contains(strings.ToLower(err.Error()), "duplicate") {
					t.Errorf("%s: %v", sql, err)
					return
				}
				writes.Add(1)
			}
		}()
		ckpt := filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")
		began := time.Now()
		itest.WaitOrDump(t, p, 180*time.Second, "the snapshot to finish", func() bool {
			st, ok := itest.ReadSnapshotState(ckpt)
			return ok && len(st.Tables) == 0 && time.Since(began) > 3*time.Second
		})
		stop.Store(true)
		wg.Wait()
		n := seq.Add(1)
		itest.MustExecOn(t, b, fmt.Sprintf(`INSERT INTO items (k, seq, v) VALUES (%d, %d, 'last')`, -1, n))
		topic := b.Topic("items")
		itest.WaitOrDump(t, p, 60*time.Second, "the last write", func() bool {
			for _, m := range itest.ReadTopic(t, topic) {
				if k, _ := m.Key["payload"].(map[string]any)["k"].(float64); k == -1 {
					return true
				}
			}
			return false
		})
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
		}
		want, err := b.State("items")
		if err != nil {
			t.Fatal(err)
		}
		itest.CheckKeyHistories(t, itest.ReadTopic(t, topic), want)
		t.Logf("%d writes during the snapshot; %d rows in the table at the end", writes.Load(), len(want))
	})
}
