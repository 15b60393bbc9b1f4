package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// modeDB is what the snapshot_mode tests need of a source: one table t
// (id INT PRIMARY KEY, v INT) in a database of the test's own, on PostgreSQL or
// MariaDB.
type modeDB struct {
	e     *env
	exec  func(sql string)
	topic string                     // the topic of table t
	cfg   func(source string) string // a pipeline config with these source lines
	// lose makes the checkpoint's position unreadable: the slot dropped,
	// the binlog files purged.
	lose func(t *testing.T)
}

func pgModeDB(t *testing.T, label string) modeDB {
	e := newEnv(t, label)
	return modeDB{e: e, exec: func(sql string) { e.exec(sql) }, topic: e.prefix + ".public.t",
		cfg: func(source string) string { return e.writePipeline(pipelineConfig{source: source}) },
		lose: func(t *testing.T) {
			e.exec(`SELECT pg_drop_replication_slot($1)`, "tributary_"+e.name)
		}}
}

// myModeDB is on the private MariaDB of faults.sh: lose purges its binary
// logs, which would take the position of every other reader of the shared
// one (a soak, a benchmark) beside the test.
func myModeDB(t *testing.T, label string) modeDB {
	e := faultMyEnv(t, label)
	return modeDB{e: e.env, exec: func(sql string) { e.exec(sql) }, topic: e.prefix + "." + e.db + ".t",
		cfg:  func(source string) string { return e.writeConfig(source) },
		lose: func(t *testing.T) { purgeBinlogs(t, e) }}
}

// purgeBinlogs rotates the binary log and purges every older file, as
// TestMySQLResnapshotRequired does.
func purgeBinlogs(t *testing.T, e *myEnv) {
	t.Helper()
	e.exec(`FLUSH BINARY LOGS`)
	file, _ := e.exec(`SHOW MASTER STATUS`).GetString(0, 0)
	waitFor(t, 60*time.Second, "the older binlog files purged", func() bool {
		e.exec(`PURGE BINARY LOGS TO '` + file + `'`)
		first, _ := e.exec(`SHOW BINARY LOGS`).GetString(0, 0)
		return first == file
	})
}

// insert commits rows ids from..to into t, in one statement.
func (d modeDB) insert(from, to int) {
	var vals []string
	for i := from; i <= to; i++ {
		vals = append(vals, fmt.Sprintf("(%d)", i))
	}
	d.exec("INSERT INTO t (id) VALUES " + strings.Join(vals, ","))
}

// ops lists t's topic as "<op><id>", sorted (the topic may have several
// partitions: its order across keys is not the order of publishing).
func (d modeDB) ops(t *testing.T) []string {
	t.Helper()
	var out []string
	d.each(t, func(op string, _ message) { out = append(out, op) })
	sort.Strings(out)
	return out
}

// each calls fn with every message of t's topic and its "<op><id>".
func (d modeDB) each(t *testing.T, fn func(op string, m message)) {
	t.Helper()
	if topicEnd(d.topic) == 0 {
		return
	}
	for _, m := range readTopic(t, d.topic) {
		pl := m.payload()
		row, _ := pl["after"].(map[string]any)
		if row == nil {
			row, _ = pl["before"].(map[string]any)
		}
		fn(fmt.Sprintf("%v%v", pl["op"], row["id"]), m)
	}
}

// exitWithin waits for p to end and returns its exit code.
func exitWithin(t *testing.T, p *proc, d time.Duration, what string) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %s; output:\n%s", what, d, p.out)
	}
	return p.cmd.ProcessState.ExitCode()
}

// awaitStarted waits until p saved its first checkpoint: the position its
// stream starts from, saved before any row is published.
func (d modeDB) awaitStarted(t *testing.T, p *proc) {
	t.Helper()
	path := filepath.Join(d.e.dir, "checkpoints", d.e.name+".checkpoint.json")
	p.waitFor(t, 60*time.Second, "the first checkpoint", func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

// count returns how many of ops are in want.
func count(ops []string, want func(string) bool) int {
	n := 0
	for _, o := range ops {
		if want(o) {
			n++
		}
	}
	return n
}

func rowsRead(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("r%d", i))
	}
	sort.Strings(out)
	return out
}

