package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestBackfillRequestedWhileStopped, on every source and both checkpoint stores: `tributary backfill --table` while
// the pipeline is stopped, after its initial backfill finished, is served
// by the next run: every row of the table is published again with op r,
// and nothing else is. The request leaves the store only once a
// checkpoint records the snapshot as started: a SIGKILL as soon as it is
// gone still republishes every row after the restart. Before the fix the
// next run logged the request, published nothing and cleared it.
func TestBackfillRequestedWhileStopped(t *testing.T) {
	for _, store := range []string{"file", "dynamodb"} {
		t.Run(store, func(t *testing.T) {
			itest.ForEachBackend(t, "bfstopped", func(t *testing.T, b itest.Backend) { backfillWhileStopped(t, b, store == "dynamodb") })
		})
	}
}

func backfillWhileStopped(t *testing.T, b itest.Backend, dynamo bool) {
	e := b.Env()
	const rows, others = 2000, 10
	itest.CreateTables(t, b, "ledger", "other", "sentinel")
	itest.MustExecOn(t, b, b.BulkInsert("ledger", 0, 0, rows))
	itest.MustExecOn(t, b, b.BulkInsert("other", 0, 0, others))
	cfg := b.Config(nil, "")
	if dynamo {
		itest.UseMoto(t)
		cfg = itest.WithDynamoStore(t, cfg, itest.TestTableName("bfstopped"))
	}
	ledger, other := b.Topic("ledger"), b.Topic("other")

	p := e.Start("run", "--config", cfg)
	p.WaitFor(t, 60*time.Second, "the initial backfill", func() bool { return itest.TopicEnd(ledger) >= rows && itest.TopicEnd(other) >= others })
	itest.AwaitBackendSentinel(t, b, p, 1) // a position after the backfill's end
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}

	code, out := itest.BackfillCLI(t, e, "--config", cfg, "--table", b.TableID("ledger"))
	if code != 0 || !strings.Contains(out, "pipeline is not running") {
		t.Fatalf("backfill while stopped: exit %d\n%s", code, out)
	}
	if r, _ := itest.StatusJSON(t, e, cfg); r.BackfillRequested == nil {
		t.Fatal("status shows no waiting request after `tributary backfill`")
	}

	// The next run takes the request; killed the moment the store no
	// longer holds it, whatever the snapshot's progress (small chunks
	// keep it going a while).
	p = e.StartWith([]string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=2"}, "run", "--config", cfg)
	p.WaitFor(t, 60*time.Second, "the request to leave the store", func() bool {
		r, _ := itest.StatusJSON(t, e, cfg)
		return r.BackfillRequested == nil
	})
	p.Kill()
	t.Logf("killed when the request left the store, with %d of %d ledger rows republished", itest.TopicEnd(ledger)-rows, rows)

	p = e.Start("run", "--config", cfg)
	reads := map[int64]int{}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if p.Exited() {
			t.Fatalf("tributary exited: %v; output:\n%s", p.Err, p.Out)
		}
		clear(reads)
		if itest.TopicEnd(ledger) >= 2*rows {
			for _, m := range itest.ReadTopic(t, ledger) {
				if m.Payload()["op"] == "r" {
					reads[itest.KeyOf(m)]++
				}
			}
		}
		once := 0
		for k := int64(1); k <= rows; k++ {
			if reads[k] < 2 {
				once++
			}
		}
		if once == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d ledger rows were not republished by the run after the request (topic holds %d messages, %d before the request); output:\n%s",
				once, rows, itest.TopicEnd(ledger), rows, itest.OutTail(p.Out.String()))
		}
		time.Sleep(500 * time.Millisecond)
	}
	itest.AwaitBackendSentinel(t, b, p, 2)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	if n := itest.TopicEnd(other); n != others {
		t.Errorf("other holds %d messages, want its %d backfilled rows only: only ledger was asked for", n, others)
	}
	if r, _ := itest.StatusJSON(t, e, cfg); r.BackfillRequested != nil {
		t.Errorf("the request is still in the store after it was served: %+v", *r.BackfillRequested)
	}
}
