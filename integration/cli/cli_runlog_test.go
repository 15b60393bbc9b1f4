package cli_test

import (
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestRunLogsStreamingAndWhatItPublished: a PostgreSQL run logs when it
// starts streaming (slot and LSN), and its stop line counts every row it
// published, backfilled rows included, with changes and backfilled rows
// apart.
func TestRunLogsStreamingAndWhatItPublished(t *testing.T) {
	e := itest.NewEnv(t, "runlog")
	e.Exec(`CREATE TABLE items (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO items SELECT generate_series(1, 5)`)
	p := e.Start("run", "--config", e.WriteConfig(""))
	p.WaitFor(t, 60*time.Second, "the streaming log line", func() bool {
		return len(itest.LogLines(p.Out.String(), "streaming from the replication slot")) > 0
	})
	if l := itest.LogLines(p.Out.String(), "streaming from the replication slot")[0]; l["slot"] != "tributary_"+e.Name || l["lsn"] == nil {
		t.Errorf("streaming line %v, want the slot and the LSN", l)
	}
	topic := e.Prefix + ".public.items"
	p.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 5 })
	e.Exec(`INSERT INTO items VALUES (6)`)
	p.WaitFor(t, 60*time.Second, "the insert", func() bool { return itest.TopicEnd(topic) >= 6 })
	time.Sleep(1500 * time.Millisecond) // a checkpoint past the insert's acknowledgement
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.Out)
	}
	stopped := itest.LogLines(p.Out.String(), "stopped")
	if len(stopped) != 1 {
		t.Fatalf("%d stopped lines, want 1\n%s", len(stopped), p.Out)
	}
	if s := stopped[0]; s["published"] != 6.0 || s["changes"] != 1.0 || s["backfilled"] != 5.0 {
		t.Errorf("stopped line published=%v changes=%v backfilled=%v, want 6, 1, 5", s["published"], s["changes"], s["backfilled"])
	}
}
