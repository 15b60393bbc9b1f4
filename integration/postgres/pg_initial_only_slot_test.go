package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGInitialOnlyDropsItsSlot: a run of snapshot_mode initial_only
// exits 0 once every table is backfilled, and nothing streams from its
// replication slot after that; the slot used to stay, holding every byte
// of WAL written since (a trial run filled the disk). The run now drops
// it. A second initial_only run still exits 0 at once, publishing
// nothing; initial then has no slot to stream from (resnapshot required,
// naming when_needed), and when_needed backfills again from a new slot.
func TestPGInitialOnlyDropsItsSlot(t *testing.T) {
	d := itest.PGModeDB(t, "pgionlyslot")
	d.Exec(`CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	d.Insert(1, 20)
	slot := "tributary_" + d.E.Name
	slots := `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`
	p := d.E.Start("run", "--config", d.Cfg("  snapshot_mode: initial_only\n"))
	if code := itest.ExitWithin(t, p, 90*time.Second, "initial_only"); code != 0 {
		t.Fatalf("initial_only: exit %d, want 0; output:\n%s", code, p.Out)
	}
	if n := d.E.PGCount(t, slots, slot); n != 0 {
		t.Errorf("after initial_only: slot %s is left (it holds the WAL written since, and nothing streams from it)\n%s", slot, p.Out)
	}
	if !strings.Contains(p.Out.String(), "dropped the replication slot") {
		t.Errorf("no log line says the slot was dropped:\n%s", p.Out)
	}
	if got := d.Ops(t); len(got) != 20 {
		t.Fatalf("initial_only published %d records, want the 20 rows", len(got))
	}

	d.Insert(21, 21)
	p = d.E.Start("run", "--config", d.Cfg("  snapshot_mode: initial_only\n"))
	if code := itest.ExitWithin(t, p, 60*time.Second, "initial_only again"); code != 0 {
		t.Fatalf("initial_only with a finished checkpoint: exit %d, want 0; output:\n%s", code, p.Out)
	}
	if got := d.Ops(t); len(got) != 20 {
		t.Fatalf("initial_only with a finished checkpoint published more: %v", got)
	}
	if n := d.E.PGCount(t, slots, slot); n != 0 {
		t.Errorf("after the second initial_only: slot %s is there again", slot)
	}

	p = d.E.Start("run", "--config", d.Cfg("  snapshot_mode: initial\n"))
	if code := itest.ExitWithin(t, p, 60*time.Second, "initial after initial_only"); code != 1 ||
		!strings.Contains(p.Out.String(), "resnapshot required") || !strings.Contains(p.Out.String(), "when_needed") {
		t.Errorf("initial after initial_only: exit %d, want 1 with resnapshot required naming when_needed\n%s", code, p.Out)
	}

	p = d.E.Start("run", "--config", d.Cfg("  snapshot_mode: when_needed\n"))
	p.WaitFor(t, 90*time.Second, "the second backfill", func() bool {
		return itest.Count(d.Ops(t), func(o string) bool { return o == "r21" }) == 1
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("when_needed: exit %d after SIGTERM\n%s", code, p.Out)
	}
}

// TestPGInitialOnlyKeepsAStreamedSlot: a pipeline that streamed under
// snapshot_mode initial, then run once with initial_only (its backfill
// long finished), used to have its slot dropped: the change written while
// it was stopped, waiting in the slot, was lost, and the next run of
// initial stopped with "resnapshot required". Only a slot that initial_only
// made is dropped; this one is kept, saying so, and initial streams the
// change.
func TestPGInitialOnlyKeepsAStreamedSlot(t *testing.T) {
	d := itest.PGModeDB(t, "pgionlykeep")
	d.Exec(`CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	d.Insert(1, 2)
	slot := "tributary_" + d.E.Name
	p := d.E.Start("run", "--config", d.Cfg("  snapshot_mode: initial\n"))
	p.WaitFor(t, 90*time.Second, "the backfill", func() bool { return len(d.Ops(t)) >= 2 })
	d.Insert(3, 3)
	p.WaitFor(t, 60*time.Second, "the streamed row", func() bool { return len(d.Ops(t)) >= 3 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("initial: exit %d after SIGTERM\n%s", code, p.Out)
	}
	d.Insert(4, 4) // waits in the slot

	p = d.E.Start("run", "--config", d.Cfg("  snapshot_mode: initial_only\n"))
	if code := itest.ExitWithin(t, p, 60*time.Second, "initial_only"); code != 0 {
		t.Fatalf("initial_only: exit %d, want 0\n%s", code, p.Out)
	}
	if n := d.E.PGCount(t, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, slot); n != 1 ||
		!strings.Contains(p.Out.String(), "replication slot is kept") {
		t.Fatalf("initial_only of a pipeline that streamed: slot %s dropped (%d left) or not said to be kept; row 4 waits in it\n%s", slot, n, p.Out)
	}

	p = d.E.Start("run", "--config", d.Cfg("  snapshot_mode: initial\n"))
	p.WaitFor(t, 60*time.Second, "row 4", func() bool {
		return itest.Count(d.Ops(t), func(o string) bool { return o == "c4" }) == 1
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("initial again: exit %d after SIGTERM\n%s", code, p.Out)
	}
}
