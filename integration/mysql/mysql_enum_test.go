package mysql_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// enumColumns are ENUM and SET columns whose members hold what a naive
// list split or unquote gets wrong: commas (ENUM only: SET members cannot
// hold one), quotes (doubled and backslash-escaped), a backslash,
// parentheses, spaces (a trailing one, which the server drops), double
// quotes, non-ASCII, upper case.
const enumColumns = `e ENUM('a,b','C','d'), q ENUM('it''s','q\'x','b\\s','(p)',' sp ','ü','x y','"dq"', ','), s SET('x y','z','it''s','(p)','ü','b\\s','"dq"')`

// streamEnumRows makes the changes streamed: every member at least once.
func streamEnumRows(l *changeLog) {
	l.Insert(1, `INSERT INTO t (id, e, q, s) VALUES (1, 'a,b', 'it''s', 'x y,it''s')`)
	l.Insert(2, `INSERT INTO t (id, e, q, s) VALUES (2, 'C', 'q''x', '(p),ü,b\\s')`)
	l.Insert(3, `INSERT INTO t (id, e, q, s) VALUES (3, 'd', 'b\\s', '"dq",z')`)
	l.Insert(4, `INSERT INTO t (id, e, q, s) VALUES (4, 'a,b', '(p)', '')`)
	l.Insert(5, `INSERT INTO t (id, e, q, s) VALUES (5, 'C', ' sp', 'x y,z,it''s,(p),ü,b\\s,"dq"')`)
	l.Insert(6, `INSERT INTO t (id, e, q, s) VALUES (6, NULL, 'ü', NULL)`)
	l.Insert(7, `INSERT INTO t (id, e, q, s) VALUES (7, 'a,b', 'x y', 'ü')`)
	l.Insert(8, `INSERT INTO t (id, e, q, s) VALUES (8, 'a,b', '"dq"', 'z')`)
	l.Insert(9, `INSERT INTO t (id, e, q, s) VALUES (9, 'd', ',', 'z')`)
	l.Update(2, `UPDATE t SET e = 'a,b', q = ',' WHERE id = 2`)
	l.Update(3, `UPDATE t SET e = 'C', q = 'it''s', s = 'it''s' WHERE id = 3`)
	l.Delete(1)
	l.Delete(5)
}

// TestMySQLEnumMembers: ENUM and SET values stream as the member the row
// holds, whatever punctuation it has; ENUM('a,b','c','d') holding 'a,b'
// streamed "a" (the member list was joined and re-split on ','). Once
// with the members from the binlog's table map (binlog_row_metadata =
// FULL, the shared server), once from the schema history, which parses
// them out of the ALTER TABLE in the binlog (MINIMAL), once from
// information_schema's COLUMN_TYPE (MINIMAL, no DDL). The schema's
// "allowed" parameter is what Debezium writes (checked side by side in
// TestDebeziumFidelityMySQL): the members joined by ',', a comma in one
// escaped as \, and a backslash as \\.
func TestMySQLEnumMembers(t *testing.T) {
	t.Run("table map", func(t *testing.T) {
		e := itest.NewMyEnv(t, "myenum")
		e.Exec("CREATE TABLE t (id INT PRIMARY KEY, " + enumColumns + ")")
		enumStream(t, e, e.WriteConfig(""), nil)
	})
	t.Run("catalog", func(t *testing.T) {
		// No names in the binlog and no DDL after the start: the shape
		// read from information_schema decodes the rows.
		e := minimalMyEnv(t, "myenumc")
		e.Exec("CREATE TABLE t (id INT PRIMARY KEY, " + enumColumns + ")")
		enumStream(t, e, e.WriteConfig(""), nil)
	})
	t.Run("schema history", func(t *testing.T) {
		e := minimalMyEnv(t, "myenumh")
		e.Exec("CREATE TABLE t (id INT PRIMARY KEY)")
		enumStream(t, e, e.WriteConfig(""), func() {
			e.Exec("ALTER TABLE t ADD COLUMN " + strings.ReplaceAll(enumColumns, "), ", "), ADD COLUMN "))
		})
	})
}

func enumStream(t *testing.T, e *itest.MyEnv, cfg string, ddl func()) {
	topic := e.Prefix + "." + e.DB + ".t"
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the stream to start", func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
		}
		return strings.Contains(p.Out.String(), "streaming binlog")
	})
	if ddl != nil {
		ddl()
	}
	l := newChangeLog(e, "t", "e", "q", "s")
	streamEnumRows(l)
	l.StopAndCheck(t, p, topic)
	msgs := itest.ReadTopic(t, topic)
	schema := jsonString(msgs[0].Value["schema"])
	for _, want := range []string{
		`"parameters":{"allowed":"a\\,b,C,d"}`,
		`"parameters":{"allowed":"it's,q'x,b\\\\s,(p), sp,ü,x y,\"dq\",\\,"}`,
		`"parameters":{"allowed":"x y,z,it's,(p),ü,b\\\\s,\"dq\""}`,
	} {
		if !strings.Contains(schema, want) {
			t.Errorf("schema lacks %s:\n%s", want, schema)
		}
	}
}
