package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGTableSelectionPatterns: source.tables takes Debezium-style
// regular expressions (anchored, case-insensitive) beside plain names,
// and source.exclude_tables leaves tables out. The publication lists
// exactly the selected tables; a keyless table a pattern matches stays
// writable (left out, with a warning); a table created while streaming
// that matches is captured with its rows; one the exclusion matches is
// not.
func TestPGTableSelectionPatterns(t *testing.T) {
	e := itest.NewEnv(t, "pgsel")
	for _, q := range []string{
		`CREATE TABLE order_lines (k int PRIMARY KEY, v text)`,
		`INSERT INTO order_lines SELECT g, 'l' || g FROM generate_series(1, 3) g`,
		`CREATE TABLE order_archive (k int PRIMARY KEY, v text)`,
		`INSERT INTO order_archive VALUES (1, 'old')`,
		`CREATE TABLE customers (k int PRIMARY KEY, v text)`,
		`INSERT INTO customers VALUES (1, 'c')`,
		`CREATE TABLE order_notes (v text)`, // no replica identity
		itest.SentinelTable,
	} {
		e.Exec(q)
	}
	cfg := e.WritePipeline(itest.PipelineConfig{Source: `  tables: ['PUBLIC\.order_.*', public.sentinel]
  exclude_tables: ['public\.order_arch.*']
`})
	p := e.Start("run", "--config", cfg)
	e.PGCaughtUp(p, 1)
	lines := e.Prefix + ".public.order_lines"
	p.WaitFor(t, 60*time.Second, "order_lines' snapshot", func() bool { return len(itest.FinalState(t, lines)) == 3 })
	if _, err := e.Conn.Exec(context.Background(), `UPDATE order_notes SET v = 'x'`); err != nil {
		t.Fatalf("a keyless table a pattern matches must stay writable (left out of the publication): %v", err)
	}

	// Created while streaming: captured when matched, rows written before
	// its discovery included; not when excluded.
	e.Exec(`CREATE TABLE order_late (k int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO order_late VALUES (1, 'a'), (2, 'b')`)
	e.Exec(`CREATE TABLE order_archive_2025 (k int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO order_archive_2025 VALUES (1, 'old')`)
	late := e.Prefix + ".public.order_late"
	p.WaitFor(t, 60*time.Second, "the new matching table's rows", func() bool { return len(itest.FinalState(t, late)) == 2 })
	e.Exec(`INSERT INTO order_late VALUES (3, 'c')`)
	e.PGCaughtUp(p, 2)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	if d := sameState(itest.FinalState(t, late), e.DBState("order_late")); d != "" {
		t.Errorf("order_late: %s", d)
	}
	for _, table := range []string{"order_archive", "order_archive_2025", "customers", "order_notes"} {
		if n := itest.TopicEnd(e.Prefix + ".public." + table); n != 0 {
			t.Errorf("%s is not selected but its topic has %d messages", table, n)
		}
	}
	if _, tables := e.Published("tributary_" + e.Name); strings.Join(tables, ",") != "public.order_late,public.order_lines,public.sentinel" {
		t.Errorf("publication lists %v; want exactly public.order_late, public.order_lines, public.sentinel", tables)
	}
	if !strings.Contains(p.Out.String(), "public.order_notes") {
		t.Errorf("no warning names the keyless table left out; output:\n%s", p.Out)
	}
}
