package scenario_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestReviewCrossRelease, on every source, needs REVIEW_OLD_BIN (a binary
// of an earlier release): a snapshot while streaming is SIGKILLed half
// way under one binary and finished by the other, old then new and new
// then old, while a writer changes rows and keys. Each key's history must
// end at the database's row.
func TestReviewCrossRelease(t *testing.T) {
	old := os.Getenv("REVIEW_OLD_BIN")
	if old == "" {
		t.Skip("REVIEW_OLD_BIN not set")
	}
	for _, order := range []string{"oldnew", "newold"} {
		t.Run(order, func(t *testing.T) {
			itest.ForEachBackend(t, "xrel"+order[:1], func(t *testing.T, b itest.Backend) {
				cur := itest.Binary
				first, second := old, cur
				if order == "newold" {
					first, second = cur, old
				}
				defer func() { itest.Binary = cur }()
				const rows = 20000
				itest.CreateTables(t, b, "items")
				itest.MustExecOn(t, b, b.BulkInsert("items", 0, 0, rows))
				e := b.Env()
				cfg := b.Config(nil, "")
				env := []string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=100"}
				var seq atomic.Int64
				seq.Store(1_000_000)
				var stop atomic.Bool
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					for !stop.Load() {
						k := rand.Int64N(rows) + 1
						n := seq.Add(1)
						var sql string
						switch rand.IntN(6) {
						case 0:
							sql = fmt.Sprintf(`DELETE FROM items WHERE k = %d`, k)
						case 1:
							sql = fmt.Sprintf(`UPDATE items SET k = %d, seq = %d, v = 'moved' WHERE k = %d`, n, n, k)
						default:
							sql = fmt.Sprintf(`UPDATE items SET seq = %d, v = 'upd' WHERE k = %d`, n, k)
						}
						if err := b.Exec(sql); err != nil {
							t.Errorf("%s: %v", sql, err)
							return
						}
						time.Sleep(2 * time.Millisecond)
					}
				}()
				ckpt := filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")
				itest.Binary = first
				p := e.StartWith(env, "run", "--config", cfg)
				itest.WaitOrDump(t, p, 180*time.Second, "the snapshot half way", func() bool {
					st, ok := itest.ReadSnapshotState(ckpt)
					return ok && len(st.Tables) == 1 && st.Tables[0].Rows > rows/3
				})
				p.Kill()
				raw, _ := os.ReadFile(ckpt)
				t.Logf("checkpoint of the first binary: %.600s", raw)
				itest.Binary = second
				p = e.StartWith(env, "run", "--config", cfg)
				time.Sleep(2 * time.Second)
				itest.WaitOrDump(t, p, 240*time.Second, "the snapshot to finish", func() bool {
					st, ok := itest.ReadSnapshotState(ckpt)
					return ok && len(st.Tables) == 0 && len(st.Done) > 0
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
			})
		})
	}
}
