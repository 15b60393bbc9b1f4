package itest

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// MariadbAddr is the MariaDB of `make services-up` (root / root).
const MariadbAddr = "127.0.0.1:3306"

// MyEnv is one MySQL-source test's world: a database of its own on the
// test MariaDB (or another server: newMyEnvAt), a pipeline name and a
// topic prefix.
type MyEnv struct {
	*Env
	My   *client.Conn
	addr string // the server's host:port
}

// NewMyEnv is NewEnv on the shared MariaDB: a database of t's own, a
// pipeline name and a topic prefix.
func NewMyEnv(t *testing.T, label string) *MyEnv {
	SkipShort(t)
	return NewMyEnvAt(t, label, MariadbAddr)
}

// NewMyEnvAt is NewMyEnv on the server at addr. Its cleanup connects
// again, as a fault test may have restarted the server.
func NewMyEnvAt(t *testing.T, label, addr string) *MyEnv {
	e := &MyEnv{Env: BareEnv(t, label), addr: addr}
	var err error
	e.My, err = client.Connect(addr, "root", "root", "")
	if err != nil {
		t.Fatalf("connect to mariadb at %s (is `make services-up` done?): %v", addr, err)
	}
	e.Exec("CREATE DATABASE " + e.DB)
	e.Exec("USE " + e.DB)
	t.Cleanup(func() {
		e.My.Close()
		if c, err := client.Connect(addr, "root", "root", ""); err == nil {
			c.Execute("DROP DATABASE IF EXISTS " + e.DB)
			c.Close()
		}
	})
	return e
}

// Exec runs sql on e's database, or fails the test.
func (e *MyEnv) Exec(sql string) *gomysql.Result {
	e.T.Helper()
	r, err := e.My.Execute(sql)
	if err != nil {
		e.T.Fatalf("%s: %v", sql, err)
	}
	return r
}

// URL is the source URL of e's database.
func (e *MyEnv) URL() string { return "mysql://root:root@" + e.addr + "/" + e.DB }

// WriteConfig writes a mysql pipeline config; extra goes into the source section.
func (e *MyEnv) WriteConfig(extra string) string { return e.WriteConfigWith(extra, "") }

// WriteConfigWith writes a mysql pipeline config with extra lines in the
// source and destination sections.
func (e *MyEnv) WriteConfigWith(sourceExtra, destExtra string) string {
	return e.WritePipeline(PipelineConfig{Typ: "mysql", URL: e.URL(), Source: sourceExtra, Destination: destExtra})
}

// Sub is a MyEnv on e's database with a pipeline name and topic prefix of
// its own, for subtest t.
func (e *MyEnv) Sub(t *testing.T, label string) *MyEnv {
	env := *e.Env
	env.T, env.Name, env.Prefix, env.Dir = t, env.Name+"_"+label, env.Prefix+"-"+label, t.TempDir()
	return &MyEnv{Env: &env, My: e.My, addr: e.addr}
}
