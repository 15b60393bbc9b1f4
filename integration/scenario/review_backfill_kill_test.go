package scenario_test

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestBackfillWhileStreamingKilledExactlyOnce, on every source, delivery
// exactly_once: after the initial snapshot, `tributary backfill --table`
// is requested while the pipeline streams a writer's changes, and the
// publisher is SIGKILLed at random moments of that snapshot and restarted.
// Read committed: every change appears once, a row the writer never
// touched has at least two reads (the initial snapshot's and the one
// asked for; a kill before the request is cleared from the store
// re-delivers it, which reads the table again), and each key's history
// ends at the database's row.
func TestBackfillWhileStreamingKilledExactlyOnce(t *testing.T) {
	itest.ForEachBackend(t, "bfkill", func(t *testing.T, b itest.Backend) {
		if bin := os.Getenv("REVIEW_BIN"); bin != "" {
			cur := itest.Binary
			itest.Binary = bin
			defer func() { itest.Binary = cur }()
		}
		const rows = 8000
		w := newItemsWriting(t, b, rows)
		e, cfg := w.e, w.cfg
		itest.AppendConfig(t, cfg, itest.ExactlyOnceLines)
		env := []string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=200"}
		p := e.StartWith(env, "run", "--config", cfg)
		e.WaitBackfilled(t, p, 120*time.Second, "the initial snapshot")

		w.write(t, time.Millisecond, false, func(n int64) string {
			// Only the upper half is written: the lower half's rows are
			// never touched.
			k := rows/2 + rand.Int64N(rows/2) + 1
			return deleteMoveOrUpdate(k, n)
		})
		time.Sleep(time.Second)
		if code, out := itest.BackfillCLI(t, e, "--config", cfg, "--table", b.TableID("items")); code != 0 {
			t.Fatalf("tributary backfill: exit %d\n%s", code, out)
		}
		kills := 0
		for i := 0; i < 4; i++ {
			time.Sleep(time.Duration(300+rand.IntN(1500)) * time.Millisecond)
			p.Kill()
			kills++
			st, _ := itest.ReadSnapshotState(w.ckpt)
			t.Logf("kill %d: snapshot state %+v", kills, st)
			p = e.StartWith(env, "run", "--config", cfg)
		}
		itest.WaitOrDump(t, p, 180*time.Second, "the requested snapshot", func() bool {
			st, ok := itest.ReadSnapshotState(w.ckpt)
			r, _ := itest.StatusJSON(t, e, cfg)
			return ok && len(st.Tables) == 0 && r.BackfillRequested == nil
		})
		msgs, _ := w.end(t, p, readCommitted)
		type ev struct {
			k   int64
			op  string
			seq int64
		}
		seen := map[ev]int{}
		for _, m := range msgs {
			if m.Value == nil {
				continue
			}
			pl := m.Payload()
			op, _ := pl["op"].(string)
			row, _ := pl["after"].(map[string]any)
			if op == "d" {
				row, _ = pl["before"].(map[string]any)
			}
			s, _ := row["seq"].(float64)
			seen[ev{int64(m.Key["payload"].(map[string]any)["k"].(float64)), op, int64(s)}]++
		}
		bad := 0
		for x, c := range seen {
			if x.op != "r" && c != 1 && bad < 10 {
				bad++
				t.Errorf("key %d: %s seq %d published %d times", x.k, x.op, x.seq, c)
			}
		}
		reread := 0 // whole extra reads: a request re-delivered after a kill before it was cleared
		for k := int64(1); k <= rows/2; k++ {
			c := seen[ev{k, "r", k}]
			if c < 2 && bad < 20 {
				bad++
				t.Errorf("untouched key %d: %d reads, want 2 (initial and requested)", k, c)
			}
			reread = max(reread, c-2)
		}
		t.Logf("%d kills during the requested snapshot; %d distinct messages; the request re-read up to %d more times", kills, len(seen), reread)
	})
}
