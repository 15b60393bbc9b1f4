package itest

import (
	"time"
)

// BackfillAndStop runs the pipeline of cfg until topic has at least n
// messages (the backfill) and the stream has caught up, then stops it.
func (e *Env) BackfillAndStop(cfg, topic string, n int64) {
	e.T.Helper()
	p := e.Start("run", "--config", cfg)
	WaitOrDump(e.T, p, 60*time.Second, "the backfill", func() bool { return TopicEnd(topic) >= n })
	e.PGCaughtUp(p, 1)
	if code := p.Stop(e.T); code != 0 {
		e.T.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
}

// OneRowAndSentinel makes table t (k int PRIMARY KEY, v text) with row
// (0, 'zero') and the sentinel table, and returns the config capturing
// both and t's topic.
func (e *Env) OneRowAndSentinel() (cfg, topic string) {
	e.Exec(`CREATE TABLE t (k int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO t VALUES (0, 'zero')`)
	e.Exec(SentinelTable)
	return e.WriteTablesConfig("public.t", "public.sentinel"), e.Prefix + ".public.t"
}
