package integration

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// mariadbAddr is the MariaDB of `make services-up` (root / root).
const mariadbAddr = "127.0.0.1:3306"

// myEnv is one MySQL-source test's world: a database of its own on the
// test MariaDB (or another server: newMyEnvAt), a pipeline name and a
// topic prefix.
type myEnv struct {
	*env
	my   *client.Conn
	addr string // the server's host:port
}

func newMyEnv(t *testing.T, label string) *myEnv {
	skipShort(t)
	return newMyEnvAt(t, label, mariadbAddr)
}

// newMyEnvAt is newMyEnv on the server at addr. Its cleanup connects
// again, as a fault test may have restarted the server.
func newMyEnvAt(t *testing.T, label, addr string) *myEnv {
	id := fmt.Sprintf("%s_%d_%04d", label, os.Getpid()%100000, rand.IntN(10000))
	e := &myEnv{env: &env{t: t, name: id, db: "it_" + id, prefix: "it-" + strings.ReplaceAll(id, "_", "-"), dir: t.TempDir()}, addr: addr}
	var err error
	e.my, err = client.Connect(addr, "root", "root", "")
	if err != nil {
		t.Fatalf("connect to mariadb at %s (is `make services-up` done?): %v", addr, err)
	}
	e.exec("CREATE DATABASE " + e.db)
	e.exec("USE " + e.db)
	t.Cleanup(func() {
		e.my.Close()
		if c, err := client.Connect(addr, "root", "root", ""); err == nil {
			c.Execute("DROP DATABASE IF EXISTS " + e.db)
			c.Close()
		}
	})
	return e
}

func (e *myEnv) exec(sql string) *gomysql.Result {
	e.t.Helper()
	r, err := e.my.Execute(sql)
	if err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return r
}

func (e *myEnv) url() string { return "mysql://root:root@" + e.addr + "/" + e.db }

// writeConfig writes a mysql pipeline config; extra goes into the source section.
func (e *myEnv) writeConfig(extra string) string { return e.writeConfigWith(extra, "") }

// writeConfigWith writes a mysql pipeline config with extra lines in the
// source and destination sections.
func (e *myEnv) writeConfigWith(sourceExtra, destExtra string) string {
	return e.writePipeline(pipelineConfig{typ: "mysql", url: e.url(), source: sourceExtra, destination: destExtra})
}
