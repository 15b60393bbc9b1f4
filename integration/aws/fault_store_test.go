package aws_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/tributary-cdc/tributary/integration/awstest"
)

// TestCheckpointStoreOutage cuts the pipeline off from its DynamoDB
// checkpoint store (the emulator) for 10 s, less than the 20 s lease,
// while a writer commits changes: the publisher rides it out (the old
// code stopped at the first failed checkpoint save) and, once the store
// is back, checkpoints again; the topic holds every committed change. In
// each DynamoDB engine.
func TestCheckpointStoreOutage(t *testing.T) { awstest.ForEachDynamoDB(t, checkpointStoreOutage) }

func checkpointStoreOutage(t *testing.T, eng awstest.Engine) {
	e := itest.NewEnv(t, "storefault")
	proxy := itest.NewCutProxy(t, eng.Addr)
	t.Setenv("AWS_ENDPOINT_URL", "http://"+proxy.Addr)
	t.Setenv("TRIBUTARY_LEASE_DURATION", "20s")
	e.Exec(`CREATE TABLE ledger (k int PRIMARY KEY, seq bigint NOT NULL, pad text)`)
	e.Exec(`ALTER TABLE ledger REPLICA IDENTITY FULL`)
	e.Exec(`INSERT INTO ledger SELECT g, g, 'x' FROM generate_series(1, 50) g`)
	cfg := e.WriteDynamoConfig(itest.TestTableName("storefault"), "")
	topic := e.Prefix + ".public.ledger"
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 50 })

	w := itest.NewLedgerWriter(50)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Run(context.Background(), t, e.PGURL(), 16*time.Second) }()
	time.Sleep(3 * time.Second)
	proxy.Cut()
	cutAt := time.Now()
	time.Sleep(10 * time.Second)
	if p.Exited() {
		t.Fatalf("tributary stopped during a 10 s store outage (lease 20 s): %v\n%s", p.Err, p.Out)
	}
	proxy.Mend()
	wg.Wait()
	if w.Err != nil {
		t.Fatal(w.Err)
	}
	itest.AwaitCatchUp(t, topic, int64(50+len(w.Committed())))
	itest.WaitFor(t, 30*time.Second, "a checkpoint after the outage", func() bool {
		return strings.Contains(p.Out.String(), "checkpoint store reachable again") || !strings.Contains(p.Out.String(), "checkpoint save failed")
	})
	if p.Exited() {
		t.Fatalf("tributary stopped after the store outage: %v\n%s", p.Err, p.Out)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	res := itest.VerifyLedger(t, topic, w)
	t.Logf("store in %s, outage of 10 s (from %s): %d committed changes, %s", eng.Name, cutAt.Format("15:04:05"), len(w.Committed()), res)
	if res.Gaps > 0 {
		t.Fatalf("%d gaps", res.Gaps)
	}
}
