package mysql_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLTableSelectionPatterns: on MariaDB, source.tables takes
// regular expressions over database.table (anchored, case-insensitive)
// and source.exclude_tables leaves tables out: the matching tables are
// snapshotted (a keyless one too, as a listed one is), a table created
// while streaming that matches is captured from its CREATE TABLE in the
// binlog, an excluded one and one of another database are not.
func TestMySQLTableSelectionPatterns(t *testing.T) {
	e := itest.NewMyEnv(t, "mysel")
	other := otherDB(e)
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
		e.Exec(q)
	}
	cfg := e.WriteConfig(fmt.Sprintf("  tables: ['%s\\.ORDER_.*']\n  exclude_tables: ['.*\\.order_archive.*']\n", strings.ToUpper(e.DB)))
	topic := func(db, table string) string { return e.Prefix + "." + db + "." + table }
	p := e.Start("run", "--config", cfg)
	p.WaitFor(t, 90*time.Second, "the snapshot", func() bool {
		return itest.TopicEnd(topic(e.DB, "order_lines")) >= 2 && itest.TopicEnd(topic(e.DB, "order_notes")) >= 1
	})
	e.Exec("CREATE TABLE order_late (id INT PRIMARY KEY, v TEXT)")
	e.Exec("INSERT INTO order_late VALUES (1, 'x'), (2, 'y')")
	e.Exec("CREATE TABLE order_archive_2025 (id INT PRIMARY KEY)")
	e.Exec("INSERT INTO order_archive_2025 VALUES (1)")
	e.Exec("INSERT INTO order_lines VALUES (3, 'marker')")
	p.WaitFor(t, 60*time.Second, "the new table's rows", func() bool {
		return itest.TopicEnd(topic(e.DB, "order_late")) >= 2 && itest.TopicEnd(topic(e.DB, "order_lines")) >= 3
	})
	time.Sleep(time.Second)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	for _, tb := range []struct{ db, table string }{
		{e.DB, "order_archive"}, {e.DB, "order_archive_2025"}, {e.DB, "customers"}, {other, "order_lines"},
	} {
		if n := itest.TopicEnd(topic(tb.db, tb.table)); n != 0 {
			t.Errorf("%s.%s is not selected but its topic has %d messages", tb.db, tb.table, n)
		}
	}
	if n := itest.TopicEnd(topic(e.DB, "order_late")); n != 2 {
		t.Errorf("order_late, created while streaming: %d messages, want 2", n)
	}
}

// otherDB creates a second database beside e's, dropped with the test.
func otherDB(e *itest.MyEnv) string {
	e.T.Helper()
	other := e.DB + "_x"
	e.Exec("CREATE DATABASE " + other)
	e.T.Cleanup(func() { e.My.Execute("DROP DATABASE IF EXISTS " + other) })
	return other
}
