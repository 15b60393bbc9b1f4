package delivery_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestReviewExactlyOnceKillsAtPauses: exactly_once with max_interval far
// away (5 s), so that while caught up every commit is one at a source
// pause, while the ledger writer commits small transactions (1-5 changes,
// 0-3 ms apart). The pipeline is SIGKILLed a dozen times, each a random
// 0-400 ms after the read_committed end of the topic moved (the commits at
// pauses running). A read_committed consumer must see every committed
// change exactly once, and no source transaction split across two Kafka
// transactions (a commit marker between two of its records in a
// partition: a commit that took records of an unfinished source
// transaction).
func TestReviewExactlyOnceKillsAtPauses(t *testing.T) {
	itest.ForEachBackend(t, "rveospause", func(t *testing.T, b itest.Backend) {
		e := b.Env()
		itest.CreateTables(t, b, "ledger", "sentinel")
		const rows = 100
		itest.MustExecOn(t, b, b.BulkInsert("ledger", 0, 0, rows))
		cfg := b.Config([]string{"ledger", "sentinel"}, "")
		itest.AppendConfig(t, cfg, itest.ExactlyOnceLines+"transactions:\n  max_interval: 5s\n")
		topic := b.Topic("ledger")

		p := e.Start("run", "--config", cfg)
		itest.AwaitBackendSentinelCommitted(t, b, p, 1)
		w := itest.NewLedgerWriter(rows)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); w.RunOn(ctx, b.Exec, 5*time.Minute) }()
		stopWriter := func() {
			cancel()
			wg.Wait()
			if w.Err != nil {
				t.Fatal(w.Err)
			}
		}
		defer func() { cancel(); wg.Wait() }()

		rng := rand.New(rand.NewPCG(11, uint64(time.Now().UnixNano())))
		kills := 0
		for i := 0; i < 12; i++ {
			before := itest.CommittedEnd(topic)
			p.WaitFor(t, 60*time.Second, "commits at pauses", func() bool { return itest.CommittedEnd(topic) > before })
			time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
			p.Kill()
			kills++
			p = e.Start("run", "--config", cfg)
		}
		time.Sleep(2 * time.Second)
		stopWriter()
		itest.AwaitBackendSentinelCommitted(t, b, p, 2)
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
		}

		msgs := itest.ReadCommitted(t, topic)
		res := itest.VerifyLedgerMessages(t, plain(msgs), w)
		// A source transaction's records in one partition follow each
		// other in its Kafka transaction: a gap in the offsets between
		// two of them is a commit marker (or aborted records) between.
		type last struct {
			tx     string
			offset int64
		}
		prev := map[int32]last{}
		splits, pairs, boundaries := 0, 0, 0
		for _, m := range msgs {
			src, _ := m.Payload()["source"].(map[string]any)
			tx := ""
			switch {
			case src["txId"] != nil:
				tx = fmt.Sprint(src["txId"])
			case src["gtid"] != nil:
				tx = fmt.Sprint(src["gtid"])
			}
			l, ok := prev[m.Partition]
			if ok && m.Offset != l.offset+1 {
				boundaries++
			}
			if ok && tx != "" && tx == l.tx {
				pairs++
			}
			if ok && tx != "" && tx == l.tx && m.Offset != l.offset+1 {
				splits++
				if splits <= 5 {
					t.Errorf("source transaction %s split across Kafka transactions in partition %d: offsets %d then %d", tx, m.Partition, l.offset, m.Offset)
				}
			}
			prev[m.Partition] = last{tx, m.Offset}
		}
		t.Logf("%s: exactly_once, %d SIGKILLs at commits at pauses: %d committed changes, %d rolled back; read_committed: %s; %d Kafka transaction boundaries, %d pairs of records of one source transaction side by side, %d split across two",
			b.Kind(), kills, len(w.Committed()), len(w.RolledBack), res, boundaries, pairs, splits)
		if pairs == 0 || boundaries == 0 {
			t.Errorf("the split check saw %d boundaries and %d pairs: it checked nothing", boundaries, pairs)
		}
		if splits > 0 {
			t.Errorf("%d source transactions split across Kafka transactions", splits)
		}
		if res.Gaps > 0 || res.Dups > 0 {
			t.Fatalf("%d gaps and %d duplicates, want 0 and 0", res.Gaps, res.Dups)
		}
	})
}
