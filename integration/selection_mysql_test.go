package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestMySQLTableSelectionPatterns: on MariaDB, source.tables takes
// regular expressions over database.table (anchored, case-insensitive)
// and source.exclude_tables leaves tables out: the matching tables are
// snapshotted (a keyless one too, as a listed one is), a table created
// while streaming that matches is captured from its CREATE TABLE in the
// binlog, an excluded one and one of another database are not.
func TestMySQLTableSelectionPatterns(t *testing.T) {
	e := newMyEnv(t, "mysel")
	other := e.otherDB()
	for _, q := range []string{
		"CREATE TABLE order_lines (id INT PRIMARY KEY, v TEXT)",
		"INSERT INTO order_lines VALUES (1, 'a'), (2, 'b')",
		"CREATE TABLE order_notes (v TEXT)",
		"INSERT INTO order_notes VALUES ('n')",
		"CREATE TABLE order_archive (id INT PRIMARY KEY)",
		"INSERT INTO order_archive VALUES (1)",
		"CREATE TABLE customers (id INT PRIMARY KEY)",
		"INSERT INTO customers VALUES (1)",
		"CREATE TABLE " + other + ".order_lines (id INT PRIMARY KEY)",
		"INSERT INTO " + other + ".order_lines VALUES (1)",
	} {
		e.exec(q)
	}
	cfg := e.writeConfig(fmt.Sprintf("  tables: ['%s\\.ORDER_.*']\n  exclude_tables: ['.*\\.order_archive.*']\n", strings.ToUpper(e.db)))
	topic := func(db, table string) string { return e.prefix + "." + db + "." + table }
	p := e.start("run", "--config", cfg)
	p.waitFor(t, 90*time.Second, "the snapshot", func() bool {
		return topicEnd(topic(e.db, "order_lines")) >= 2 && topicEnd(topic(e.db, "order_notes")) >= 1
	})
	e.exec("CREATE TABLE order_late (id INT PRIMARY KEY, v TEXT)")
	e.exec("INSERT INTO order_late VALUES (1, 'x'), (2, 'y')")
	e.exec("CREATE TABLE order_archive_2025 (id INT PRIMARY KEY)")
	e.exec("INSERT INTO order_archive_2025 VALUES (1)")
	e.exec("INSERT INTO order_lines VALUES (3, 'marker')")
	p.waitFor(t, 60*time.Second, "the new table's rows", func() bool {
		return topicEnd(topic(e.db, "order_late")) >= 2 && topicEnd(topic(e.db, "order_lines")) >= 3
	})
	time.Sleep(time.Second)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	for _, tb := range []struct{ db, table string }{
		{e.db, "order_archive"}, {e.db, "order_archive_2025"}, {e.db, "customers"}, {other, "order_lines"},
	} {
		if n := topicEnd(topic(tb.db, tb.table)); n != 0 {
			t.Errorf("%s.%s is not selected but its topic has %d messages", tb.db, tb.table, n)
		}
	}
	if n := topicEnd(topic(e.db, "order_late")); n != 2 {
		t.Errorf("order_late, created while streaming: %d messages, want 2", n)
	}
}

// otherDB creates a second database beside e's, dropped with the test.
func (e *myEnv) otherDB() string {
	e.t.Helper()
	other := e.db + "_x"
	e.exec("CREATE DATABASE " + other)
	e.t.Cleanup(func() { e.my.Execute("DROP DATABASE IF EXISTS " + other) })
	return other
}
