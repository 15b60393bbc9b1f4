package integration

import (
	"strings"
	"testing"
	"time"
)

// TestMySQLKeylessTableIsLogged: without source.tables, a table without a
// primary key is not captured, and the log says so and how to capture it,
// at start and when one is created later; listed, it is captured, and the
// log says that too.
func TestMySQLKeylessTableIsLogged(t *testing.T) {
	e := newMyEnv(t, "mykeylesslog")
	e.exec("CREATE TABLE items (id INT PRIMARY KEY)")
	e.exec("CREATE TABLE events (note VARCHAR(10))")
	p := e.start("run", "--config", e.writeConfig(""))
	skipped := func(table string) bool {
		for _, l := range logLines(p.out.String(), "tables without a primary key are not captured; list them in source.tables to capture them (with null message keys)") {
			if strings.Contains(l["tables"].(string), table) {
				return true
			}
		}
		for _, l := range logLines(p.out.String(), "a new table without a primary key is not captured; list it in source.tables to capture it (with null message keys)") {
			if l["table"] == table {
				return true
			}
		}
		return false
	}
	p.waitFor(t, 60*time.Second, "the warning naming "+e.db+".events", func() bool { return skipped(e.db + ".events") })
	e.exec("CREATE TABLE later (note VARCHAR(10))")
	p.waitFor(t, 60*time.Second, "the warning naming "+e.db+".later", func() bool { return skipped(e.db + ".later") })
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.out)
	}

	listed := e.start("run", "--config", e.writePipeline(pipelineConfig{typ: "mysql", url: e.url(),
		source: "  tables: [" + e.db + ".items, " + e.db + ".events]\n", file: "listed.yaml"}))
	listed.waitFor(t, 60*time.Second, "the line saying events is captured without a key", func() bool {
		for _, l := range logLines(listed.out.String(), "capturing a table without a primary key: its messages have a null key and full before images") {
			if l["table"] == e.db+".events" {
				return true
			}
		}
		return false
	})
	listed.stop(t)
}
