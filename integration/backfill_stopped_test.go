package integration

import (
	"strings"
	"testing"
	"time"
)

// TestBackfillRequestedWhileStopped is issue 28's second finding, on every
// source and both checkpoint stores: `tributary backfill --table` while
// the pipeline is stopped, after its initial backfill finished, is served
// by the next run: every row of the table is published again with op r,
// and nothing else is. The request leaves the store only once a
// checkpoint records the snapshot as started: a SIGKILL as soon as it is
// gone still republishes every row after the restart. Before the fix the
// next run logged the request, published nothing and cleared it.
func TestBackfillRequestedWhileStopped(t *testing.T) {
	for _, store := range []string{"file", "dynamodb"} {
		t.Run(store, func(t *testing.T) {
			forEachBackend(t, "bfstopped", func(t *testing.T, b backend) { backfillWhileStopped(t, b, store == "dynamodb") })
		})
	}
}

func backfillWhileStopped(t *testing.T, b backend, dynamo bool) {
	e := b.env()
	const rows, others = 2000, 10
	createTables(t, b, "ledger", "other", "sentinel")
	mustExecOn(t, b, b.bulkInsert("ledger", 0, 0, rows))
	mustExecOn(t, b, b.bulkInsert("other", 0, 0, others))
	cfg := b.config(nil, "")
	if dynamo {
		useMoto(t)
		cfg = withDynamoStore(t, cfg, testTableName("bfstopped"))
	}
	ledger, other := b.topic("ledger"), b.topic("other")

	p := e.start("run", "--config", cfg)
	p.waitFor(t, 60*time.Second, "the initial backfill", func() bool { return topicEnd(ledger) >= rows && topicEnd(other) >= others })
	awaitBackendSentinel(t, b, p, 1) // a position after the backfill's end
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}

	code, out := backfillCLI(t, e, "--config", cfg, "--table", b.tableID("ledger"))
	if code != 0 || !strings.Contains(out, "pipeline is not running") {
		t.Fatalf("backfill while stopped: exit %d\n%s", code, out)
	}
	if r, _ := statusJSON(t, e, cfg); r.BackfillRequested == nil {
		t.Fatal("status shows no waiting request after `tributary backfill`")
	}

	// The next run takes the request; killed the moment the store no
	// longer holds it, whatever the snapshot's progress (small chunks
	// keep it going a while).
	p = e.startWith([]string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=2"}, "run", "--config", cfg)
	p.waitFor(t, 60*time.Second, "the request to leave the store", func() bool {
		r, _ := statusJSON(t, e, cfg)
		return r.BackfillRequested == nil
	})
	p.kill()
	t.Logf("killed when the request left the store, with %d of %d ledger rows republished", topicEnd(ledger)-rows, rows)

	p = e.start("run", "--config", cfg)
	reads := map[int64]int{}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if p.exited() {
			t.Fatalf("tributary exited: %v; output:\n%s", p.err, p.out)
		}
		clear(reads)
		if topicEnd(ledger) >= 2*rows {
			for _, m := range readTopic(t, ledger) {
				if m.payload()["op"] == "r" {
					reads[keyOf(m)]++
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
				once, rows, topicEnd(ledger), rows, outTail(p.out.String()))
		}
		time.Sleep(500 * time.Millisecond)
	}
	awaitBackendSentinel(t, b, p, 2)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	if n := topicEnd(other); n != others {
		t.Errorf("other holds %d messages, want its %d backfilled rows only: only ledger was asked for", n, others)
	}
	if r, _ := statusJSON(t, e, cfg); r.BackfillRequested != nil {
		t.Errorf("the request is still in the store after it was served: %+v", *r.BackfillRequested)
	}
}
