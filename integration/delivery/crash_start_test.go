package delivery_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestCrashBeforeFirstCheckpoint, on every source: a task SIGKILLed as soon as its first backfilled rows are in
// Kafka, before any checkpoint recorded progress, restarts from the
// position it started at, so the changes made while it was down reach
// Kafka: a delete of a published row as a d (a JDBC sink drops the row),
// an update as a u. Before the fix the restart began as a new pipeline at
// the current position: the delete was never published.
func TestCrashBeforeFirstCheckpoint(t *testing.T) {
	itest.ForEachBackend(t, "crashstart", func(t *testing.T, b itest.Backend) {
		kd, ku := killAfterFirstRecord(t, b)
		restartAfterChanges(t, b, kd, ku)
	})
}

// TestSlotWithoutCheckpoint: the PostgreSQL slot survives while the
// checkpoint does not (a crash between creating the slot and the first
// checkpoint, or a lost checkpoint store). Nothing past the slot's
// confirmed position was acknowledged, so the restart streams from there
// and backfills every table again: a row deleted meanwhile is published
// as a delete. Before the fix the slot was dropped and made again at the
// current WAL end, and the delete was lost.
func TestSlotWithoutCheckpoint(t *testing.T) {
	b := itest.NewPGBackend(t, "slotnockpt")
	e := b.Env()
	kd, ku := killAfterFirstRecord(t, b)
	if err := os.Remove(filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var slots int
	if err := e.Conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, "tributary_"+e.Name).Scan(&slots); err != nil || slots != 1 {
		t.Fatalf("the slot tributary_%s: %d slots, %v; want it kept after the kill", e.Name, slots, err)
	}
	restartAfterChanges(t, b, kd, ku)
}

// updatedSeq is the seq the update made while the task is down writes.
const updatedSeq = 1_000_000

// killAfterFirstRecord backfills a table ledger (and the sentinel table)
// and SIGKILLs the task as soon as the first ledger row is in Kafka; it
// checks that no checkpoint recorded progress then, and returns two
// published keys: one to delete, one to update.
func killAfterFirstRecord(t *testing.T, b itest.Backend) (deleted, updated int64) {
	t.Helper()
	e := b.Env()
	const rows = 2000
	itest.CreateTables(t, b, "ledger", "sentinel")
	itest.MustExecOn(t, b, b.BulkInsert("ledger", 0, 0, rows))
	cfg := b.Config(nil, "")
	topic := b.Topic("ledger")
	// No checkpoint on the cadence in this incarnation, whatever the
	// machine's load: the kill always lands where the did (the
	// first cadence checkpoint comes 1 s after the start, the first
	// record after 0.1–0.3 s).
	p := e.StartWith([]string{"TRIBUTARY_CHECKPOINT_INTERVAL=1h"}, "run", "--config", cfg)
	deadline := time.Now().Add(60 * time.Second)
	for itest.TopicEnd(topic) == 0 {
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("no ledger row in Kafka; output:\n%s", p.Out)
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.Kill()
	// What the kill left: no checkpoint at all (before the fix), or the
	// start position with the backfill not begun.
	ckpt := filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")
	if st, ok := itest.ReadSnapshotState(ckpt); ok {
		if len(st.Done) > 0 {
			t.Fatalf("the checkpoint at the kill records finished tables %v: the kill came too late", st.Done)
		}
		for _, ts := range st.Tables {
			if ts.Rows > 0 || len(ts.Key) > 0 {
				t.Fatalf("the checkpoint at the kill records %d rows of %s: the kill came too late", ts.Rows, ts.Table)
			}
		}
		t.Logf("at the kill the checkpoint holds the start position, backfill not begun (%d tables queued)", len(st.Tables))
	} else {
		t.Log("at the kill there is no checkpoint")
	}
	msgs := itest.ReadTopic(t, topic)
	t.Logf("%d ledger rows were in Kafka at the kill", len(msgs))
	deleted = itest.KeyOf(msgs[0])
	updated = deleted%rows + 1
	for _, m := range msgs[1:] {
		if k := itest.KeyOf(m); k != deleted {
			updated = k
			break
		}
	}
	return deleted, updated
}

// restartAfterChanges deletes ledger row deleted and updates row updated
// while the task is down, runs it until it caught up and checks that both
// changes were published.
func restartAfterChanges(t *testing.T, b itest.Backend, deleted, updated int64) {
	t.Helper()
	itest.MustExecOn(t, b, fmt.Sprintf(`DELETE FROM ledger WHERE k = %d`, deleted))
	itest.MustExecOn(t, b, fmt.Sprintf(`UPDATE ledger SET seq = %d WHERE k = %d`, updatedSeq, updated))
	p := b.Env().Start("run", "--config", b.Config(nil, ""))
	itest.AwaitBackendSentinel(t, b, p, 1)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	assertDownChangesPublished(t, b.Topic("ledger"), deleted, updated, p)
}

// assertDownChangesPublished checks that the topic holds a delete of key
// deleted, and that it is that key's last message, and an update of key
// updated to updatedSeq.
func assertDownChangesPublished(t *testing.T, topic string, deleted, updated int64, p *itest.Proc) {
	t.Helper()
	var last map[string]any
	var sawDelete, sawUpdate bool
	for _, m := range itest.ReadTopic(t, topic) {
		pl := m.Payload()
		switch itest.KeyOf(m) {
		case deleted:
			last = pl
			sawDelete = sawDelete || pl["op"] == "d"
		case updated:
			after, _ := pl["after"].(map[string]any)
			sawUpdate = sawUpdate || pl["op"] == "u" && after["seq"] == float64(updatedSeq)
		}
	}
	if !sawDelete {
		t.Errorf("the delete of k=%d made while the task was down was never published (last message of the key: op %v); restart output:\n%s", deleted, last["op"], itest.OutTail(p.Out.String()))
	} else if last["op"] != "d" {
		t.Errorf("k=%d: the last message is op %v, not the delete", deleted, last["op"])
	}
	if !sawUpdate {
		t.Errorf("the update of k=%d made while the task was down was never published as op u", updated)
	}
}