// initial_only publishes every existing row (op r) and exits 0 by itself;
// a later run with the finished checkpoint exits 0 at once and publishes
// nothing (Debezium: no snapshot, no streaming); a run with
// snapshot_mode initial then streams on from where the backfill ended.
func snapshotInitialOnly(t *testing.T, d modeDB) {
	d.exec(`CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	d.insert(1, 20)
	cfg := d.cfg("  snapshot_mode: initial_only\n")
	p := d.e.start("run", "--config", cfg)
	if code := exitWithin(t, p, 90*time.Second, "initial_only"); code != 0 {
		t.Fatalf("initial_only: exit %d, want 0 after the backfill; output:\n%s", code, p.out)
	}
	got := d.ops(t)
	if want := rowsRead(1, 20); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("initial_only published %v, want every row once with op r: %v", got, want)
	}
	if !strings.Contains(p.out.String(), "every table is backfilled") {
		t.Errorf("no log line says why it stopped:\n%s", p.out)
	}

	d.insert(21, 21)
	p = d.e.start("run", "--config", cfg)
	if code := exitWithin(t, p, 60*time.Second, "initial_only again"); code != 0 {
		t.Fatalf("initial_only with a finished checkpoint: exit %d, want 0; output:\n%s", code, p.out)
	}
	if got := d.ops(t); len(got) != 20 {
		t.Fatalf("initial_only with a finished checkpoint published more: %v", got)
	}

	p = d.e.start("run", "--config", d.cfg("  snapshot_mode: initial\n"))
	p.waitFor(t, 90*time.Second, "row 21 streamed", func() bool {
		return count(d.ops(t), func(o string) bool { return o == "c21" }) == 1
	})
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	if got := d.ops(t); len(got) != 21 {
		t.Errorf("initial after initial_only: %v, want the 20 rows read and c21 only (no second backfill)", got)
	}
}

// no_data (and never, its older name) publishes only the changes made
// after the start, no existing row.
func snapshotNoData(t *testing.T, d modeDB, mode string) {
	d.exec(`CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	d.insert(1, 5)
	p := d.e.start("run", "--config", d.cfg("  snapshot_mode: "+mode+"\n"))
	d.awaitStarted(t, p)
	d.insert(6, 6)
	d.exec(`UPDATE t SET v = 1 WHERE id = 1`) // an existing row changed: published as a change
	p.waitFor(t, 90*time.Second, "the changes after the start", func() bool {
		return count(d.ops(t), func(o string) bool { return o == "u1" }) == 1
	})
	time.Sleep(2 * time.Second) // a backfill would have begun by now
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	got := d.ops(t)
	if n := count(got, func(o string) bool { return strings.HasPrefix(o, "r") }); n != 0 {
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
func snapshotWhenNeeded(t *testing.T, d modeDB) {
	d.exec(`CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	d.insert(1, 10)
	cfg := d.cfg("  snapshot_mode: when_needed\n")
	p := d.e.start("run", "--config", cfg)
	p.waitFor(t, 90*time.Second, "the backfill", func() bool { return len(d.ops(t)) == 10 })
	var first int64 // the first process's producer
	d.each(t, func(_ string, m message) { first = m.ProducerID })
	time.Sleep(1500 * time.Millisecond) // a checkpoint past the backfill
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	d.insert(11, 11) // while stopped: its change is lost with the position
	d.lose(t)

	addr := freeAddr(t)
	p = d.e.start("run", "--config", cfg, "--http-addr", addr)
	p.waitFor(t, 90*time.Second, "the second backfill", func() bool {
		return count(d.ops(t), func(o string) bool { return strings.HasPrefix(o, "r") }) == 21
	})
	d.insert(12, 12)
	p.waitFor(t, 90*time.Second, "row 12 streamed", func() bool {
		return count(d.ops(t), func(o string) bool { return o == "c12" }) == 1
	})
	metric := samples(scrape(t, addr), "tributary_source_resnapshots_total", d.e.name)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	out := p.out.String()
	warn := lineWith(out, "the source position is lost")
	if warn == "" || !strings.Contains(warn, "resnapshot required") {
		t.Errorf("no warning naming why the position was lost:\n%s", out)
	}
	if metric[""] != 1 {
		t.Errorf("tributary_source_resnapshots_total %v, want 1", metric)
	}
	var second []string
	d.each(t, func(op string, m message) {
		if m.ProducerID != first && strings.HasPrefix(op, "r") {
			second = append(second, op)
		}
	})
	sort.Strings(second)
	if want := rowsRead(1, 11); strings.Join(second, ",") != strings.Join(want, ",") {
		t.Errorf("the second backfill published %v, want %v", second, want)
	}
	t.Logf("when_needed: %s", warn)
}

func TestPostgresSnapshotInitialOnly(t *testing.T) { snapshotInitialOnly(t, pgModeDB(t, "pgionly")) }
func TestMySQLSnapshotInitialOnly(t *testing.T)    { snapshotInitialOnly(t, myModeDB(t, "myionly")) }
func TestPostgresSnapshotNoData(t *testing.T)      { snapshotNoData(t, pgModeDB(t, "pgnodata"), "no_data") }
func TestMySQLSnapshotNever(t *testing.T)          { snapshotNoData(t, myModeDB(t, "mynever"), "never") }
func TestPostgresSnapshotNever(t *testing.T)       { snapshotNoData(t, pgModeDB(t, "pgnever"), "never") }
func TestMySQLSnapshotNoData(t *testing.T)         { snapshotNoData(t, myModeDB(t, "mynodata"), "no_data") }
func TestPostgresSnapshotWhenNeeded(t *testing.T)  { snapshotWhenNeeded(t, pgModeDB(t, "pgneeded")) }
func TestMySQLSnapshotWhenNeeded(t *testing.T)     { snapshotWhenNeeded(t, myModeDB(t, "myneeded")) }
