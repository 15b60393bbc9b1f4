package integration

import (
	"strings"
	"testing"
	"time"
)

// TestPGListedTableDroppedOrRenamed: a table in source.tables that is
// dropped, or renamed to a name the list does not hold, is logged when it
// happens and named as missing by status and metrics; the renamed
// table's changes are not published (no topic for a table the list does
// not name) and it leaves the publication; and the next start warns
// about both instead of failing with "not found".
func TestPGListedTableDroppedOrRenamed(t *testing.T) {
	e := newEnv(t, "pgrename")
	e.exec(`CREATE TABLE gone (k int PRIMARY KEY, v text)`)
	e.exec(`CREATE TABLE moved (k int PRIMARY KEY, v text)`)
	e.exec(`INSERT INTO gone VALUES (1, 'x')`)
	e.exec(`INSERT INTO moved VALUES (1, 'x')`)
	e.exec(sentinelTable)
	cfg := e.writeTablesConfig("public.gone", "public.moved", "public.sentinel")
	addr := freeAddr(t)
	p := e.start("run", "--config", cfg, "--http-addr", addr)
	e.pgCaughtUp(p, 1)

	e.exec(`DROP TABLE gone`)
	e.exec(`ALTER TABLE moved RENAME TO moved_away`)
	e.exec(`INSERT INTO moved_away VALUES (2, 'after the rename')`)
	e.exec(`UPDATE moved_away SET v = 'y' WHERE k = 1`)
	p.waitFor(t, 30*time.Second, "the drop and the rename to be reported", func() bool {
		out := p.out.String()
		return strings.Contains(out, "a captured table was dropped") &&
			strings.Contains(out, "renamed to a name the list does not hold")
	})
	missingReported(t, e, p, cfg, addr, "public.gone", "public.moved")
	e.pgCaughtUp(p, 2)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	if n := topicEnd(e.prefix + ".public.moved_away"); n != 0 {
		t.Errorf("the table renamed out of source.tables was published to its new name's topic (%d messages)", n)
	}
	if n := topicEnd(e.prefix + ".public.moved"); n != 1 {
		t.Errorf("topic of the renamed table has %d messages, want only its backfilled row", n)
	}
	if _, tables := e.published("tributary_" + e.name); strings.Join(tables, ",") != "public.sentinel" {
		t.Errorf("publication lists %v, want only public.sentinel", tables)
	}

	p = e.start("run", "--config", cfg)
	e.pgCaughtUp(p, 3)
	if code := p.stop(t); code != 0 {
		t.Fatalf("the restart after a listed table was dropped and one renamed failed (exit %d); output:\n%s", code, p.out)
	}
	for _, name := range []string{"public.gone", "public.moved"} {
		out := p.out.String()
		named := strings.Contains(out, "table="+name) || strings.Contains(out, `"table":"`+name+`"`)
		if !named || !strings.Contains(out, "source.tables: table not found") {
			t.Errorf("the restart did not warn that %s is not found; output:\n%s", name, p.out)
		}
	}

	// A listed table that appears again is captured from its first row.
	p = e.start("run", "--config", cfg)
	e.exec(`CREATE TABLE gone (k int PRIMARY KEY, v text)`)
	e.exec(`INSERT INTO gone VALUES (7, 'back')`)
	p.waitFor(t, 60*time.Second, "the re-created listed table's row", func() bool {
		return finalState(t, e.prefix+".public.gone")[7] == "back"
	})
	p.stop(t)
}
