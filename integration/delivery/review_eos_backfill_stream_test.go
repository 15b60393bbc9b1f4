package delivery_test

// A review check that held (passes on the reviewed code); it runs only
// with TRIBUTARY_REVIEW_HELD=1 (reviewHeld).
//
// Exactly once over a backfill and a stream (pkg/pipeline/exactlyonce.go:
// backfill chunks never split, commit only over acknowledged records):
// TestReviewEOSBackfillWithStreamCrashes SIGKILLs an exactly-once
// pipeline right after a Kafka transaction committed, several times,
// during a backfill while a writer inserts and updates rows of the table
// being backfilled. A read_committed consumer must read each stream change
// once (no duplicate c, no duplicate u of the same seq), each row read at
// most once, and end with the database's rows.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

func TestReviewEOSBackfillWithStreamCrashes(t *testing.T) {
	itest.ReviewHeld(t)
	itest.ForEachBackend(t, "rveosbf", func(t *testing.T, b itest.Backend) {
		e := b.Env()
		const rows = 20000
		cfg, chunks, ckpt := eosBackfillSetup(t, b, rows, 1)

		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var inserted []int64
		var werr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(1); ctx.Err() == nil; i++ {
				k := 1_000_000 + i
				if err := b.Exec(fmt.Sprintf(`INSERT INTO big (k, seq, v) VALUES (%d, %d, 'stream')`, k, i)); err != nil {
					werr = err
					return
				}
				inserted = append(inserted, k)
				if err := b.Exec(fmt.Sprintf(`UPDATE big SET seq = seq + 1000000 WHERE k = %d`, 1+(i*37)%rows)); err != nil {
					werr = err
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		stopWriter := func() { cancel(); wg.Wait() }
		t.Cleanup(stopWriter)

		kills := 0
		// Crashes right after a commit, and SIGKILLs from outside at a
		// moment of the backfill (after its first progress is stored).
		for _, point := range []string{"after-txn-commit:25", "", "after-txn-commit:40", ""} {
			if point == "" {
				p := e.StartWith(chunks, "run", "--config", cfg)
				start, _ := readBackfillProgress(ckpt)
				itest.WaitFor(t, 90*time.Second, "backfill progress", func() bool {
					prog, finished := readBackfillProgress(ckpt)
					return finished || prog.Rows > start.Rows
				})
				time.Sleep(300 * time.Millisecond)
				p.Kill()
			} else {
				startToCrash(t, e, chunks, cfg, point, 90*time.Second)
			}
			kills++
			prog, finished := readBackfillProgress(ckpt)
			t.Logf("after kill %d: backfill progress %+v finished %v", kills, prog, finished)
		}
		stopWriter()
		if werr != nil {
			t.Fatal(werr)
		}
		p := e.StartWith(chunks, "run", "--config", cfg)
		itest.WaitOrDump(t, p, 120*time.Second, "the backfill to finish", func() bool {
			_, finished := readBackfillProgress(ckpt)
			return finished
		})
		itest.AwaitBackendSentinelCommitted(t, b, p, 1)
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
		}

		reads, creates, updates := map[int64]int{}, map[int64]int{}, map[string]int{}
		final := map[int64]int64{}
		for _, m := range itest.ReadCommitted(t, b.Topic("big")) {
			k := int64(m.Key["payload"].(map[string]any)["k"].(float64))
			after, _ := m.Payload()["after"].(map[string]any)
			seq := int64(after["seq"].(float64))
			final[k] = seq
			switch m.Payload()["op"] {
			case "r":
				reads[k]++
			case "c":
				creates[k]++
			case "u":
				updates[fmt.Sprintf("%d@%d", k, seq)]++
			}
		}
		extraR, extraC, extraU, missingC := 0, 0, 0, 0
		for _, n := range reads {
			extraR += max(n-1, 0)
		}
		for _, n := range creates {
			extraC += max(n-1, 0)
		}
		for _, n := range updates {
			extraU += max(n-1, 0)
		}
		for _, k := range inserted {
			if creates[k] == 0 && reads[k] == 0 {
				missingC++
			}
		}
		state, err := b.State("big")
		if err != nil {
			t.Fatal(err)
		}
		wrong := 0
		for k, r := range state {
			if final[k] != r.Seq {
				wrong++
			}
		}
		t.Logf("%s: %d SIGKILLs, %d stream inserts; read_committed: %d extra r, %d extra c, %d extra u, %d inserts missing, %d rows whose last message is not the database's",
			b.Kind(), kills, len(inserted), extraR, extraC, extraU, missingC, wrong)
		if extraR+extraC+extraU+missingC+wrong > 0 {
			t.Fatalf("exactly_once with a backfill and stream writes under SIGKILLs: %d extra r, %d extra c, %d extra u, %d inserts missing, %d wrong final rows; want all 0",
				extraR, extraC, extraU, missingC, wrong)
		}
	})
}
