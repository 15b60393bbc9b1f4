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
		itest.CreateTables(t, b, "items")
		itest.MustExecOn(t, b, b.BulkInsert("items", 0, 0, rows))
		e := b.Env()
		cfg := b.Config(nil, "")
		p := e.StartWith([]string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=150"}, "run", "--config", cfg)

		// Writes until the snapshot is done (the checkpoint shows no table
		// left), at least 3 s.
		var seq atomic.Int64
		seq.Store(1_000_000)
		var stop atomic.Bool
		var wg sync.WaitGroup
		var writes atomic.Int64
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := int64(rows + 1)
			for !stop.Load() {
				k := rand.Int64N(next) + 1
				n := seq.Add(1)
				var sql string
				switch rand.IntN(10) {
				case 0, 1:
					sql = fmt.Sprintf(`DELETE FROM items WHERE k = %d`, k)
				case 2, 3:
					next++
					sql = fmt.Sprintf(`INSERT INTO items (k, seq, v) VALUES (%d, %d, 'new')`, next, n)
				case 4:
					next++
					sql = fmt.Sprintf(`UPDATE items SET k = %d, seq = %d, v = 'moved' WHERE k = %d`, next, n, k)
				default:
					sql = fmt.Sprintf(`UPDATE items SET seq = %d, v = 'upd' WHERE k = %d`, n, k)
				}
				if err := b.Exec(sql); err != nil {
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
		// A last write, to know every earlier one is published.
		n := seq.Add(1)
		itest.MustExecOn(t, b, fmt.Sprintf(`INSERT INTO items (k, seq, v) VALUES (%d, %d, 'last')`, -1, n))
		topic := b.Topic("items")
		itest.WaitOrDump(t, p, 60*time.Second, "the last write", func() bool {
			found := false
			for _, m := range itest.ReadTopic(t, topic) {
				if k, _ := m.Key["payload"].(map[string]any)["k"].(float64); k == -1 {
					found = true
				}
			}
			return found
		})
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
		}

		// 6,000 rows in chunks of 75 per worker: two workers read the
		// table as two key ranges at once.
		if !strings.Contains(p.Out.String(), "read in key ranges at once") {
			t.Errorf("the table was not read in key ranges at once; output:\n%s", p.Out)
		}

		want, err := b.State("items")
		if err != nil {
			t.Fatal(err)
		}
		itest.CheckKeyHistories(t, itest.ReadTopic(t, topic), want)
		t.Logf("%d writes during the snapshot; %d rows in the table at the end", writes.Load(), len(want))
	})
}
