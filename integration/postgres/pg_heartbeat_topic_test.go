package postgres_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGHeartbeatTopicAgainstDebezium: with destination.heartbeat.interval
// (Debezium's heartbeat.interval.ms) Tributary writes Debezium's heartbeat
// records to __debezium-heartbeat.<prefix> on a database where nothing
// changes: key and value as Debezium's PostgreSQL connector writes them
// with the same setting (ts_ms apart), about one a second; with schemas
// and without (format.schemas: false, the JsonConverter's
// schemas.enable=false).
func TestPGHeartbeatTopicAgainstDebezium(t *testing.T) {
	for _, c := range []struct {
		name                string
		debezium, tributary string
	}{
		{"schemas", "", ""},
		{"no-schemas", "converter.schemas.enable=false\n", "format:\n  schemas: false\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := itest.NewEnv(t, "pghbtopic")
			e.Exec(`CREATE TABLE c (id int PRIMARY KEY)`)
			out := filepath.Join(e.Dir, "debezium.jsonl")
			topic := "__debezium-heartbeat." + e.Prefix
			since := time.Now()
			dbz := itest.StartDebezium(t, e, out, 0, "heartbeat.interval.ms=1000\n", "table.include.list=public.c\n", "publication.autocreate.mode=filtered\n", c.debezium)
			defer dbz.Stop()
			cfg := e.WriteConfig("  heartbeat:\n    interval: 1s\n")
			itest.AppendConfig(t, cfg, c.tributary)
			p := e.Start("run", "--config", cfg)
			itest.WaitOrDump(t, p, 120*time.Second, "heartbeats from both", func() bool {
				return itest.DebeziumHeartbeats(t, out, topic) >= 1 && itest.TopicEnd(topic) >= 4
			})
			if code := p.Stop(t); code != 0 {
				t.Fatalf("run: exit %d\n%s", code, p.Out)
			}
			times := itest.CompareHeartbeats(t, out, topic, itest.ReadRaw(t, topic), since)
			// One a second on the pipeline's clock (a ticker: a late beat
			// is followed by an early one), with nothing to publish.
			for i := 1; i < len(times); i++ {
				if d := times[i] - times[i-1]; d > 2500 {
					t.Errorf("heartbeats %d and %d are %d ms apart; want about 1000", i-1, i, d)
				}
			}
			if avg := (times[len(times)-1] - times[0]) / int64(len(times)-1); avg < 800 || avg > 1500 {
				t.Errorf("heartbeats %d ms apart on average; want about 1000", avg)
			}
			if n := itest.TopicEnd(e.Prefix + ".public.c"); n != 0 {
				t.Errorf("%d records on the table's topic; nothing changed", n)
			}
		})
	}
}

// TestPGHeartbeatTopicExactlyOnce: exactly once, the heartbeats are
// records of the pipeline's transactions: a read_committed consumer sees
// them on an idle database, committed within transactions.max_interval.
func TestPGHeartbeatTopicExactlyOnce(t *testing.T) {
	e := itest.NewEnv(t, "pghbeos")
	e.Exec(`CREATE TABLE c (id int PRIMARY KEY)`)
	topic := "__tributary-hb." + e.Prefix
	cfg := e.WriteConfig("  heartbeat:\n    interval: 500ms\n    topic_prefix: __tributary-hb\n")
	itest.AppendConfig(t, cfg, itest.ExactlyOnceLines)
	p := e.Start("run", "--config", cfg)
	// Records and their commit markers: three heartbeats at least are
	// visible to read_committed consumers while the database is idle.
	itest.WaitOrDump(t, p, 90*time.Second, "committed heartbeats", func() bool {
		return itest.CommittedEnd(topic) >= 6
	})
	e.Exec(`INSERT INTO c VALUES (1)`)
	itest.WaitOrDump(t, p, 60*time.Second, "the row, committed", func() bool {
		return itest.CommittedEnd(e.Prefix+".public.c") >= 2
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}
	msgs := itest.ReadCommitted(t, topic)
	if len(msgs) < 3 {
		t.Fatalf("%d committed heartbeats", len(msgs))
	}
	for _, m := range msgs {
		if m.Key == nil || m.Payload()["ts_ms"] == nil {
			t.Errorf("heartbeat %+v", m)
		}
	}
}
