package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
)

// slotLSN is the confirmed flush LSN of the pipeline's slot (0: no slot).
func (e *env) slotLSN() uint64 {
	e.t.Helper()
	var lsn *string
	err := e.conn.QueryRow(context.Background(),
		`SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1`, "tributary_"+e.name).Scan(&lsn)
	if err != nil || lsn == nil {
		return 0
	}
	l, _ := pglogrepl.ParseLSN(*lsn)
	return uint64(l)
}

func (e *env) walLSN() uint64 {
	e.t.Helper()
	var lsn string
	if err := e.conn.QueryRow(context.Background(), `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		e.t.Fatal(err)
	}
	l, _ := pglogrepl.ParseLSN(lsn)
	return uint64(l)
}

// checkpointLSN reads the LSN of the pipeline's DynamoDB checkpoint.
func checkpointLSN(t *testing.T, table, pipeline string) uint64 {
	t.Helper()
	var p struct{ LSN string }
	if err := json.Unmarshal([]byte(attrS(dynamoItem(t, table, pipeline), "position")), &p); err != nil {
		return 0
	}
	l, _ := pglogrepl.ParseLSN(p.LSN)
	return uint64(l)
}

// TestSlotHeartbeat: while the selected table is idle and the server
// writes WAL for another table, the slot's confirmed LSN still moves on
// (so WAL does not pile up), and never past the durable checkpoint.
func TestSlotHeartbeat(t *testing.T) {
	e := newEnv(t, "heartbeat")
	useMoto(t)
	e.exec(`CREATE TABLE quiet (k int PRIMARY KEY)`)
	e.exec(`CREATE TABLE busy (k serial PRIMARY KEY, pad text)`)
	table := testTableName("hb")
	cfg := e.writeDynamoConfig(table, "  tables: [public.quiet]\n")
	p := e.start("run", "--config", cfg)
	p.waitFor(t, 60*time.Second, "the first checkpoint", func() bool { return checkpointLSN(t, table, e.name) > 0 })
	start := e.slotLSN()
	e.exec(`INSERT INTO busy (pad) SELECT repeat('x', 200) FROM generate_series(1, 5000)`)
	target := e.walLSN()
	deadline := time.Now().Add(30 * time.Second)
	for e.slotLSN() < target {
		if time.Now().After(deadline) {
			t.Fatalf("slot stayed at %s while WAL moved to %s; output:\n%s",
				pglogrepl.LSN(e.slotLSN()), pglogrepl.LSN(e.walLSN()), p.out)
		}
		if p.exited() {
			t.Fatalf("tributary exited: %v\n%s", p.err, p.out)
		}
		e.exec(`INSERT INTO busy (pad) SELECT repeat('x', 200) FROM generate_series(1, 50)`)
		time.Sleep(200 * time.Millisecond)
	}
	slot, cp := e.slotLSN(), checkpointLSN(t, table, e.name)
	if slot > cp {
		t.Errorf("slot confirmed %s, past the checkpoint %s", pglogrepl.LSN(slot), pglogrepl.LSN(cp))
	}
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	if n := topicEnd(e.prefix + ".public.busy"); n != 0 {
		t.Errorf("%d messages for the unselected table", n)
	}
	t.Logf("slot moved from %s past %s (%d KiB of WAL; now %s, checkpoint %s) with only another table written",
		pglogrepl.LSN(start), pglogrepl.LSN(target), (target-start)>>10, pglogrepl.LSN(slot), pglogrepl.LSN(cp))
}

// TestResnapshotRequired: a slot confirmed beyond the checkpoint, or a
// dropped slot, stops the pipeline at start-up with "resnapshot required"
// instead of silently streaming from now.
func TestResnapshotRequired(t *testing.T) {
	e := newEnv(t, "resnap")
	e.exec(`CREATE TABLE t (k int PRIMARY KEY)`)
	e.exec(`INSERT INTO t SELECT generate_series(1, 10)`)
	e.exec(sentinelTable)
	cfg := e.writeConfig("")
	slot := "tributary_" + e.name

	p := e.start("run", "--config", cfg)
	e.awaitSentinel(p, 1)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	expectResnapshot := func(what string, words ...string) {
		t.Helper()
		p := e.start("run", "--config", cfg)
		select {
		case <-p.done:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: still running after 60 s; output:\n%s", what, p.out)
		}
		if code := p.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(p.out.String(), "resnapshot required") {
			t.Fatalf("%s: exit %d, want 1 with \"resnapshot required\"; output:\n%s", what, code, p.out)
		}
		for _, w := range words {
			if !strings.Contains(p.out.String(), w) {
				t.Errorf("%s: the error does not say %q:\n%s", what, w, p.out)
			}
		}
	}

	// Someone consumed the slot past our checkpoint: changes would be lost.
	e.exec(`INSERT INTO t SELECT generate_series(11, 20)`)
	e.exec(`SELECT pg_replication_slot_advance($1, pg_current_wal_lsn())`, slot)
	expectResnapshot("slot ahead of the checkpoint")

	e.exec(`SELECT pg_drop_replication_slot($1)`, slot)
	// As after a failover to a server without the slot (RDS Multi-AZ,
	// Aurora, PostgreSQL before 17's failover slots): say so in words.
	expectResnapshot("slot dropped", "does not exist on this server", "failover")
}
