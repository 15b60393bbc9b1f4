package scenario_test

import (
	"math/rand/v2"
	"os"
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
				w := newItemsWriting(t, b, rows)
				env := []string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=100"}
				w.write(t, 2*time.Millisecond, false, func(n int64) string {
					k := rand.Int64N(rows) + 1
					return deleteMoveOrUpdate(k, n)
				})
				itest.Binary = first
				p := w.e.StartWith(env, "run", "--config", w.cfg)
				itest.WaitOrDump(t, p, 180*time.Second, "the snapshot half way", func() bool {
					st, ok := itest.ReadSnapshotState(w.ckpt)
					return ok && len(st.Tables) == 1 && st.Tables[0].Rows > rows/3
				})
				p.Kill()
				raw, _ := os.ReadFile(w.ckpt)
				t.Logf("checkpoint of the first binary: %.600s", raw)
				itest.Binary = second
				p = w.e.StartWith(env, "run", "--config", w.cfg)
				time.Sleep(2 * time.Second)
				itest.WaitOrDump(t, p, 240*time.Second, "the snapshot to finish", func() bool {
					st, ok := itest.ReadSnapshotState(w.ckpt)
					return ok && len(st.Tables) == 0 && len(st.Done) > 0
				})
				w.end(t, p, itest.ReadTopic)
			})
		})
	}
}
