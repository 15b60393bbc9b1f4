package cli_test

import (
	"fmt"
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

// downAtRestart runs a pipeline with a sentinel table through proxy
// (itest.DownAtRestart), the port closed for 6 s at the restart.
func downAtRestart(t *testing.T, e *itest.Env, proxy *itest.CutProxy, exec func(string), sentinel string, c itest.PipelineConfig) {
	exec(itest.SentinelTable)
	itest.DownAtRestart(t, e, proxy, e.WritePipeline(c), 6*time.Second,
		func(n int) { exec(fmt.Sprintf(`INSERT INTO sentinel VALUES (%d)`, n)) },
		func(p *itest.Proc, n int) { itest.AwaitKey(t, p, sentinel, "id", n) })
}
