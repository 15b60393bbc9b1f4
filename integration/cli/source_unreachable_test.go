package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

func TestPostgresNeverReachedFailsStart(t *testing.T) {
	e := itest.NewEnv(t, "pgunreach")
	addr := itest.FreeAddr(t)
	itest.NeverReached(t, e, itest.PipelineConfig{Typ: "postgres", URL: "postgres://postgres:s3cret-pw@" + addr + "/" + e.DB}, addr)
}

func TestMySQLNeverReachedFailsStart(t *testing.T) {
	e := itest.NewMyEnv(t, "myunreach")
	addr := itest.FreeAddr(t)
	itest.NeverReached(t, e.Env, itest.PipelineConfig{Typ: "mysql", URL: "mysql://root:s3cret-pw@" + addr + "/" + e.DB}, addr)
}

// A task restarting with a checkpoint (an ECS task replaced after a
// crash) while its database is down for a few seconds keeps today's
// reconnect behaviour: it retries, and once the port answers again it
// publishes what changed meanwhile; so does a process that connected and
// then loses its database for a few seconds. The database is reached
// through a proxy whose port the test closes (connection refused, every
// connection cut) and opens again.
func TestPostgresDownAtRestartRecovers(t *testing.T) {
	e := itest.NewEnv(t, "pgdownstart")
	proxy := itest.NewCutProxy(t, "127.0.0.1:5432")
	downAtRestart(t, e, proxy, func(sql string) { e.Exec(sql) }, e.Prefix+".public.sentinel",
		itest.PipelineConfig{Typ: "postgres", URL: "postgres://postgres:postgres@" + proxy.Addr + "/" + e.DB})
}

func TestMySQLDownAtRestartRecovers(t *testing.T) {
	e := itest.NewMyEnv(t, "mydownstart")
	proxy := itest.NewCutProxy(t, itest.MariadbAddr)
	downAtRestart(t, e.Env, proxy, func(sql string) { e.Exec(sql) }, e.Prefix+"."+e.DB+".sentinel",
		itest.PipelineConfig{Typ: "mysql", URL: "mysql://root:root@" + proxy.Addr + "/" + e.DB})
}

// downAtRestart runs a pipeline through proxy: once to a checkpoint, then
// again with the port closed for 6 s, then through a 3 s cut.
func downAtRestart(t *testing.T, e *itest.Env, proxy *itest.CutProxy, exec func(string), sentinel string, c itest.PipelineConfig) {
	exec(itest.SentinelTable)
	cfg := e.WritePipeline(c)
	p := e.Start("run", "--config", cfg)
	exec(`INSERT INTO sentinel VALUES (1)`)
	itest.AwaitKey(t, p, sentinel, "id", 1)
	time.Sleep(1500 * time.Millisecond) // a checkpoint
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}

	proxy.Cut()
	p = e.Start("run", "--config", cfg)
	time.Sleep(6 * time.Second)
	if p.Exited() {
		t.Fatalf("a restart with a checkpoint gave up while the database was down for 6 s; output:\n%s", p.Out)
	}
	exec(`INSERT INTO sentinel VALUES (2)`) // the database itself is up: only the port is closed
	proxy.Mend()
	itest.AwaitKey(t, p, sentinel, "id", 2)

	// Down for a few seconds after this process connected: an outage too.
	proxy.Cut()
	time.Sleep(3 * time.Second)
	exec(`INSERT INTO sentinel VALUES (3)`)
	proxy.Mend()
	itest.AwaitKey(t, p, sentinel, "id", 3)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	if !strings.Contains(p.Out.String(), "reconnecting") {
		t.Errorf("no reconnect was logged:\n%s", p.Out)
	}
}
