package scenario_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// myModeDB is on the private MariaDB of faults.sh: lose purges its binary
// logs, which would take the position of every other reader of the shared
// one (a soak, a benchmark) beside the test.
func myModeDB(t *testing.T, label string) itest.ModeDB {
	e := itest.FaultMyEnv(t, label)
	return itest.ModeDB{E: e.Env, Exec: func(sql string) { e.Exec(sql) }, Topic: e.Prefix + "." + e.DB + ".t",
		Cfg:  func(source string) string { return e.WriteConfig(source) },
		Lose: func(t *testing.T) { purgeBinlogs(t, e) }}
}

// purgeBinlogs rotates the binary log and purges every older file, as
// TestMySQLResnapshotRequired does.
func purgeBinlogs(t *testing.T, e *itest.MyEnv) {
	t.Helper()
	e.Exec(`FLUSH BINARY LOGS`)
	file, _ := e.Exec(`SHOW MASTER STATUS`).GetString(0, 0)
	itest.WaitFor(t, 60*time.Second, "the older binlog files purged", func() bool {
		e.Exec(`PURGE BINARY LOGS TO '` + file + `'`)
		first, _ := e.Exec(`SHOW BINARY LOGS`).GetString(0, 0)
		return first == file
	})
}

// initial_only publishes every existing row (op r) and exits 0 by itself;
// a later run with the finished checkpoint exits 0 at once and publishes
// nothing (Debezium: no snapshot, no streaming); with streamsOn (MariaDB,
// whose position is the binlog's) a run with snapshot_mode initial then
// streams on from where the backfill ended. PostgreSQL's initial_only
// drops its slot instead (TestPGInitialOnlyDropsItsSlot).
func snapshotInitialOnly(t *testing.T, d itest.ModeDB, streamsOn bool) {
	d.Exec(`CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	d.Insert(1, 20)
	cfg := d.Cfg("  snapshot_mode: initial_only\n")
	p := d.E.Start("run", "--config", cfg)
	if code := itest.ExitWithin(t, p, 90*time.Second, "initial_only"); code != 0 {
		t.Fatalf("initial_only: exit %d, want 0 after the backfill; output:\n%s", code, p.Out)
	}
	got := d.Ops(t)
	if want := itest.RowsRead(1, 20); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("initial_only published %v, want every row once with op r: %v", got, want)
	}
	if !strings.Contains(p.Out.String(), "every table is backfilled") {
		t.Errorf("no log line says why it stopped:\n%s", p.Out)
	}

	d.Insert(21, 21)
	p = d.E.Start("run", "--config", cfg)
	if code := itest.ExitWithin(t, p, 60*time.Second, "initial_only again"); code != 0 {
		t.Fatalf("initial_only with a finished checkpoint: exit %d, want 0; output:\n%s", code, p.Out)
	}
	if got := d.Ops(t); len(got) != 20 {
		t.Fatalf("initial_only with a finished checkpoint published more: %v", got)
	}
	if !streamsOn {
		return
	}

	p = d.E.Start("run", "--config", d.Cfg("  snapshot_mode: initial\n"))
	p.WaitFor(t, 90*time.Second, "row 21 streamed", func() bool {
		return itest.Count(d.Ops(t), func(o string) bool { return o == "c21" }) == 1
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	if got := d.Ops(t); len(got) != 21 {
		t.Errorf("initial after initial_only: %v, want the 20 rows read and c21 only (no second backfill)", got)
	}
}

// no_data (and never, its older name) publishes only the changes made
// after the start, no existing row.
func snapshotNoData(t *testing.T, d itest.ModeDB, mode string) {
	d.Exec(`CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	d.Insert(1, 5)
	p := d.E.Start("run", "--config", d.Cfg("  snapshot_mode: "+mode+"\n"))
	d.AwaitStarted(t, p)
	d.Insert(6, 6)
	d.Exec(`UPDATE t SET v = 1 WHERE id = 1`) // an existing row changed: published as a change
	p.WaitFor(t, 90*time.Second, "the changes after the start", func() bool {
		return itest.Count(d.Ops(t), func(o string) bool { return o == "u1" }) == 1
	})
	time.Sleep(2 * time.Second) // a backfill would have begun by now
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	got := d.Ops(t)
	if n := itest.Count(got, func(o string) bool { return strings.HasPrefix(o, "r") }); n != 0 {
		t.Errorf("%s published %d existing rows (op r): %v", mode, n, got)
	}
	if strings.Join(got, ",") != "c6,u1" { // sorted
		t.Errorf("%s published %v, want c6 and u1: the changes made after the start, nothing else", mode, got)
	}
}

// when_needed: with the checkpoint's position lost (slot dropped, binlog
// purged) the pipeline does not stop with "resnapshot required": it logs
// a warning naming why, counts it in tributary_source_resnapshots_total,
// backfills every table again from a new position and streams on.
func snapshotWhenNeeded(t *testing.T, d itest.ModeDB) {
	d.Exec(`CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	d.Insert(1, 10)
	cfg := d.Cfg("  snapshot_mode: when_needed\n")
	p := d.E.Start("run", "--config", cfg)
	p.WaitFor(t, 90*time.Second, "the backfill", func() bool { return len(d.Ops(t)) == 10 })
	var first int64 // the first process's producer
	d.Each(t, func(_ string, m itest.Message) { first = m.ProducerID })
	time.Sleep(1500 * time.Millisecond) // a checkpoint past the backfill
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	d.Insert(11, 11) // while stopped: its change is lost with the position
	d.Lose(t)

	addr := itest.FreeAddr(t)
	p = d.E.Start("run", "--config", cfg, "--http-addr", addr)
	p.WaitFor(t, 90*time.Second, "the second backfill", func() bool {
		return itest.Count(d.Ops(t), func(o string) bool { return strings.HasPrefix(o, "r") }) == 21
	})
	d.Insert(12, 12)
	p.WaitFor(t, 90*time.Second, "row 12 streamed", func() bool {
		return itest.Count(d.Ops(t), func(o string) bool { return o == "c12" }) == 1
	})
	metric := itest.Samples(itest.Scrape(t, addr), "tributary_source_resnapshots_total", d.E.Name)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	out := p.Out.String()
	warn := itest.LineWith(out, "the source position is lost")
	if warn == "" || !strings.Contains(warn, "resnapshot required") {
		t.Errorf("no warning naming why the position was lost:\n%s", out)
	}
	if metric[""] != 1 {
		t.Errorf("tributary_source_resnapshots_total %v, want 1", metric)
	}
	var second []string
	d.Each(t, func(op string, m itest.Message) {
		if m.ProducerID != first && strings.HasPrefix(op, "r") {
			second = append(second, op)
		}
	})
	sort.Strings(second)
	if want := itest.RowsRead(1, 11); strings.Join(second, ",") != strings.Join(want, ",") {
		t.Errorf("the second backfill published %v, want %v", second, want)
	}
	t.Logf("when_needed: %s", warn)
}

func TestPostgresSnapshotInitialOnly(t *testing.T) {
	snapshotInitialOnly(t, itest.PGModeDB(t, "pgionly"), false)
}
func TestMySQLSnapshotInitialOnly(t *testing.T) { snapshotInitialOnly(t, myModeDB(t, "myionly"), true) }
func TestPostgresSnapshotNoData(t *testing.T) {
	snapshotNoData(t, itest.PGModeDB(t, "pgnodata"), "no_data")
}
func TestMySQLSnapshotNever(t *testing.T) { snapshotNoData(t, myModeDB(t, "mynever"), "never") }
func TestPostgresSnapshotNever(t *testing.T) {
	snapshotNoData(t, itest.PGModeDB(t, "pgnever"), "never")
}
func TestMySQLSnapshotNoData(t *testing.T) { snapshotNoData(t, myModeDB(t, "mynodata"), "no_data") }
func TestPostgresSnapshotWhenNeeded(t *testing.T) {
	snapshotWhenNeeded(t, itest.PGModeDB(t, "pgneeded"))
}
func TestMySQLSnapshotWhenNeeded(t *testing.T) { snapshotWhenNeeded(t, myModeDB(t, "myneeded")) }
