package integration

import (
	"sort"
	"strings"
	"testing"
	"time"
)

// TestMySQLTablesAppearWhileStreaming: without source.tables, a table
// created while streaming, and one renamed into the database, are
// captured from their first row; a table renamed out of the database
// stops being published. Before the fix, such tables were missed until a
// restart and their rows never published.
func TestMySQLTablesAppearWhileStreaming(t *testing.T) {
	e := newMyEnv(t, "mynewtab")
	other := e.otherDB()
	e.exec("CREATE TABLE a (id INT PRIMARY KEY)")
	e.exec("INSERT INTO a VALUES (1)")
	e.exec("CREATE TABLE " + other + ".c (id INT PRIMARY KEY, v TEXT)")
	cfg := e.writeConfig("")
	topic := func(db, table string) string { return e.prefix + "." + db + "." + table }
	p := e.start("run", "--config", cfg)
	waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(topic(e.db, "a")) >= 1 })

	e.exec("CREATE TABLE b (id INT PRIMARY KEY, v TEXT)")
	e.exec("INSERT INTO b VALUES (1, 'first row'), (2, 'second')")
	e.exec("RENAME TABLE " + other + ".c TO c")
	e.exec("INSERT INTO c VALUES (1, 'after the rename')")
	e.exec("RENAME TABLE a TO " + other + ".a")
	e.exec("INSERT INTO " + other + ".a VALUES (2)")
	e.exec("INSERT INTO b VALUES (3, 'last')") // a marker after everything above
	waitFor(t, 60*time.Second, "the new tables' rows", func() bool {
		if p.exited() {
			t.Fatalf("tributary exited: %v\n%s", p.err, p.out)
		}
		return topicEnd(topic(e.db, "b")) >= 3 && topicEnd(topic(e.db, "c")) >= 1
	})
	time.Sleep(time.Second)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	var ids []string
	for _, m := range readTopic(t, topic(e.db, "b")) {
		ids = append(ids, jsonString(m.payload()["after"].(map[string]any)["id"]))
	}
	sort.Strings(ids) // the topic's partitions interleave keys
	if strings.Join(ids, ",") != "1,2,3" {
		t.Errorf("table b created while streaming: published ids %v, want 1,2,3", ids)
	}
	if n := topicEnd(topic(other, "a")); n != 0 {
		t.Errorf("table renamed out of the database: %d records published", n)
	}
	if n := topicEnd(topic(e.db, "a")); n != 1 {
		t.Errorf("table a after it was renamed away: %d records, want the 1 backfilled", n)
	}
	for _, want := range []string{"captured from its first row", "dropped or renamed away"} {
		if !strings.Contains(p.out.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, p.out)
		}
	}
}

// TestMySQLListedTableDropped: a table in source.tables that is dropped
// while streaming is logged when it happens, and the next start warns and
// runs instead of failing with "source.tables: … not found"; status and
// metrics name it as missing.
func TestMySQLListedTableDropped(t *testing.T) {
	e := newMyEnv(t, "mydropped")
	e.exec("CREATE TABLE keep (id INT PRIMARY KEY)")
	e.exec("CREATE TABLE gone (id INT PRIMARY KEY)")
	e.exec("INSERT INTO keep VALUES (1)")
	cfg := e.writeConfig("  tables: [" + e.db + ".keep, " + e.db + ".gone]\n")
	keep := e.prefix + "." + e.db + ".keep"
	addr := freeAddr(t)
	p := e.start("run", "--config", cfg, "--http-addr", addr)
	waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(keep) >= 1 })
	e.exec("DROP TABLE gone")
	e.exec("INSERT INTO keep VALUES (2)")
	waitFor(t, 60*time.Second, "the row after the drop", func() bool { return topicEnd(keep) >= 2 })
	missingReported(t, e.env, p, cfg, addr, e.db+".gone")
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	if !strings.Contains(p.out.String(), "dropped or renamed away") || !strings.Contains(p.out.String(), e.db+".gone") {
		t.Errorf("the drop of a listed table was not logged:\n%s", p.out)
	}

	p = e.start("run", "--config", cfg)
	e.exec("INSERT INTO keep VALUES (3)")
	waitFor(t, 60*time.Second, "a row after the restart", func() bool {
		if p.exited() {
			t.Fatalf("a restart with a dropped listed table failed: %v\n%s", p.err, p.out)
		}
		return topicEnd(keep) >= 3
	})
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	out := p.out.String()
	if !strings.Contains(out, "WARN") || !strings.Contains(out, "do not exist") || !strings.Contains(out, e.db+".gone") {
		t.Errorf("the restart does not warn about the missing listed table:\n%s", out)
	}
}

// TestMySQLMissingDatabase: a URL naming a database that does not exist
// stops the pipeline at start, as PostgreSQL does, instead of running
// forever with nothing to capture.
func TestMySQLMissingDatabase(t *testing.T) {
	e := newMyEnv(t, "mynodb")
	e.db += "_nope"
	cfg := e.writeConfig("")
	p := e.start("run", "--config", cfg)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		p.kill()
		t.Fatalf("still running after 60 s with a missing database:\n%s", p.out)
	}
	if p.cmd.ProcessState.ExitCode() == 0 {
		t.Fatalf("exit 0 with a missing database:\n%s", p.out)
	}
	// The log is JSON: the quotes around the name are escaped.
	if want := `database \"` + e.db + `\" does not exist`; !strings.Contains(p.out.String(), want) {
		t.Fatalf("the error does not say %s:\n%s", want, p.out)
	}
}
