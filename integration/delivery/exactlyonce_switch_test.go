package delivery_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestDeliverySwitchBackToExactlyOnce runs one pipeline exactly_once, then
// at_least_once while rows are written, then exactly_once again with more
// rows. The offsets topic still holds the first run's position when the
// third run starts, while the checkpoint store is far ahead: resuming from
// the offsets topic made PostgreSQL fail (the slot had moved past it:
// "resnapshot required") and MariaDB publish the middle period again. The
// third run must resume from the store, the newer: no exit, no gap, and no
// duplicate (each run ends with SIGTERM, which checkpoints everything, so
// at-least-once allows none in the middle period either).
func TestDeliverySwitchBackToExactlyOnce(t *testing.T) {
	itest.ForEachBackend(t, "eosswitch", func(t *testing.T, b itest.Backend) {
		e := b.Env()
		itest.CreateTables(t, b, "t", "sentinel")
		itest.MustExecOn(t, b, b.BulkInsert("t", 0, 0, 100))
		alo := b.Config(nil, "")
		body, err := os.ReadFile(alo)
		if err != nil {
			t.Fatal(err)
		}
		eos := filepath.Join(e.Dir, "eos.yaml")
		if err := os.WriteFile(eos, append(body, itest.ExactlyOnceLines...), 0o600); err != nil {
			t.Fatal(err)
		}

		phases := []struct {
			cfg, mode string
			rows      int // inserted while it runs
		}{{eos, "exactly_once", 0}, {alo, "at_least_once", 1000}, {eos, "exactly_once", 500}}
		next := int64(100)
		for i, ph := range phases {
			p := e.Start("run", "--config", ph.cfg)
			itest.AwaitBackendSentinelCommitted(t, b, p, 2*i+1) // started and streaming
			if ph.rows > 0 {
				itest.MustExecOn(t, b, b.BulkInsert("t", next, next, ph.rows))
				next += int64(ph.rows)
			}
			itest.AwaitBackendSentinelCommitted(t, b, p, 2*i+2)
			if code := p.Stop(t); code != 0 {
				t.Fatalf("run %d (%s): exit %d after SIGTERM; output:\n%s", i+1, ph.mode, code, p.Out)
			}
		}

		seen := map[int]int{}
		for _, m := range itest.ReadCommitted(t, b.Topic("t")) {
			seen[int(m.Key["payload"].(map[string]any)["k"].(float64))]++
		}
		gaps, dups := 0, 0
		for k := 1; k <= int(next); k++ {
			switch n := seen[k]; {
			case n == 0:
				gaps++
			case n > 1:
				dups += n - 1
			}
		}
		t.Logf("%s: exactly_once → at_least_once → exactly_once, %d rows: %d gaps, %d duplicates", b.Kind(), next, gaps, dups)
		if gaps > 0 || dups > 0 {
			t.Fatalf("%d gaps and %d duplicates for a read_committed consumer, want 0 and 0", gaps, dups)
		}
	})
}
