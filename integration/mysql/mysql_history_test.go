package mysql_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// minimalMariaDBAddr is the private MariaDB of integration/services/faults.sh
// that logs binlog_row_metadata = MINIMAL, as MySQL 5.7, MariaDB < 10.5 and
// RDS parameter groups left at their default do: rows events carry no
// column names, so the schema history decodes them. (The shared server
// logs FULL, and switching it would change other tests' servers.)
const minimalMariaDBAddr = "127.0.0.1:3317"

// minimalMyEnv is a myEnv on the MINIMAL MariaDB.
func minimalMyEnv(t *testing.T, label string) *itest.MyEnv {
	itest.SkipShort(t)
	itest.Faults(t, "mariadb-minimal", "up")
	e := itest.NewMyEnvAt(t, label, minimalMariaDBAddr)
	if v, _ := e.Exec("SELECT @@binlog_row_metadata").GetString(0, 0); v != "MINIMAL" {
		t.Fatalf("binlog_row_metadata is %s on %s, want MINIMAL", v, minimalMariaDBAddr)
	}
	return e
}

// TestMySQLHistoryMinimal: without column names in the binlog, rows
// written before, between and after schema changes made while the
// publisher is stopped (twice: the second time on top of the shapes the
// first restart derived and checkpointed), and while it lags behind a
// backlog, are each published under their own columns, with their types
// and a schema in their column order. Before the schema history the
// restart stopped with "binlog_row_metadata is not FULL … resnapshot
// required", and a type-compatible change published row 2 of the issue as
// {"id":2,"z":"two","a":"twenty"}.
func TestMySQLHistoryMinimal(t *testing.T) {
	e := minimalMyEnv(t, "myhist")
	createShapeTables(e)
	cfg := e.WriteConfig("")
	topic := func(table string) string { return e.Prefix + "." + e.DB + "." + table }
	running := func(p *itest.Proc) {
		if p.Exited() {
			t.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
		}
	}
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { running(p); return itest.TopicEnd(topic("t")) >= 1 && itest.TopicEnd(topic("w")) >= 1 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	// Stopped: the scenario, rename, retype, reorder, an ALTER
	// with several clauses, drop and re-create, TRUNCATE, RENAME TABLE,
	// CREATE TABLE … LIKE.
	for _, q := range append(slices.Clone(ddlWhileStopped),
		"TRUNCATE TABLE u",
		"INSERT INTO u VALUES (3, 33, 'after truncate')",
		"INSERT INTO w VALUES (2, 'w2')",
		"RENAME TABLE w TO w_old",
		"INSERT INTO w_old VALUES (4, 'w4')",
		"CREATE TABLE w LIKE t",
		"INSERT INTO w (id, a) VALUES (3, 'like t')",
	) {
		e.Exec(q)
	}
	p = e.Start("run", "--config", cfg)
	itest.WaitFor(t, 90*time.Second, "the rows written while stopped", func() bool {
		running(p)
		return itest.TopicEnd(topic("t")) >= 7 && itest.TopicEnd(topic("u")) >= 3 && itest.TopicEnd(topic("w")) >= 3 && itest.TopicEnd(topic("w_old")) >= 1
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	// Stopped again: changes on top of the shapes derived above, which
	// only the checkpointed history knows.
	e.Exec("INSERT INTO t (id, a) VALUES (10, 'a10')")
	e.Exec("ALTER TABLE t RENAME COLUMN a TO a9, ADD COLUMN f DOUBLE FIRST")
	e.Exec("INSERT INTO t VALUES (1.5, 11, 'a11', 11)")
	p = e.Start("run", "--config", cfg)
	itest.WaitFor(t, 90*time.Second, "the rows written while stopped again", func() bool { running(p); return itest.TopicEnd(topic("t")) >= 9 })

	// Lagging: a backlog, then DDL, with rows on both sides.
	const backlog = 20000
	e.Exec(fmt.Sprintf("INSERT INTO t (id, a9) SELECT seq, 'bulk' FROM seq_100_to_%d", 100+backlog-1))
	e.Exec("INSERT INTO t VALUES (2.5, 12, 'a12', 12)")
	e.Exec("ALTER TABLE t DROP COLUMN a9, ADD COLUMN d DATE AFTER id, MODIFY COLUMN f FLOAT AFTER c")
	e.Exec("INSERT INTO t VALUES (13, '2024-01-02', 13, 0.5)")
	itest.WaitFor(t, 180*time.Second, "the backlog", func() bool { running(p); return itest.TopicEnd(topic("t")) >= 11+backlog })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	want := with(ddlWhileStoppedRows, map[string]string{
		"t10":    `{"a":"a10","c":7,"id":10}`,
		"t11":    `{"a9":"a11","c":11,"f":1.5,"id":11}`,
		"t12":    `{"a9":"a12","c":12,"f":2.5,"id":12}`,
		"t13":    `{"c":13,"d":19724,"f":0.5,"id":13}`,
		"u3":     `{"id":3,"n":33,"v":"after truncate"}`,
		"w2":     `{"id":2,"v":"w2"}`,
		"w3":     `{"a":"like t","c":7,"id":3}`,
		"w_old4": `{"id":4,"v":"w4"}`,
	})
	order := with(ddlWhileStoppedOrder, map[string][]string{ // the schema's after fields, in column order
		"t11": {"f", "id", "a9", "c"}, "t13": {"id", "d", "c", "f"}, "w3": {"id", "a", "c"},
	})
	checkRowShapes(t, topic, []string{"t", "u", "w", "w_old"}, want, order, "a9", 4, backlog)
}

// TestMySQLHistoryRefusesUnknownDDL: a schema change the history cannot
// derive (here a spatial column, which the SQL parser does not read) stops
// the pipeline with an error naming the table, the binlog position and
// what to do; no row after it is guessed.
func TestMySQLHistoryRefusesUnknownDDL(t *testing.T) {
	e := minimalMyEnv(t, "myhistno")
	e.Exec("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10))")
	e.Exec("INSERT INTO t VALUES (1, 'one')")
	cfg := e.WriteConfig("")
	topic := e.Prefix + "." + e.DB + ".t"
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 1 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	e.Exec("INSERT INTO t VALUES (2, 'two')")
	e.Exec("ALTER TABLE t ADD COLUMN p POINT AFTER id")
	e.Exec("INSERT INTO t VALUES (3, POINT(1, 2), 'three')")

	p = e.Start("run", "--config", cfg)
	select {
	case <-p.Done:
	case <-time.After(60 * time.Second):
		p.Kill()
		t.Fatalf("still running after 60 s:\n%s", p.Out)
	}
	out := p.Out.String()
	for _, want := range []string{e.DB + ".t at mariadb-bin.", "ADD COLUMN p POINT", "cannot read it", "backfill the pipeline again", "binlog_row_metadata = FULL", "DB parameter group"} {
		if !strings.Contains(out, want) {
			t.Errorf("the error does not say %q:\n%s", want, out)
		}
	}
	// Row 2 may or may not be out (the stop does not wait for it; a
	// restart after a backfill publishes it); row 3 must not be.
	for _, m := range itest.ReadTopic(t, topic) {
		after, _ := m.Payload()["after"].(map[string]any)
		if id, _ := after["id"].(float64); id > 2 {
			t.Errorf("a row after the refused DDL was published: %s", jsonString(after))
		}
	}
}
