package scenario_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestZeroColumnTable: PostgreSQL lets a table have no columns (CREATE
// TABLE t(), or every column dropped) and still hold rows (INSERT INTO t
// DEFAULT VALUES). Such rows carry nothing to publish, so a table without
// columns is left out, as Debezium skips its snapshot: a regular
// expression that matches it, with or without a replica identity, does not
// stop the pipeline, at its first start or any later one, and the other
// tables are captured. The warning is logged once per start, and `tables`
// lists the table as left out. (MariaDB and MySQL refuse a table without
// columns: "A table must have at least 1 column".)
func TestZeroColumnTable(t *testing.T) {
	b := itest.NewPGBackend(t, "zerocol")
	e := b.Env()
	e.Exec(`CREATE TABLE docs (id int PRIMARY KEY, v text)`)
	e.Exec(`CREATE TABLE nocols ()`)
	e.Exec(`ALTER TABLE nocols REPLICA IDENTITY FULL`)
	e.Exec(`CREATE TABLE dropped (id int)`)
	e.Exec(`ALTER TABLE dropped REPLICA IDENTITY FULL`)
	e.Exec(`ALTER TABLE dropped DROP COLUMN id`)
	e.Exec(`INSERT INTO nocols DEFAULT VALUES`)
	e.Exec(`INSERT INTO dropped DEFAULT VALUES`)
	e.Exec(`INSERT INTO docs VALUES (1, 'a')`)
	cfg := e.WritePipeline(itest.PipelineConfig{Source: "  tables: ['public\\..*']\n"})
	topic := e.Prefix + ".public.docs"

	out, code := e.Run("tables", "--config", cfg)
	if code != 0 || !strings.Contains(out, "warning: public.nocols: the table has no columns") || !strings.Contains(out, "1 tables would be captured") {
		t.Errorf("tables: exit %d, want 0, public.nocols named as a table without columns and only public.docs captured; output:\n%s", code, out)
	}

	for run := 1; run <= 2; run++ {
		p := e.Start("run", "--config", cfg)
		itest.WaitOrDump(t, p, 60*time.Second, "row 1", func() bool { return itest.TopicEnd(topic) >= int64(run) })
		e.Exec(`INSERT INTO nocols DEFAULT VALUES`)
		e.Exec(`INSERT INTO dropped DEFAULT VALUES`)
		e.Exec(`DELETE FROM dropped`)
		e.Exec(`INSERT INTO docs VALUES ($1, 'b')`, run+1)
		itest.WaitOrDump(t, p, 60*time.Second, "the row after the zero-column tables' changes", func() bool { return itest.TopicEnd(topic) >= int64(run+1) })
		if code := p.Stop(t); code != 0 {
			t.Fatalf("run %d: exit %d; output:\n%s", run, code, p.Out)
		}
		if n := strings.Count(p.Out.String(), `"table has no columns to publish`); n != 2 {
			t.Errorf("run %d: %d warnings of a table without columns, want one for each of the two tables; output:\n%s", run, n, p.Out)
		}
	}
	for _, topic := range []string{e.Prefix + ".public.nocols", e.Prefix + ".public.dropped"} {
		if n := itest.TopicEnd(topic); n != 0 {
			t.Errorf("%s: %d records, want none", topic, n)
		}
	}
}
