package integration

import (
	"testing"
	"time"
)

// TestPGDroppedFullIdentityNullValue: a table with a primary key under
// REPLICA IDENTITY FULL, dropped while stopped after an insert with a NULL
// in its nullable column v. Were every column taken for the key (pgoutput
// flags them all under FULL), the insert's key would lack v and every run
// would exit (ErrKeyMissing); the checkpoint's key of the table keeps it
// keyed by k (docs/postgresql.md). Found by the review of issue 28.
func TestPGDroppedFullIdentityNullValue(t *testing.T) {
	e := newEnv(t, "rvdropnull")
	e.exec(`CREATE TABLE t (k int PRIMARY KEY, v text)`)
	e.exec(`ALTER TABLE t REPLICA IDENTITY FULL`)
	e.exec(`INSERT INTO t VALUES (1, 'one')`)
	e.exec(sentinelTable)
	cfg := e.writeTablesConfig("public.t", "public.sentinel")
	topic := e.prefix + ".public.t"
	p := e.start("run", "--config", cfg)
	waitOrDump(t, p, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= 1 })
	e.pgCaughtUp(p, 1)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	e.exec(`INSERT INTO t VALUES (3, NULL)`)
	e.exec(`DROP TABLE t`)

	p = e.start("run", "--config", cfg)
	e.exec(`INSERT INTO sentinel VALUES (2)`)
	waitFor(t, 60*time.Second, "the sentinel row or an exit", func() bool {
		if p.exited() {
			return true
		}
		for _, m := range readTopicIfAny(t, e.prefix+".public.sentinel") {
			if after, ok := m.payload()["after"].(map[string]any); ok && after["id"] == float64(2) {
				return true
			}
		}
		return false
	})
	if p.exited() {
		out := p.out.String()
		if len(out) > 2000 {
			out = out[len(out)-2000:]
		}
		t.Fatalf("exited %d on the insert of a NULL into the dropped FULL table; output (tail):\n%s", p.cmd.ProcessState.ExitCode(), out)
	}
	p.stop(t)
}
