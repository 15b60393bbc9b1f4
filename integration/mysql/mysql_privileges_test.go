package mysql_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLLeastPrivilege: a user with SELECT on the captured table by
// column privileges, or through a database pattern (`shop\_%`), captures
// it. information_schema.TABLE_CONSTRAINTS, which listed the tables with
// a primary key, shows neither grant's tables (MariaDB 10.11), so such a
// user captured 0 tables while every check said ok. A user that may
// read no table (SELECT only on a table without a primary key, or
// through a role that is not its default) now fails test-connection and
// run, saying why.
func TestMySQLLeastPrivilege(t *testing.T) {
	e := itest.NewMyEnv(t, "mypriv")
	e.Exec("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
	e.Exec("CREATE TABLE nokey (v INT)")
	e.Exec("INSERT INTO t VALUES (1, 'one')")
	e.Exec("CREATE TABLE tributary_signal (id VARCHAR(64) NOT NULL PRIMARY KEY, mark VARCHAR(128) NOT NULL)")
	tag := strings.TrimPrefix(e.DB, "it_")
	pattern := strings.ReplaceAll(e.DB, "_", `\_`) + "%"
	for _, tc := range []struct{ label, grant string }{
		{"col", "GRANT SELECT (id, v) ON " + e.DB + ".t TO {user}"},
		{"pat", "GRANT SELECT ON `" + pattern + "`.* TO {user}"},
	} {
		t.Run(tc.label, func(t *testing.T) {
			se := e.Sub(t, tc.label)
			cfg := se.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: leastPrivUser(se, tc.label+"_"+tag, tc.grant)})
			if out, code := se.Run("test-connection", "--config", cfg); code != 0 {
				t.Errorf("test-connection exit %d:\n%s", code, out)
			}
			p := se.Start("run", "--config", cfg)
			itest.WaitFor(t, 30*time.Second, "the backfilled row", func() bool {
				if p.Exited() {
					t.Fatalf("run exited: %v\n%s", p.Err, p.Out)
				}
				return itest.TopicEnd(se.Prefix+"."+e.DB+".t") >= 1
			})
			if code := p.Stop(t); code != 0 {
				t.Fatalf("exit %d; output:\n%s", code, p.Out)
			}
		})
	}
	role := "r_" + tag
	e.Exec("CREATE ROLE " + role)
	t.Cleanup(func() { e.My.Execute("DROP ROLE IF EXISTS " + role) })
	e.Exec("GRANT SELECT ON " + e.DB + ".* TO " + role)
	for _, tc := range []struct{ label, grant, why string }{
		// SELECT on a table without a primary key only.
		{"none", "GRANT SELECT ON " + e.DB + ".nokey TO {user}", e.DB + ".nokey has no primary key"},
		// SELECT through a role that is not the user's default role.
		{"role", "GRANT " + role + " TO {user}", "SET DEFAULT ROLE `" + role + "`"},
	} {
		t.Run(tc.label, func(t *testing.T) {
			se := e.Sub(t, tc.label)
			cfg := se.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: leastPrivUser(se, tc.label+"_"+tag, tc.grant)})
			for _, cmd := range []string{"test-connection", "run"} {
				out, code := se.Run(cmd, "--config", cfg)
				if code == 0 {
					t.Errorf("%s exit 0 with nothing to capture:\n%s", cmd, out)
				}
				for _, want := range []string{"nothing to capture", tc.why, "GRANT SELECT ON `" + e.DB + "`.*"} {
					if !strings.Contains(out, want) {
						t.Errorf("%s output lacks %q:\n%s", cmd, want, out)
					}
				}
			}
		})
	}
}

// leastPrivUser creates a MariaDB user with the privileges docs/mysql.md
// lists except SELECT on the tables, which grants add ("{user}" in a
// grant is the user); it is dropped when the test ends. It returns the
// user's source URL.
func leastPrivUser(e *itest.MyEnv, name string, grants ...string) string {
	e.T.Helper()
	user := fmt.Sprintf("'%s'@'%%'", name)
	e.Exec("CREATE USER " + user + " IDENTIFIED BY 'pw'")
	e.T.Cleanup(func() { e.My.Execute("DROP USER IF EXISTS " + user) })
	e.Exec("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO " + user)
	e.Exec(fmt.Sprintf("GRANT SELECT, INSERT, UPDATE ON %s.tributary_signal TO %s", e.DB, user))
	for _, g := range grants {
		e.Exec(strings.ReplaceAll(g, "{user}", user))
	}
	return fmt.Sprintf("mysql://%s:pw@%s/%s", name, itest.MariadbAddr, e.DB)
}
