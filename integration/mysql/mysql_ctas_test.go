package mysql_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// ctasStatement is a CREATE TABLE … SELECT, which MariaDB with
// binlog_format = ROW logs as one GTID group that is not standalone: the
// CREATE (with the table's full definition), the rows, the commit.
const ctasStatement = "CREATE TABLE t2 (PRIMARY KEY (id)) SELECT id, v, id * 10 AS n FROM t1"

// ctasStart makes t1 with three rows and starts capturing every table of
// the database (no source.tables), once t1 is backfilled.
func ctasStart(t *testing.T, e *itest.MyEnv, cfg string) *itest.Proc {
	e.Exec("CREATE TABLE t1 (id INT PRIMARY KEY, v VARCHAR(10))")
	e.Exec("INSERT INTO t1 VALUES (1, 'one'), (2, 'two'), (3, 'three')")
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
		}
		return itest.TopicEnd(e.Prefix+"."+e.DB+".t1") >= 3
	})
	return p
}

// TestMySQLCreateTableSelect: MariaDB logs the CREATE of a CREATE TABLE
// … SELECT with the table's full definition, inside the group, before
// the rows. While every table is captured (no source.tables) the new
// table's rows are published as c events under its shape, and a later
// change of it streams too: once with the shape from the binlog's table
// map (binlog_row_metadata = FULL), once from the schema history
// (MINIMAL). The history skipped the CREATE (a statement inside an open
// transaction), so it never learnt of t2, whose rows and later changes
// were dropped without a word.
func TestMySQLCreateTableSelect(t *testing.T) {
	for _, minimal := range []bool{false, true} {
		name := map[bool]string{false: "full", true: "minimal"}[minimal]
		t.Run(name, func(t *testing.T) {
			var e *itest.MyEnv
			var cfg string
			if minimal {
				e = minimalMyEnv(t, "myctasm")
				cfg = e.WriteConfig("")
			} else {
				e = itest.NewMyEnv(t, "myctas")
				cfg = e.WriteConfig("")
			}
			p := ctasStart(t, e, cfg)
			topic := e.Prefix + "." + e.DB + ".t2"
			e.Exec(ctasStatement)
			e.Exec("UPDATE t2 SET v = 'changed' WHERE id = 2")
			itest.WaitFor(t, 30*time.Second, "t2's rows", func() bool {
				if p.Exited() {
					t.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
				}
				return itest.TopicEnd(topic) >= 4
			})
			if code := p.Stop(t); code != 0 {
				t.Fatalf("exit %d; output:\n%s", code, p.Out)
			}
			var got []string
			for _, m := range itest.ReadTopic(t, topic) {
				pl := m.Payload()
				got = append(got, pl["op"].(string)+jsonString(pl["after"]))
			}
			sort.Strings(got)
			want := []string{`c{"id":1,"n":10,"v":"one"}`, `c{"id":2,"n":20,"v":"two"}`, `c{"id":3,"n":30,"v":"three"}`, `u{"id":2,"n":20,"v":"changed"}`}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("t2 published\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
