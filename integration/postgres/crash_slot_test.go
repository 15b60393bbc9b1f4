package postgres_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/jackc/pglogrepl"
)

// checkpointLSN reads the LSN of the pipeline's DynamoDB checkpoint.
func checkpointLSN(t *testing.T, table, pipeline string) uint64 {
	t.Helper()
	var p struct{ LSN string }
	if err := json.Unmarshal([]byte(itest.AttrS(itest.DynamoItem(t, table, pipeline), "position")), &p); err != nil {
		return 0
	}
	l, _ := pglogrepl.ParseLSN(p.LSN)
	return uint64(l)
}

// TestSlotHeartbeat: while the selected table is idle and the server
// writes WAL for another table, the slot's confirmed LSN still moves on
// (so WAL does not pile up), and never past the durable checkpoint.
func TestSlotHeartbeat(t *testing.T) {
	e := itest.NewEnv(t, "heartbeat")
	itest.UseMoto(t)
	e.Exec(`CREATE TABLE quiet (k int PRIMARY KEY)`)
	e.Exec(`CREATE TABLE busy (k serial PRIMARY KEY, pad text)`)
	table := itest.TestTableName("hb")
	cfg := e.WriteDynamoConfig(table, "  tables: [public.quiet]\n")
	p := e.Start("run", "--config", cfg)
	p.WaitFor(t, 60*time.Second, "the first checkpoint", func() bool { return checkpointLSN(t, table, e.Name) > 0 })
	start := slotLSN(e)
	e.Exec(`INSERT INTO busy (pad) SELECT repeat('x', 200) FROM generate_series(1, 5000)`)
	target := walLSN(e)
	deadline := time.Now().Add(30 * time.Second)
	for slotLSN(e) < target {
		if time.Now().After(deadline) {
			t.Fatalf("slot stayed at %s while WAL moved to %s; output:\n%s",
				pglogrepl.LSN(slotLSN(e)), pglogrepl.LSN(walLSN(e)), p.Out)
		}
		if p.Exited() {
			t.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
		}
		e.Exec(`INSERT INTO busy (pad) SELECT repeat('x', 200) FROM generate_series(1, 50)`)
		time.Sleep(200 * time.Millisecond)
	}
	slot, cp := slotLSN(e), checkpointLSN(t, table, e.Name)
	if slot > cp {
		t.Errorf("slot confirmed %s, past the checkpoint %s", pglogrepl.LSN(slot), pglogrepl.LSN(cp))
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	if n := itest.TopicEnd(e.Prefix + ".public.busy"); n != 0 {
		t.Errorf("%d messages for the unselected table", n)
	}
	t.Logf("slot moved from %s past %s (%d KiB of WAL; now %s, checkpoint %s) with only another table written",
		pglogrepl.LSN(start), pglogrepl.LSN(target), (target-start)>>10, pglogrepl.LSN(slot), pglogrepl.LSN(cp))
}

// TestResnapshotRequired: a slot confirmed beyond the checkpoint, or a
// dropped slot, stops the pipeline at start-up with "resnapshot required"
// instead of silently streaming from now.
func TestResnapshotRequired(t *testing.T) {
	e := itest.NewEnv(t, "resnap")
	e.Exec(`CREATE TABLE t (k int PRIMARY KEY)`)
	e.Exec(`INSERT INTO t SELECT generate_series(1, 10)`)
	e.Exec(itest.SentinelTable)
	cfg := e.WriteConfig("")
	slot := "tributary_" + e.Name

	p := e.Start("run", "--config", cfg)
	e.AwaitSentinel(p, 1)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	expectResnapshot := func(what string, words ...string) {
		t.Helper()
		p := e.Start("run", "--config", cfg)
		select {
		case <-p.Done:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: still running after 60 s; output:\n%s", what, p.Out)
		}
		if code := p.Cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(p.Out.String(), "resnapshot required") {
			t.Fatalf("%s: exit %d, want 1 with \"resnapshot required\"; output:\n%s", what, code, p.Out)
		}
		for _, w := range words {
			if !strings.Contains(p.Out.String(), w) {
				t.Errorf("%s: the error does not say %q:\n%s", what, w, p.Out)
			}
		}
	}

	// Someone consumed the slot past our checkpoint: changes would be lost.
	e.Exec(`INSERT INTO t SELECT generate_series(11, 20)`)
	// The stopped task's walsender may hold the slot a moment longer
	// (CI: "replication slot … is active for PID …").
	itest.WaitFor(t, 30*time.Second, "the slot released by the stopped task", func() bool {
		return e.PGCount(t, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1 AND active`, slot) == 0
	})
	e.Exec(`SELECT pg_replication_slot_advance($1, pg_current_wal_lsn())`, slot)
	expectResnapshot("slot ahead of the checkpoint")

	e.Exec(`SELECT pg_drop_replication_slot($1)`, slot)
	// As after a failover to a server without the slot (RDS Multi-AZ,
	// Aurora, PostgreSQL before 17's failover slots): say so in words.
	expectResnapshot("slot dropped", "does not exist on this server", "failover")
}
