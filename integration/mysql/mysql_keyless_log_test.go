package mysql_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLKeylessTableIsLogged: without source.tables, a table without a
// primary key is not captured, and the log says so and how to capture it,
// at start and when one is created later; listed, it is captured, and the
// log says that too.
func TestMySQLKeylessTableIsLogged(t *testing.T) {
	e := itest.NewMyEnv(t, "mykeylesslog")
	e.Exec("CREATE TABLE items (id INT PRIMARY KEY)")
	e.Exec("CREATE TABLE events (note VARCHAR(10))")
	p := e.Start("run", "--config", e.WriteConfig(""))
	skipped := func(table string) bool {
		for _, l := range itest.LogLines(p.Out.String(), "tables without a primary key are not captured; list them in source.tables to capture them (with null message keys)") {
			if strings.Contains(l["tables"].(string), table) {
				return true
			}
		}
		for _, l := range itest.LogLines(p.Out.String(), "a new table without a primary key is not captured; list it in source.tables to capture it (with null message keys)") {
			if l["table"] == table {
				return true
			}
		}
		return false
	}
	p.WaitFor(t, 60*time.Second, "the warning naming "+e.DB+".events", func() bool { return skipped(e.DB + ".events") })
	e.Exec("CREATE TABLE later (note VARCHAR(10))")
	p.WaitFor(t, 60*time.Second, "the warning naming "+e.DB+".later", func() bool { return skipped(e.DB + ".later") })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.Out)
	}

	listed := e.Start("run", "--config", e.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: e.URL(),
		Source: "  tables: [" + e.DB + ".items, " + e.DB + ".events]\n", File: "listed.yaml"}))
	listed.WaitFor(t, 60*time.Second, "the line saying events is captured without a key", func() bool {
		for _, l := range itest.LogLines(listed.Out.String(), "capturing a table without a primary key: its messages have a null key and full before images") {
			if l["table"] == e.DB+".events" {
				return true
			}
		}
		return false
	})
	listed.Stop(t)
}
