package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// leastPrivUser creates a MariaDB user with the privileges
// docs/mysql.md lists except SELECT on the tables, which grants add; it
// is dropped when the test ends.
func (e *myEnv) leastPrivUser(name string, grants ...string) string {
	e.t.Helper()
	user := fmt.Sprintf("'%s'@'%%'", name)
	e.exec("CREATE USER " + user + " IDENTIFIED BY 'pw'")
	e.t.Cleanup(func() { e.my.Execute("DROP USER IF EXISTS " + user) })
	e.exec("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO " + user)
	e.exec(fmt.Sprintf("GRANT SELECT, INSERT, UPDATE ON %s.tributary_signal TO %s", e.db, user))
	for _, g := range grants {
		e.exec(strings.ReplaceAll(g, "{user}", user))
	}
	return fmt.Sprintf("mysql://%s:pw@%s/%s", name, mariadbAddr, e.db)
}

// TestMySQLLeastPrivilege: a user with SELECT on the captured table by
// column privileges, or through a database pattern (`shop\_%`), captures
// it. information_schema.TABLE_CONSTRAINTS, which listed the tables with
// a primary key, shows neither grant's tables (MariaDB 10.11), so such a
// user captured 0 tables while every check said ok. A user that may
// read no table (SELECT only on a table without a primary key, or
// through a role that is not its default) now fails test-connection and
// run, saying why.
func TestMySQLLeastPrivilege(t *testing.T) {
	e := newMyEnv(t, "mypriv")
	e.exec("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
	e.exec("CREATE TABLE nokey (v INT)")
	e.exec("INSERT INTO t VALUES (1, 'one')")
	e.exec("CREATE TABLE tributary_signal (id VARCHAR(64) NOT NULL PRIMARY KEY, mark VARCHAR(128) NOT NULL)")
	tag := strings.TrimPrefix(e.db, "it_")
	pattern := strings.ReplaceAll(e.db, "_", `\_`) + "%"
	for _, tc := range []struct{ label, grant string }{
		{"col", "GRANT SELECT (id, v) ON " + e.db + ".t TO {user}"},
		{"pat", "GRANT SELECT ON `" + pattern + "`.* TO {user}"},
	} {
		t.Run(tc.label, func(t *testing.T) {
			se := e.sub(t, tc.label)
			cfg := se.writePipeline(pipelineConfig{typ: "mysql", url: se.leastPrivUser(tc.label+"_"+tag, tc.grant)})
			if out, code := se.run("test-connection", "--config", cfg); code != 0 {
				t.Errorf("test-connection exit %d:\n%s", code, out)
			}
			p := se.start("run", "--config", cfg)
			waitFor(t, 30*time.Second, "the backfilled row", func() bool {
				if p.exited() {
					t.Fatalf("run exited: %v\n%s", p.err, p.out)
				}
				return topicEnd(se.prefix+"."+e.db+".t") >= 1
			})
			if code := p.stop(t); code != 0 {
				t.Fatalf("exit %d; output:\n%s", code, p.out)
			}
		})
	}
	role := "r_" + tag
	e.exec("CREATE ROLE " + role)
	t.Cleanup(func() { e.my.Execute("DROP ROLE IF EXISTS " + role) })
	e.exec("GRANT SELECT ON " + e.db + ".* TO " + role)
	for _, tc := range []struct{ label, grant, why string }{
		// SELECT on a table without a primary key only.
		{"none", "GRANT SELECT ON " + e.db + ".nokey TO {user}", e.db + ".nokey has no primary key"},
		// SELECT through a role that is not the user's default role.
		{"role", "GRANT " + role + " TO {user}", "SET DEFAULT ROLE `" + role + "`"},
	} {
		t.Run(tc.label, func(t *testing.T) {
			se := e.sub(t, tc.label)
			cfg := se.writePipeline(pipelineConfig{typ: "mysql", url: se.leastPrivUser(tc.label+"_"+tag, tc.grant)})
			for _, cmd := range []string{"test-connection", "run"} {
				out, code := se.run(cmd, "--config", cfg)
				if code == 0 {
					t.Errorf("%s exit 0 with nothing to capture:\n%s", cmd, out)
				}
				for _, want := range []string{"nothing to capture", tc.why, "GRANT SELECT ON `" + e.db + "`.*"} {
					if !strings.Contains(out, want) {
						t.Errorf("%s output lacks %q:\n%s", cmd, want, out)
					}
				}
			}
		})
	}
}

// sub is a myEnv on e's database with a pipeline name and topic prefix of
// its own, for subtest t.
func (e *myEnv) sub(t *testing.T, label string) *myEnv {
	env := *e.env
	env.t, env.name, env.prefix, env.dir = t, env.name+"_"+label, env.prefix+"-"+label, t.TempDir()
	return &myEnv{env: &env, my: e.my, addr: e.addr}
}

// run runs tributary to its end (at most 90 s) and returns its output
// and exit code.
func (e *env) run(args ...string) (string, int) {
	e.t.Helper()
	p := e.start(args...)
	select {
	case <-p.done:
	case <-time.After(90 * time.Second):
		p.kill()
		e.t.Fatalf("%v still running after 90 s:\n%s", args, p.out)
	}
	return p.out.String(), p.cmd.ProcessState.ExitCode()
}
