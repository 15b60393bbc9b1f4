package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestResnapshotRequiredNamesFix: a pipeline whose replication slot was
// dropped while it was stopped cannot resume; run stops with "resnapshot
// required" and now says what to do: snapshot_mode when_needed, or drop
// then run. Following the first fix, run starts again and publishes.
func TestResnapshotRequiredNamesFix(t *testing.T) {
	e := itest.NewEnv(t, "resnapfix")
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO orders VALUES (1)`)
	cfg := e.WriteConfig("")
	topic := e.Prefix + ".public.orders"
	p := e.Start("run", "--config", cfg)
	itest.WaitOrDump(t, p, 60*time.Second, "row 1", func() bool { return itest.TopicEnd(topic) >= 1 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}
	itest.WaitFor(t, 30*time.Second, "the slot to be released", func() bool {
		return e.PGCount(t, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1 AND active`, "tributary_"+e.Name) == 0
	})
	e.Exec(`SELECT pg_drop_replication_slot('tributary_' || $1)`, e.Name)

	out, code := e.Run("run", "--config", cfg)
	if code != 1 || !strings.Contains(out, "resnapshot required") ||
		!strings.Contains(out, "fix: set source.snapshot_mode: when_needed") || !strings.Contains(out, "tributary drop") {
		t.Fatalf("run without its slot: exit %d, want 1 with \"resnapshot required\" and the fix (when_needed, or drop then run):\n%s", code, out)
	}

	fixed := e.WritePipeline(itest.PipelineConfig{File: "fixed.yaml", Source: "  snapshot_mode: when_needed\n"})
	e.Exec(`INSERT INTO orders VALUES (2)`)
	p = e.Start("run", "--config", fixed)
	itest.WaitOrDump(t, p, 60*time.Second, "row 2 after the fix", func() bool { return itest.TopicEnd(topic) >= 3 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("after the fix: exit %d:\n%s", code, p.Out)
	}
}
