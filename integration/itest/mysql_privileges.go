package itest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// LeastPrivUser creates a MariaDB user with the privileges
// docs/mysql.md lists except SELECT on the tables, which grants add; it
// is dropped when the test ends.
func (e *MyEnv) LeastPrivUser(name string, grants ...string) string {
	e.T.Helper()
	user := fmt.Sprintf("'%s'@'%%'", name)
	e.Exec("CREATE USER " + user + " IDENTIFIED BY 'pw'")
	e.T.Cleanup(func() { e.My.Execute("DROP USER IF EXISTS " + user) })
	e.Exec("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO " + user)
	e.Exec(fmt.Sprintf("GRANT SELECT, INSERT, UPDATE ON %s.tributary_signal TO %s", e.DB, user))
	for _, g := range grants {
		e.Exec(strings.ReplaceAll(g, "{user}", user))
	}
	return fmt.Sprintf("mysql://%s:pw@%s/%s", name, MariadbAddr, e.DB)
}

// Sub is a myEnv on e's database with a pipeline name and topic prefix of
// its own, for subtest t.
func (e *MyEnv) Sub(t *testing.T, label string) *MyEnv {
	env := *e.Env
	env.T, env.Name, env.Prefix, env.Dir = t, env.Name+"_"+label, env.Prefix+"-"+label, t.TempDir()
	return &MyEnv{Env: &env, My: e.My, addr: e.addr}
}

// Run runs tributary to its end (at most 90 s) and returns its output
// and exit code.
func (e *Env) Run(args ...string) (string, int) {
	e.T.Helper()
	p := e.Start(args...)
	select {
	case <-p.Done:
	case <-time.After(90 * time.Second):
		p.Kill()
		e.T.Fatalf("%v still running after 90 s:\n%s", args, p.Out)
	}
	return p.Out.String(), p.Cmd.ProcessState.ExitCode()
}
