package mysql_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLStatementFormatBackfills: rows written by a session with
// binlog_format = STATEMENT are not in the binlog as rows; Tributary
// does not pass over them silently: it backfills the table again, which
// publishes them (as reads), warns naming the table and the statement,
// and counts tributary_statement_changes_total; the stream goes on.
func TestMySQLStatementFormatBackfills(t *testing.T) {
	e := itest.NewMyEnv(t, "mystmt")
	e.Exec(`CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(20))`)
	e.Exec(`CREATE TABLE other (id INT PRIMARY KEY)`)
	e.Exec(`INSERT INTO items VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
	topic := e.Prefix + "." + e.DB + ".items"
	addr := itest.FreeAddr(t)
	p := e.Start("run", "--config", e.WriteConfig("  tables: ["+e.DB+".items]\n"), "--metrics-addr", addr)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return !p.Exited() && itest.TopicEnd(topic) >= 3 })

	e.Exec(`SET SESSION binlog_format = 'STATEMENT'`)
	e.Exec(`INSERT INTO items VALUES (10, 'statement'), (11, 'statement')`)
	e.Exec(`UPDATE items SET note = 'changed' WHERE id = 1`)
	e.Exec(`INSERT INTO other VALUES (1)`) // not captured: nothing to do
	e.Exec(`SET SESSION binlog_format = 'ROW'`)
	e.Exec(`INSERT INTO items VALUES (12, 'row')`)

	seen := func() map[float64]string {
		notes := map[float64]string{}
		for _, m := range itest.ReadTopic(t, topic) {
			after, _ := m.Value["payload"].(map[string]any)["after"].(map[string]any)
			if id, ok := after["id"].(float64); ok {
				notes[id], _ = after["note"].(string)
			}
		}
		return notes
	}
	itest.WaitFor(t, 60*time.Second, "the rows written in STATEMENT format", func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited:\n%s", p.Out)
		}
		n := seen()
		return n[10] == "statement" && n[11] == "statement" && n[1] == "changed" && n[12] == "row"
	})
	var count float64
	itest.WaitFor(t, 10*time.Second, "tributary_statement_changes_total", func() bool {
		count = itest.Samples(itest.Scrape(t, addr), "tributary_statement_changes_total", `table="`+e.DB+`.items"`)[""]
		return count >= 2
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit code %d; output:\n%s", code, p.Out)
	}
	out := p.Out.String()
	if !strings.Contains(out, "a captured table was changed by a statement logged as text") || !strings.Contains(out, "INSERT INTO items VALUES (10") {
		t.Errorf("no warning naming the statement:\n%s", out)
	}
	if strings.Contains(out, "other") && strings.Contains(out, "INSERT INTO other") {
		t.Errorf("a statement on a table not captured was reported:\n%s", out)
	}
}

// TestMySQLStatementFormatNoBackfillStops: with backfill off, a change
// logged in STATEMENT format to a captured table stops the pipeline with
// an error naming the table and binlog_format, rather than move past it.
func TestMySQLStatementFormatNoBackfillStops(t *testing.T) {
	e := itest.NewMyEnv(t, "mystmtnb")
	e.Exec(`CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(20))`)
	topic := e.Prefix + "." + e.DB + ".items"
	p := e.Start("run", "--config", e.WriteConfig("  snapshot_mode: no_data\n"))
	itest.WaitFor(t, 60*time.Second, "the stream", func() bool {
		return !p.Exited() && strings.Contains(p.Out.String(), "streaming binlog")
	})
	e.Exec(`INSERT INTO items VALUES (1, 'row')`)
	itest.WaitFor(t, 60*time.Second, "the streamed row", func() bool { return !p.Exited() && itest.TopicEnd(topic) >= 1 })
	e.Exec(`SET SESSION binlog_format = 'STATEMENT'`)
	e.Exec(`DELETE FROM items WHERE id = 1`)
	e.Exec(`SET SESSION binlog_format = 'ROW'`)
	itest.WaitFor(t, 30*time.Second, "the pipeline to stop", p.Exited)
	out := p.Out.String()
	if p.Cmd.ProcessState.ExitCode() == 0 || !strings.Contains(out, "captured table "+e.DB+".items was changed by a statement logged as text") || !strings.Contains(out, "binlog_format = ROW") {
		t.Errorf("exit %d, want an error naming %s.items and binlog_format:\n%s", p.Cmd.ProcessState.ExitCode(), e.DB, out)
	}
}

// TestMySQLStatementFormatMultiTable: a multi-table UPDATE or DELETE
// logged as text changes every table it names, not only the first: an
// UPDATE that joins a table not captured to a captured one and sets the
// captured one's columns (comma and JOIN forms), and a DELETE whose
// captured target comes second, backfill the captured table, whose rows'
// latest state then reaches the topic; so does a comment between INSERT
// and INTO.
func TestMySQLStatementFormatMultiTable(t *testing.T) {
	e := itest.NewMyEnv(t, "mystmtmt")
	e.Exec(`CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(20))`)
	e.Exec(`CREATE TABLE other (id INT PRIMARY KEY)`)
	e.Exec(`INSERT INTO items VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
	e.Exec(`INSERT INTO other VALUES (1), (2), (3)`)
	topic := e.Prefix + "." + e.DB + ".items"
	p := e.Start("run", "--config", e.WriteConfig("  tables: ["+e.DB+".items]\n"))
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return !p.Exited() && itest.TopicEnd(topic) >= 3 })

	e.Exec(`SET SESSION binlog_format = 'STATEMENT'`)
	e.Exec(`UPDATE other, items SET items.note = 'comma' WHERE other.id = items.id AND other.id = 1`)
	e.Exec(`UPDATE other o JOIN ` + "`" + e.DB + "`" + `.items i ON o.id = i.id SET i.note = 'join' WHERE o.id = 2`)
	e.Exec(`DELETE o, i FROM other AS o JOIN items AS i ON o.id = i.id WHERE o.id = 3`)
	e.Exec(`INSERT /* app */ INTO items VALUES (5, 'comment')`)
	e.Exec(`SET SESSION binlog_format = 'ROW'`)
	e.Exec(`INSERT INTO items VALUES (4, 'row')`)

	notes := func() map[float64]string {
		n := map[float64]string{}
		for _, m := range itest.ReadTopic(t, topic) {
			after, _ := m.Value["payload"].(map[string]any)["after"].(map[string]any)
			if id, ok := after["id"].(float64); ok {
				n[id], _ = after["note"].(string)
			}
		}
		return n
	}
	itest.WaitFor(t, 30*time.Second, "the row written after the statements", func() bool {
		return !p.Exited() && notes()[4] == "row"
	})
	ok := func() bool { n := notes(); return n[1] == "comma" && n[2] == "join" && n[5] == "comment" }
	itest.WaitFor(t, 15*time.Second, "the rows the multi-table statements changed", func() bool { return p.Exited() || ok() })
	if code := p.Stop(t); code != 0 || !ok() {
		t.Fatalf("exit %d, notes %v; want rows 1 and 2 as the multi-table UPDATEs left them; output:\n%s", code, notes(), p.Out)
	}
	if out := p.Out.String(); !strings.Contains(out, "DELETE o, i FROM other") {
		t.Errorf("the multi-table DELETE of a captured row was not reported:\n%s", out)
	}
}

