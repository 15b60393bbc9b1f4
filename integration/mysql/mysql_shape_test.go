package mysql_test

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLRowsKeepTheirShape: rows written before, between and after
// schema changes made while the publisher is stopped, and while it lags
// behind a backlog, are each published with the columns they were written
// under (binlog_row_metadata = FULL), never the table's current shape.
// Before the fix, row 2 came out as {"id":2,"z":"two","a":"twenty"}.
func TestMySQLRowsKeepTheirShape(t *testing.T) {
	e := itest.NewMyEnv(t, "myshape")
	e.Exec("SET GLOBAL binlog_row_metadata = FULL") // as integration/services/mariadb.sh configures it
	createShapeTables(e)
	cfg := e.WriteConfig("")
	topic := func(table string) string { return e.Prefix + "." + e.DB + "." + table }
	topicT, topicU, topicW := topic("t"), topic("u"), topic("w")
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topicT) >= 1 && itest.TopicEnd(topicW) >= 1 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	// While stopped: the scenario, then rename, retype, reorder,
	// one ALTER with several clauses, a table dropped and re-created, a
	// table dropped.
	for _, q := range append(slices.Clone(ddlWhileStopped),
		"INSERT INTO w VALUES (2, 'w2')", // then dropped: its row is still published
		"DROP TABLE w",
	) {
		e.Exec(q)
	}
	p = e.Start("run", "--config", cfg)
	itest.WaitFor(t, 90*time.Second, "the rows written while stopped", func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
		}
		return itest.TopicEnd(topicT) >= 7 && itest.TopicEnd(topicU) >= 2 && itest.TopicEnd(topicW) >= 2
	})

	// While lagging: a backlog, then DDL, with rows on both sides.
	const backlog = 20000
	e.Exec(fmt.Sprintf("INSERT INTO t (id, a) SELECT seq, 'bulk' FROM seq_100_to_%d", 100+backlog-1))
	e.Exec("INSERT INTO t VALUES (8, 'a8', 8)")
	e.Exec("ALTER TABLE t DROP COLUMN a, ADD COLUMN d DATE AFTER id")
	e.Exec("INSERT INTO t VALUES (9, '2024-01-02', 9)")
	itest.WaitFor(t, 180*time.Second, "the backlog", func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
		}
		return itest.TopicEnd(topicT) >= 9+backlog
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	want := with(ddlWhileStoppedRows, map[string]string{
		"t8": `{"a":"a8","c":8,"id":8}`,
		"t9": `{"c":9,"d":19724,"id":9}`,
		"w2": `{"id":2,"v":"w2"}`,
	})
	order := with(ddlWhileStoppedOrder, map[string][]string{ // the schema's after fields, in column order
		"t9": {"id", "d", "c"},
	})
	checkRowShapes(t, topic, []string{"t", "u", "w"}, want, order, "a", 3, backlog)
}

// checkRowShapes reads the topics of tables and checks the rows that the
// shape tests wrote: each row below id 100 was published as want has it
// (keyed table and id: "t3"), with the schema's after fields in the order
// order gives where it names the row, and the backlog (ids from 100) is
// backlog rows, each with bulkCol 'bulk' and width columns. Neither test
// deletes a row (and TRUNCATE publishes nothing), so a message without an
// after row is an error.
func checkRowShapes(t *testing.T, topic func(table string) string, tables []string, want map[string]string, order map[string][]string, bulkCol string, width, backlog int) {
	t.Helper()
	got := map[string]string{}
	bulk := 0
	for _, table := range tables {
		for _, m := range itest.ReadTopic(t, topic(table)) {
			after, _ := m.Payload()["after"].(map[string]any)
			if after == nil {
				t.Errorf("%s: a message without an after row: %v", table, m.Payload())
				continue
			}
			id := int(after["id"].(float64))
			if id >= 100 {
				if after[bulkCol] != "bulk" || len(after) != width {
					t.Errorf("backlog row %d: %s", id, jsonString(after))
				}
				bulk++
				continue
			}
			k := table + fmt.Sprint(id)
			got[k] = jsonString(after)
			if cols, ok := order[k]; ok {
				if f := afterFields(m.Value); strings.Join(f, ",") != strings.Join(cols, ",") {
					t.Errorf("%s: schema fields %v, want %v", k, f, cols)
				}
			}
		}
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got[k] != want[k] {
			t.Errorf("row %s: got %s, want %s", k, got[k], want[k])
		}
	}
	if bulk != backlog {
		t.Errorf("%d backlog rows published, want %d", bulk, backlog)
	}
}

// afterFields lists the field names of the value schema's "after" struct.
func afterFields(value map[string]any) []string {
	var names []string
	for _, c := range itest.AfterColumns(value) {
		names = append(names, fmt.Sprint(c["field"]))
	}
	return names
}

