package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
	forEachBackend(t, "eosbf", func(t *testing.T, b backend) {
		e := b.env()
		const rows = 6000
		createTables(t, b, "big", "sentinel")
		mustExecOn(t, b, b.bulkInsert("big", 0, 0, rows))
		cfg := b.config(nil, "")
		editConfig(t, cfg, "source:\n", "source:\n  snapshot_parallelism: 1\n")
		appendConfig(t, cfg, exactlyOnceLines+"transactions:\n  max_records: 1000\n")
		chunks := []string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=1000"}
		ckpt := filepath.Join(e.dir, "checkpoints", e.name+".checkpoint.json")

		kills := 0
		for _, point := range []string{"after-txn-commit:2", "after-txn-commit:2", "after-txn-commit:3"} {
			p := e.startWith(append(chunks, "TRIBUTARY_TEST_CRASH="+point), "run", "--config", cfg)
			select {
			case <-p.done:
			case <-time.After(90 * time.Second):
				t.Fatalf("crash point %s not reached within 90 s; output:\n%s", point, p.out)
			}
			if !p.killedBy(syscall.SIGKILL) {
				t.Fatalf("ended with %v, not by its own SIGKILL at %s; output:\n%s", p.err, point, p.out)
			}
			kills++
			if _, finished := readBackfillProgress(ckpt); finished {
				break
			}
		}
		p := e.startWith(chunks, "run", "--config", cfg)
		// The store is written after each commit: a run that resumes from an
		// offsets record already past the backfill commits nothing until a
		// change comes, so the sentinel comes first (its commit writes the
		// store), then the store must say the backfill finished.
		awaitBackendSentinelCommitted(t, b, p, 1)
		next := 2
		waitOrDump(t, p, 90*time.Second, "the backfill to finish", func() bool {
			if _, finished := readBackfillProgress(ckpt); finished {
				return true
			}
			awaitBackendSentinelCommitted(t, b, p, next) // another commit, so the store catches up
			next++
			return false
		})
		if code := p.stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
		}

		reads := map[int]int{}
		for _, m := range readCommitted(t, b.topic("big")) {
			if m.payload()["op"] == "r" {
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
		t.Logf("%s: %d SIGKILLs during the backfill; read_committed: %d rows read, %d missing, %d extra reads", b.kind(), kills, len(reads), missing, twice)
		if missing > 0 || twice > 0 {
			t.Fatalf("%d of %d rows missing and %d read more than once by a read_committed consumer, want 0 and 0", missing, rows, twice)
		}
	})
}

// awaitBackendSentinelCommitted is awaitBackendSentinel for a
// transactional topic: it waits until a read_committed consumer sees the
// row.
func awaitBackendSentinelCommitted(t *testing.T, b backend, p *proc, id int) {
	t.Helper()
	mustExecOn(t, b, fmt.Sprintf(`INSERT INTO sentinel (k, seq) VALUES (%d, %d)`, id, id))
	topic := b.topic("sentinel")
	p.waitFor(t, 120*time.Second, fmt.Sprintf("sentinel row %d committed", id), func() bool {
		if topicEnd(topic) == 0 {
			return false
		}
		for _, m := range readCommitted(t, topic) {
			if after, ok := m.payload()["after"].(map[string]any); ok && after["k"] == float64(id) {
				return true
			}
		}
		return false
	})
}

// editConfig replaces the first old in the config at path by new.
func editConfig(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s has no %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}