// TestMySQLStatementFormatCreateSelect: CREATE TABLE … SELECT logged as
// text (STATEMENT format) creates a table of the captured set with rows
// the binlog does not hold (in ROW format they follow as rows events):
// the new table is backfilled, so its rows reach its topic.
func TestMySQLStatementFormatCreateSelect(t *testing.T) {
	e := itest.NewMyEnv(t, "mystmtctas")
	e.Exec(`CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(20))`)
	e.Exec(`INSERT INTO items VALUES (1, 'a'), (2, 'b')`)
	p := e.Start("run", "--config", e.WriteConfig("  tables: ['"+e.DB+`\..*']`+"\n"))
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return !p.Exited() && itest.TopicEnd(e.Prefix+"."+e.DB+".items") >= 2 })
	e.Exec(`SET SESSION binlog_format = 'STATEMENT'`)
	e.Exec(`CREATE TABLE copied (PRIMARY KEY (id)) SELECT id, note FROM items`)
	e.Exec(`SET SESSION binlog_format = 'ROW'`)
	topic := e.Prefix + "." + e.DB + ".copied"
	itest.WaitFor(t, 30*time.Second, "the rows of the table created by CREATE TABLE … SELECT", func() bool {
		return p.Exited() || itest.TopicEnd(topic) >= 2
	})
	if code := p.Stop(t); code != 0 || itest.TopicEnd(topic) < 2 {
		t.Fatalf("exit %d, %d records in %s, want 2; output:\n%s", code, itest.TopicEnd(topic), topic, p.Out)
	}
}

// TestMySQLStatementFormatViewsAndTriggers: a statement logged as text
// may change a captured table it does not name: an UPDATE through a view
// of it, or a statement on another table whose trigger writes to it (the
// trigger's changes are not logged either). Both backfill the captured
// table, whose rows' latest state then reaches the topic.
func TestMySQLStatementFormatViewsAndTriggers(t *testing.T) {
	e := itest.NewMyEnv(t, "mystmtvt")
	e.Exec(`CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(20))`)
	e.Exec(`CREATE TABLE other (id INT PRIMARY KEY)`)
	e.Exec(`INSERT INTO items VALUES (1, 'a'), (2, 'b')`)
	e.Exec(`CREATE VIEW items_view AS SELECT id, note FROM items`)
	e.Exec(`CREATE TRIGGER other_ins AFTER INSERT ON other FOR EACH ROW INSERT INTO items VALUES (NEW.id + 100, 'trigger')`)
	topic := e.Prefix + "." + e.DB + ".items"
	p := e.Start("run", "--config", e.WriteConfig("  tables: ["+e.DB+".items]\n"))
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return !p.Exited() && itest.TopicEnd(topic) >= 2 })

	e.Exec(`SET SESSION binlog_format = 'STATEMENT'`)
	e.Exec(`UPDATE items_view SET note = 'view' WHERE id = 1`)
	e.Exec(`INSERT INTO other VALUES (5)`)
	e.Exec(`SET SESSION binlog_format = 'ROW'`)
	e.Exec(`INSERT INTO items VALUES (3, 'row')`)

	notes := func() map[float64]string {
		n := map[float64]string{}
		for _, m := range itest.ReadTopic(t, topic) {
			after, _ := m.Value["payload"].(map[string]any)["after"].(map[string]any)
			if id, ok := after["id"].(float64); ok {
				n[id], _ = after["note"].(string)
			}
		}
		return n
	}
	itest.WaitFor(t, 30*time.Second, "the row written after the statements", func() bool {
		return !p.Exited() && notes()[3] == "row"
	})
	ok := func() bool { n := notes(); return n[1] == "view" && n[105] == "trigger" }
	itest.WaitFor(t, 15*time.Second, "the rows changed through the view and the trigger", func() bool { return p.Exited() || ok() })
	if code := p.Stop(t); code != 0 || !ok() {
		t.Fatalf("exit %d, notes %v; want row 1 as the view's UPDATE left it and row 105 from the trigger; output:\n%s", code, notes(), p.Out)
	}
}