// ddlWhileStopped is the scenario and what follows it (rename,
// retype, reorder, one ALTER with several clauses, a table dropped and
// re-created), made while the pipeline is stopped; the FULL-metadata test
// here and the schema-history test (MINIMAL) both run it and add their own.
var ddlWhileStopped = []string{
	"INSERT INTO t VALUES (2, 'two', 'twenty')",
	"ALTER TABLE t DROP COLUMN b",
	"ALTER TABLE t ADD COLUMN z VARCHAR(10) AFTER id",
	"INSERT INTO t VALUES (3, '33', 'a3')",
	"ALTER TABLE t CHANGE COLUMN a a2 VARCHAR(10)",
	"INSERT INTO t VALUES (4, '44', 'a4')",
	"ALTER TABLE t MODIFY COLUMN z INT",
	"INSERT INTO t VALUES (5, 55, 'a5')",
	"ALTER TABLE t MODIFY COLUMN a2 VARCHAR(10) AFTER id",
	"INSERT INTO t VALUES (6, 'a6', 66)",
	"ALTER TABLE t ADD COLUMN c BIGINT UNSIGNED NOT NULL DEFAULT 7, DROP COLUMN z, RENAME COLUMN a2 TO a",
	"INSERT INTO t (id, a) VALUES (7, 'a7')",
	"INSERT INTO u VALUES (1, 'old u')",
	"DROP TABLE u",
	"CREATE TABLE u (id INT PRIMARY KEY, n INT, v TEXT)",
	"INSERT INTO u VALUES (2, 22, 'new u')",
}

// createShapeTables makes the tables t, u and w that ddlWhileStopped
// changes, with the rows t1 and w1 written before it.
func createShapeTables(e *itest.MyEnv) {
	e.T.Helper()
	e.Exec("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10), b VARCHAR(10))")
	e.Exec("CREATE TABLE u (id INT PRIMARY KEY, v VARCHAR(10))")
	e.Exec("CREATE TABLE w (id INT PRIMARY KEY, v VARCHAR(10))")
	e.Exec("INSERT INTO t VALUES (1, 'one', 'ten')")
	e.Exec("INSERT INTO w VALUES (1, 'w1')")
}

// ddlWhileStoppedRows is how each row written by ddlWhileStopped, and
// the rows t1 and w1 before it, must be published (keyed table and id);
// ddlWhileStoppedOrder is the schema's after fields of some, in column
// order.
var (
	ddlWhileStoppedRows = map[string]string{
		"t1": `{"a":"one","b":"ten","id":1}`,
		"t2": `{"a":"two","b":"twenty","id":2}`,
		"t3": `{"a":"a3","id":3,"z":"33"}`,
		"t4": `{"a2":"a4","id":4,"z":"44"}`,
		"t5": `{"a2":"a5","id":5,"z":55}`,
		"t6": `{"a2":"a6","id":6,"z":66}`,
		"t7": `{"a":"a7","c":7,"id":7}`,
		"u1": `{"id":1,"v":"old u"}`,
		"u2": `{"id":2,"n":22,"v":"new u"}`,
		"w1": `{"id":1,"v":"w1"}`,
	}
	ddlWhileStoppedOrder = map[string][]string{
		"t2": {"id", "a", "b"}, "t3": {"id", "z", "a"}, "t6": {"id", "a2", "z"}, "t7": {"id", "a", "c"}, "u2": {"id", "n", "v"},
	}
)

// with is base and more in one new map.
func with[V any](base, more map[string]V) map[string]V {
	m := maps.Clone(base)
	maps.Copy(m, more)
	return m
}

// TestMySQLLaggingStreamKeepsDefaults: a stream that is behind two DDL
// statements re-reads the catalog at the first and finds the second's
// shape there. The rows between the two are in a shape the catalog no
// longer has; their schema keeps the defaults the columns had (s SMALLINT
// DEFAULT -3 until it became INT without one), as Debezium's schema
// history has them. Before the fix s lost its default in those rows, which
// made TestDebeziumFidelityMySQL fail whenever the stream lagged in CI.
func TestMySQLLaggingStreamKeepsDefaults(t *testing.T) {
	e := itest.NewMyEnv(t, "mylagdflt")
	e.Exec("CREATE TABLE d (id INT PRIMARY KEY, s SMALLINT DEFAULT -3, a VARCHAR(10))")
	e.Exec("INSERT INTO d VALUES (1, 1, 'one')")
	topic := e.Prefix + "." + e.DB + ".d"
	p := e.Start("run", "--config", e.WriteConfig(""))
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 1 })

	// Frozen, the stream lags behind all of this; thawed, it meets the
	// first ALTER with the second already in the catalog.
	p.Freeze(t)
	for _, q := range []string{
		"INSERT INTO d VALUES (2, 2, 'two')",
		"ALTER TABLE d ADD COLUMN n INT DEFAULT 9",
		"INSERT INTO d VALUES (3, 3, 'three', 30)",
		"ALTER TABLE d MODIFY COLUMN s INT",
		"INSERT INTO d VALUES (4, 4, 'four', 40)",
	} {
		e.Exec(q)
	}
	if err := p.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	itest.WaitOrDump(t, p, 60*time.Second, "the rows written while frozen", func() bool { return itest.TopicEnd(topic) >= 4 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	want := map[int]map[string]string{ // id → column → its schema default ("" for none)
		2: {"s": "-3"},
		3: {"s": "-3", "n": "9"},
		4: {"s": "", "n": "9"},
	}
	for _, m := range itest.ReadTopic(t, topic) {
		after, _ := m.Payload()["after"].(map[string]any)
		id := int(after["id"].(float64))
		for col, dflt := range want[id] {
			if got := afterDefault(m.Value, col); got != dflt {
				t.Errorf("row %d: schema default of %s is %q, want %q", id, col, got, dflt)
			}
		}
		delete(want, id)
	}
	if len(want) > 0 {
		t.Errorf("rows never published: %v", want)
	}
}

// afterDefault is the schema default of column col in the value schema's
// "after" struct, as JSON text ("" when it has none).
func afterDefault(value map[string]any, col string) string {
	c := itest.AfterColumn(value, col)
	if c == nil {
		return "no column " + col
	}
	if d, ok := c["default"]; ok {
		return jsonString(d)
	}
	return ""
}
