package postgres_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGSlotOfAnotherDatabase: slot names are server-wide, so a pipeline
// may name a slot another database's pipeline streams from (the same
// pipeline name on two databases). Run must refuse it, naming the other
// database, and never take it over: before, a first run adopted the slot
// into its checkpoint (then failed), and a later run under
// snapshot_mode when_needed with another source.slot dropped it as
// abandoned, so that the other pipeline stopped with "resnapshot
// required".
func TestPGSlotOfAnotherDatabase(t *testing.T) {
	a := itest.NewEnv(t, "slotwhosea")
	slotName := "tributary_" + a.Name
	a.Exec(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slotName)
	slot := `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1 AND database = $2`

	b := itest.NewEnv(t, "slotwhoseb")
	b.Name = a.Name
	b.Exec(`CREATE TABLE items (id int PRIMARY KEY)`)
	b.Exec(`INSERT INTO items VALUES (1)`)
	cfgB := b.WritePipeline(itest.PipelineConfig{})
	if code, out := itest.TestConnection(t, b, cfgB); code == 0 || !strings.Contains(out, "slot of database "+a.DB) {
		t.Errorf("test-connection naming slot %s of database %s: exit %d, want a failure naming that database, as run\n%s", slotName, a.DB, code, out)
	}
	out, code := b.Run("run", "--config", cfgB)
	if code == 0 || !strings.Contains(out, "slot of database "+a.DB) {
		t.Errorf("run naming slot %s of database %s: exit %d, want a failure naming that database\n%s", slotName, a.DB, code, out)
	}
	cp := filepath.Join(b.Dir, "checkpoints", b.Name+".checkpoint.json")
	if data, err := os.ReadFile(cp); err == nil && strings.Contains(string(data), slotName) {
		t.Errorf("run recorded slot %s of database %s in its checkpoint:\n%s", slotName, a.DB, data)
	}

	// A checkpoint naming that slot (one written so before), and a
	// config that names another: when_needed starts again from a new
	// slot, and must leave the other database's slot alone.
	if err := os.MkdirAll(filepath.Dir(cp), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, []byte(`{"version":1,"pipeline":"`+b.Name+`","position":{"slot":"`+slotName+`","lsn":"0/1000000","backfilled":true,"tables":{"public.items":1}},"updated_at":"2026-01-01T00:00:00Z","delivery":"at_least_once"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := b.WritePipeline(itest.PipelineConfig{Source: "  slot: " + b.Name + "_own\n  snapshot_mode: when_needed\n"})
	p := b.Start("run", "--config", cfg)
	itest.WaitOrDump(t, p, 60*time.Second, "the backfill from a new slot", func() bool {
		return len(itest.ReadTopicIfAny(t, b.Prefix+".public.items")) >= 1
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}
	if a.PGCount(t, slot, slotName, a.DB) != 1 {
		t.Errorf("run of the namesake on database %s dropped slot %s of database %s\n%s", b.DB, slotName, a.DB, p.Out)
	}
}
