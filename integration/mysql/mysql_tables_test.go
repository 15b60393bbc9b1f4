package mysql_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLTablesAppearWhileStreaming: without source.tables, a table
// created while streaming, and one renamed into the database, are
// captured from their first row; a table renamed out of the database
// stops being published. Before the fix, such tables were missed until a
// restart and their rows never published.
func TestMySQLTablesAppearWhileStreaming(t *testing.T) {
	e := itest.NewMyEnv(t, "mynewtab")
	other := otherDB(e)
	e.Exec("CREATE TABLE a (id INT PRIMARY KEY)")
	e.Exec("INSERT INTO a VALUES (1)")
	e.Exec("CREATE TABLE " + other + ".c (id INT PRIMARY KEY, v TEXT)")
	cfg := e.WriteConfig("")
	topic := func(db, table string) string { return e.Prefix + "." + db + "." + table }
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic(e.DB, "a")) >= 1 })

	e.Exec("CREATE TABLE b (id INT PRIMARY KEY, v TEXT)")
	e.Exec("INSERT INTO b VALUES (1, 'first row'), (2, 'second')")
	e.Exec("RENAME TABLE " + other + ".c TO c")
	e.Exec("INSERT INTO c VALUES (1, 'after the rename')")
	e.Exec("RENAME TABLE a TO " + other + ".a")
	e.Exec("INSERT INTO " + other + ".a VALUES (2)")
	e.Exec("INSERT INTO b VALUES (3, 'last')") // a marker after everything above
	itest.WaitFor(t, 60*time.Second, "the new tables' rows", func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
		}
		return itest.TopicEnd(topic(e.DB, "b")) >= 3 && itest.TopicEnd(topic(e.DB, "c")) >= 1
	})
	time.Sleep(time.Second)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	var ids []string
	for _, m := range itest.ReadTopic(t, topic(e.DB, "b")) {
		ids = append(ids, jsonString(m.Payload()["after"].(map[string]any)["id"]))
	}
	sort.Strings(ids) // the topic's partitions interleave keys
	if strings.Join(ids, ",") != "1,2,3" {
		t.Errorf("table b created while streaming: published ids %v, want 1,2,3", ids)
	}
	if n := itest.TopicEnd(topic(other, "a")); n != 0 {
		t.Errorf("table renamed out of the database: %d records published", n)
	}
	if n := itest.TopicEnd(topic(e.DB, "a")); n != 1 {
		t.Errorf("table a after it was renamed away: %d records, want the 1 backfilled", n)
	}
	for _, want := range []string{"captured from its first row", "dropped or renamed away"} {
		if !strings.Contains(p.Out.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, p.Out)
		}
	}
}

// TestMySQLListedTableDropped: a table in source.tables that is dropped
// while streaming is logged when it happens, and the next start warns and
// runs instead of failing with "source.tables: … not found"; status and
// metrics name it as missing.
func TestMySQLListedTableDropped(t *testing.T) {
	e := itest.NewMyEnv(t, "mydropped")
	e.Exec("CREATE TABLE keep (id INT PRIMARY KEY)")
	e.Exec("CREATE TABLE gone (id INT PRIMARY KEY)")
	e.Exec("INSERT INTO keep VALUES (1)")
	cfg := e.WriteConfig("  tables: [" + e.DB + ".keep, " + e.DB + ".gone]\n")
	keep := e.Prefix + "." + e.DB + ".keep"
	addr := itest.FreeAddr(t)
	p := e.Start("run", "--config", cfg, "--http-addr", addr)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(keep) >= 1 })
	e.Exec("DROP TABLE gone")
	e.Exec("INSERT INTO keep VALUES (2)")
	itest.WaitFor(t, 60*time.Second, "the row after the drop", func() bool { return itest.TopicEnd(keep) >= 2 })
	itest.MissingReported(t, e.Env, p, cfg, addr, e.DB+".gone")
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	if !strings.Contains(p.Out.String(), "dropped or renamed away") || !strings.Contains(p.Out.String(), e.DB+".gone") {
		t.Errorf("the drop of a listed table was not logged:\n%s", p.Out)
	}

	p = e.Start("run", "--config", cfg)
	e.Exec("INSERT INTO keep VALUES (3)")
	itest.WaitFor(t, 60*time.Second, "a row after the restart", func() bool {
		if p.Exited() {
			t.Fatalf("a restart with a dropped listed table failed: %v\n%s", p.Err, p.Out)
		}
		return itest.TopicEnd(keep) >= 3
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	out := p.Out.String()
	if !strings.Contains(out, "WARN") || !strings.Contains(out, "do not exist") || !strings.Contains(out, e.DB+".gone") {
		t.Errorf("the restart does not warn about the missing listed table:\n%s", out)
	}
}

// TestMySQLMissingDatabase: a URL naming a database that does not exist
// stops the pipeline at start, as PostgreSQL does, instead of running
// forever with nothing to capture.
func TestMySQLMissingDatabase(t *testing.T) {
	e := itest.NewMyEnv(t, "mynodb")
	e.DB += "_nope"
	cfg := e.WriteConfig("")
	p := e.Start("run", "--config", cfg)
	select {
	case <-p.Done:
	case <-time.After(60 * time.Second):
		p.Kill()
		t.Fatalf("still running after 60 s with a missing database:\n%s", p.Out)
	}
	if p.Cmd.ProcessState.ExitCode() == 0 {
		t.Fatalf("exit 0 with a missing database:\n%s", p.Out)
	}
	// The log is JSON: the quotes around the name are escaped.
	if want := `database \"` + e.DB + `\" does not exist`; !strings.Contains(p.Out.String(), want) {
		t.Fatalf("the error does not say %s:\n%s", want, p.Out)
	}
}
