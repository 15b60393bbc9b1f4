package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGExactlyOnceCommitsWhenIdle: with delivery exactly_once, a
// caught-up pipeline commits its Kafka transaction as soon as the source
// has nothing more to hand over at a source-transaction end, not when
// transactions.max_interval has passed: with max_interval at 5 s, a
// read_committed consumer sees each single-row transaction well within
// it (docs/exactly-once.md, Latency). Before, each waited the whole
// interval.
func TestPGExactlyOnceCommitsWhenIdle(t *testing.T) {
	e := itest.NewEnv(t, "pgeosidle")
	e.Exec(`CREATE TABLE lat (id int PRIMARY KEY, v int)`)
	cfg := e.WriteConfig("")
	itest.AppendConfig(t, cfg, itest.ExactlyOnceLines+"transactions:\n  max_interval: 5s\n")
	topic := e.Prefix + ".public.lat"
	p := e.Start("run", "--config", cfg)
	defer p.Stop(t)

	e.Exec(`INSERT INTO lat VALUES (0, 0)`)
	itest.WaitOrDump(t, p, 120*time.Second, "the first row, committed", func() bool { return itest.CommittedEnd(topic) >= 1 })

	const interval = 5 * time.Second
	for id := 1; id <= 3; id++ {
		before := itest.CommittedEnd(topic)
		e.Exec(`INSERT INTO lat VALUES ($1, $1)`, id)
		committed := time.Now()
		p.WaitFor(t, 30*time.Second, fmt.Sprintf("row %d read_committed", id), func() bool { return itest.CommittedEnd(topic) > before })
		lat := time.Since(committed)
		t.Logf("row %d: visible to read_committed %s after its COMMIT returned (max_interval %s)", id, lat.Round(time.Millisecond), interval)
		if lat >= interval/2 {
			t.Errorf("row %d became visible to read_committed %s after its commit; want well within max_interval (%s): the caught-up pipeline waited for the interval instead of committing when the source went idle", id, lat.Round(time.Millisecond), interval)
		}
	}
}
