package delivery_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestExactlyOnceBackfillCrashes SIGKILLs an exactly-once pipeline right
// after a Kafka transaction committed, again and again during a backfill
// whose chunks are as large as transactions.max_records (one worker
// reading 1000-row chunks, max_records 1000; the defaults are 5,000 and
// 5,000 with snapshot_parallelism 1). No stream writes happen, so a
// read_committed consumer must read exactly one r per row: a transaction
// that ends inside a chunk commits rows that its position does not cover,
// and a crash then publishes them again.
func TestExactlyOnceBackfillCrashes(t *testing.T) {
	exactlyOnceBackfillCrashes(t, "eosbf", 1)
}

// TestExactlyOnceSplitBackfillCrashes: the same with two workers, which
// read the one table as two key ranges at once (500-row chunks each):
// each range resumes after its own last key.
func TestExactlyOnceSplitBackfillCrashes(t *testing.T) {
	exactlyOnceBackfillCrashes(t, "eossplit", 2)
}

func exactlyOnceBackfillCrashes(t *testing.T, prefix string, parallelism int) {
	itest.ForEachBackend(t, prefix, func(t *testing.T, b itest.Backend) {
		e := b.Env()
		const rows = 6000
		cfg, chunks, ckpt := eosBackfillSetup(t, b, rows, parallelism)

		kills := 0
		killedOut := "" // the killed runs' output
		for _, point := range []string{"after-txn-commit:2", "after-txn-commit:2", "after-txn-commit:3"} {
			p := e.StartWith(append(chunks, "TRIBUTARY_TEST_CRASH="+point), "run", "--config", cfg)
			// A run may finish the backfill in fewer commits than its crash
			// point, or resume from an offsets record past it (the store
			// lags the offsets topic under exactly_once): with the
			// backfill done and no change to commit it never reaches the
			// point, and the test kills it instead, as a crash there.
			done := false
			for began := time.Now(); !done; {
				select {
				case <-p.Done:
					done = true
				case <-time.After(time.Second):
				}
				if !done && strings.Contains(p.Out.String(), `"backfill: table done"`) && strings.Contains(p.Out.String(), `.big","rows":6000`) {
					time.Sleep(2 * time.Second) // its last commit, if one is coming
					p.Kill()
					done = true
				}
				if !done && time.Since(began) > 90*time.Second {
					t.Fatalf("crash point %s not reached within 90 s; output:\n%s", point, p.Out)
				}
			}
			if !p.KilledBy(syscall.SIGKILL) {
				t.Fatalf("ended with %v, not by its own SIGKILL at %s; output:\n%s", p.Err, point, p.Out)
			}
			kills++
			killedOut += p.Out.String()
			if _, finished := readBackfillProgress(ckpt); finished {
				break
			}
		}
		p := e.StartWith(chunks, "run", "--config", cfg)
		// The store is written after each commit: a run that resumes from an
		// offsets record already past the backfill commits nothing until a
		// change comes, so the sentinel comes first (its commit writes the
		// store), then the store must say the backfill finished.
		itest.AwaitBackendSentinelCommitted(t, b, p, 1)
		next := 2
		itest.WaitOrDump(t, p, 90*time.Second, "the backfill to finish", func() bool {
			if _, finished := readBackfillProgress(ckpt); finished {
				return true
			}
			itest.AwaitBackendSentinelCommitted(t, b, p, next) // another commit, so the store catches up
			next++
			return false
		})
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
		}
		if split := strings.Contains(p.Out.String()+killedOut, "read in key ranges at once"); split != (parallelism > 1) {
			t.Errorf("snapshot_parallelism %d: the table read in key ranges: %v", parallelism, split)
		}

		reads := map[int]int{}
		for _, m := range itest.ReadCommitted(t, b.Topic("big")) {
			if m.Payload()["op"] == "r" {
				reads[int(m.Key["payload"].(map[string]any)["k"].(float64))]++
			}
		}
		missing, twice := 0, 0
		for k := 1; k <= rows; k++ {
			switch n := reads[k]; {
			case n == 0:
				missing++
			case n > 1:
				twice += n - 1
			}
		}
		t.Logf("%s: %d SIGKILLs during the backfill; read_committed: %d rows read, %d missing, %d extra reads", b.Kind(), kills, len(reads), missing, twice)
		if missing > 0 || twice > 0 {
			t.Fatalf("%d of %d rows missing and %d read more than once by a read_committed consumer, want 0 and 0", missing, rows, twice)
		}
	})
}

// eosBackfillSetup makes table big (rows rows) and the sentinel table on
// b, and an exactly-once pipeline config whose backfill reads with
// parallelism workers in chunks as large as its transactions (one worker)
// or half that: max_records 1000, and chunks, the environment that sets
// 1000-row chunks. ckpt is the path of its file checkpoint.
func eosBackfillSetup(t *testing.T, b itest.Backend, rows, parallelism int) (cfg string, chunks []string, ckpt string) {
	t.Helper()
	e := b.Env()
	itest.CreateTables(t, b, "big", "sentinel")
	itest.MustExecOn(t, b, b.BulkInsert("big", 0, 0, rows))
	cfg = b.Config(nil, "")
	itest.EditConfig(t, cfg, "source:\n", fmt.Sprintf("source:\n  snapshot_parallelism: %d\n", parallelism))
	itest.AppendConfig(t, cfg, itest.ExactlyOnceLines+"transactions:\n  max_records: 1000\n")
	return cfg, []string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=1000"}, filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")
}
