package delivery_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// The crash tests run the binary with the DynamoDB checkpoint store on the
// AWS emulator (moto, 127.0.0.1:5000) and make it SIGKILL itself at one
// exact point of the delivery path through the test-only hook
// TRIBUTARY_TEST_CRASH (pkg/pipeline/crash.go). Leases are shortened with
// TRIBUTARY_LEASE_DURATION so that a restart after a crash takes over
// within about a second.

// TestCrashPoints SIGKILLs the pipeline at each point of the delivery
// path, three times per point, while a writer commits changes, then checks
// the topic with the no-gap oracle; on every source.
func TestCrashPoints(t *testing.T) {
	for _, point := range []string{"after-produce", "after-ack", "after-checkpoint"} {
		t.Run(point, func(t *testing.T) {
			itest.ForEachBackend(t, "crash", func(t *testing.T, b itest.Backend) { crashAt(t, b, point) })
		})
	}
}

func crashAt(t *testing.T, b itest.Backend, point string) {
	e := b.Env()
	itest.UseMoto(t)
	const rows = 200
	itest.CreateTables(t, b, "ledger", "sentinel")
	if err := b.Exec(b.BulkInsert("ledger", 0, 0, rows)); err != nil {
		t.Fatal(err)
	}
	table := itest.TestTableName("crash")
	cfg := itest.WithDynamoStore(t, b.Config(nil, ""), table)
	topic := b.Topic("ledger")

	p := e.Start("run", "--config", cfg)
	p.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= rows })

	w := itest.NewLedgerWriter(rows)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.RunOn(ctx, b.Exec, 60*time.Second)
	}()
	defer func() { cancel(); wg.Wait() }()

	time.Sleep(time.Second)
	p.Kill()
	crashes := 0
	for i, n := range []int{40, 2, 3} {
		if point != "after-produce" {
			n = 1 + i%2 // commits with progress happen once a second
		}
		p = startToCrash(t, e, nil, cfg, fmt.Sprintf("%s:%d", point, n), 30*time.Second)
		crashes++
	}
	cancel()
	wg.Wait()
	if w.Err != nil {
		t.Fatal(w.Err)
	}

	p = e.Start("run", "--config", cfg)
	want := w.Committed()
	itest.AwaitBackendSentinel(t, b, p, 1)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	it := itest.DynamoItem(t, table, e.Name)
	if owner := itest.AttrS(it, "owner"); owner != "" {
		t.Errorf("lease still held by %s after SIGTERM", owner)
	}
	res := itest.VerifyLedger(t, topic, w)
	t.Logf("crash %s on %s: %d committed changes (+%d backfilled rows), %d rolled back, %d self-kills, %s; final epoch %s",
		point, b.Kind(), len(want), rows, len(w.RolledBack), crashes, res, itest.AttrN(it, "epoch"))
	if res.Gaps > 0 {
		t.Fatalf("%d gaps", res.Gaps)
	}
}

// startToCrash runs the pipeline of cfg with env and TRIBUTARY_TEST_CRASH=point
// (docs/testing.md) and waits up to within for it to SIGKILL itself
// there.
func startToCrash(t *testing.T, e *itest.Env, env []string, cfg, point string, within time.Duration) *itest.Proc {
	t.Helper()
	p := e.StartWith(append(slices.Clone(env), "TRIBUTARY_TEST_CRASH="+point), "run", "--config", cfg)
	select {
	case <-p.Done:
	case <-time.After(within):
		t.Fatalf("crash point %s not reached within %s; output:\n%s", point, within, p.Out)
	}
	if !p.KilledBy(syscall.SIGKILL) {
		t.Fatalf("ended with %v, not by its own SIGKILL at %s; output:\n%s", p.Err, point, p.Out)
	}
	return p
}
