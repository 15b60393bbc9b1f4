package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGListedTableDroppedOrRenamed: a table in source.tables that is
// dropped, or renamed to a name the list does not hold, is logged when it
// happens and named as missing by status and metrics; the renamed
// table's changes are not published (no topic for a table the list does
// not name) and it leaves the publication; and the next start warns
// about both instead of failing with "not found".
func TestPGListedTableDroppedOrRenamed(t *testing.T) {
	e := itest.NewEnv(t, "pgrename")
	e.Exec(`CREATE TABLE gone (k int PRIMARY KEY, v text)`)
	e.Exec(`CREATE TABLE moved (k int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO gone VALUES (1, 'x')`)
	e.Exec(`INSERT INTO moved VALUES (1, 'x')`)
	e.Exec(itest.SentinelTable)
	cfg := e.WriteTablesConfig("public.gone", "public.moved", "public.sentinel")
	addr := itest.FreeAddr(t)
	p := e.Start("run", "--config", cfg, "--http-addr", addr)
	e.PGCaughtUp(p, 1)

	e.Exec(`DROP TABLE gone`)
	e.Exec(`ALTER TABLE moved RENAME TO moved_away`)
	e.Exec(`INSERT INTO moved_away VALUES (2, 'after the rename')`)
	e.Exec(`UPDATE moved_away SET v = 'y' WHERE k = 1`)
	p.WaitFor(t, 30*time.Second, "the drop and the rename to be reported", func() bool {
		out := p.Out.String()
		return strings.Contains(out, "a captured table was dropped") &&
			strings.Contains(out, "renamed to a name the list does not hold")
	})
	itest.MissingReported(t, e, p, cfg, addr, "public.gone", "public.moved")
	e.PGCaughtUp(p, 2)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	if n := itest.TopicEnd(e.Prefix + ".public.moved_away"); n != 0 {
		t.Errorf("the table renamed out of source.tables was published to its new name's topic (%d messages)", n)
	}
	if n := itest.TopicEnd(e.Prefix + ".public.moved"); n != 1 {
		t.Errorf("topic of the renamed table has %d messages, want only its backfilled row", n)
	}
	if _, tables := e.Published("tributary_" + e.Name); strings.Join(tables, ",") != "public.sentinel" {
		t.Errorf("publication lists %v, want only public.sentinel", tables)
	}

	p = e.Start("run", "--config", cfg)
	e.PGCaughtUp(p, 3)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("the restart after a listed table was dropped and one renamed failed (exit %d); output:\n%s", code, p.Out)
	}
	for _, name := range []string{"public.gone", "public.moved"} {
		out := p.Out.String()
		named := strings.Contains(out, "table="+name) || strings.Contains(out, `"table":"`+name+`"`)
		if !named || !strings.Contains(out, "source.tables: table not found") {
			t.Errorf("the restart did not warn that %s is not found; output:\n%s", name, p.Out)
		}
	}

	// A listed table that appears again is captured from its first row.
	p = e.Start("run", "--config", cfg)
	e.Exec(`CREATE TABLE gone (k int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO gone VALUES (7, 'back')`)
	p.WaitFor(t, 60*time.Second, "the re-created listed table's row", func() bool {
		return itest.FinalState(t, e.Prefix+".public.gone")[7] == "back"
	})
	p.Stop(t)
}
