package integration

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestPGTableSelectionPatterns: source.tables takes Debezium-style
// regular expressions (anchored, case-insensitive) beside plain names,
// and source.exclude_tables leaves tables out. The publication lists
// exactly the selected tables; a keyless table a pattern matches stays
// writable (left out, with a warning); a table created while streaming
// that matches is captured with its rows; one the exclusion matches is
// not.
func TestPGTableSelectionPatterns(t *testing.T) {
	e := newEnv(t, "pgsel")
	for _, q := range []string{
		`CREATE TABLE order_lines (k int PRIMARY KEY, v text)`,
		`INSERT INTO order_lines SELECT g, 'l' || g FROM generate_series(1, 3) g`,
		`CREATE TABLE order_archive (k int PRIMARY KEY, v text)`,
		`INSERT INTO order_archive VALUES (1, 'old')`,
		`CREATE TABLE customers (k int PRIMARY KEY, v text)`,
		`INSERT INTO customers VALUES (1, 'c')`,
		`CREATE TABLE order_notes (v text)`, // no replica identity
		sentinelTable,
	} {
		e.exec(q)
	}
	cfg := e.writePipeline(pipelineConfig{source: `  tables: ['PUBLIC\.order_.*', public.sentinel]
  exclude_tables: ['public\.order_arch.*']
`})
	p := e.start("run", "--config", cfg)
	e.pgCaughtUp(p, 1)
	lines := e.prefix + ".public.order_lines"
	p.waitFor(t, 60*time.Second, "order_lines' snapshot", func() bool { return len(finalState(t, lines)) == 3 })
	if _, err := e.conn.Exec(context.Background(), `UPDATE order_notes SET v = 'x'`); err != nil {
		t.Fatalf("a keyless table a pattern matches must stay writable (left out of the publication): %v", err)
	}

	// Created while streaming: captured when matched, rows written before
	// its discovery included; not when excluded.
	e.exec(`CREATE TABLE order_late (k int PRIMARY KEY, v text)`)
	e.exec(`INSERT INTO order_late VALUES (1, 'a'), (2, 'b')`)
	e.exec(`CREATE TABLE order_archive_2025 (k int PRIMARY KEY, v text)`)
	e.exec(`INSERT INTO order_archive_2025 VALUES (1, 'old')`)
	late := e.prefix + ".public.order_late"
	p.waitFor(t, 60*time.Second, "the new matching table's rows", func() bool { return len(finalState(t, late)) == 2 })
	e.exec(`INSERT INTO order_late VALUES (3, 'c')`)
	e.pgCaughtUp(p, 2)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	if d := sameState(finalState(t, late), e.dbState("order_late")); d != "" {
		t.Errorf("order_late: %s", d)
	}
	for _, table := range []string{"order_archive", "order_archive_2025", "customers", "order_notes"} {
		if n := topicEnd(e.prefix + ".public." + table); n != 0 {
			t.Errorf("%s is not selected but its topic has %d messages", table, n)
		}
	}
	if _, tables := e.published("tributary_" + e.name); strings.Join(tables, ",") != "public.order_late,public.order_lines,public.sentinel" {
		t.Errorf("publication lists %v; want exactly public.order_late, public.order_lines, public.sentinel", tables)
	}
	if !strings.Contains(p.out.String(), "public.order_notes") {
		t.Errorf("no warning names the keyless table left out; output:\n%s", p.out)
	}
}
