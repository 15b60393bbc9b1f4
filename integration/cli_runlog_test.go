package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// logLines decodes the JSON log lines of out whose msg is msg.
func logLines(out, msg string) []map[string]any {
	var found []map[string]any
	for _, line := range strings.Split(out, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			found = append(found, m)
		}
	}
	return found
}

// TestRunLogsStreamingAndWhatItPublished: a PostgreSQL run logs when it
// starts streaming (slot and LSN), and its stop line counts every row it
// published, backfilled rows included, with changes and backfilled rows
// apart.
func TestRunLogsStreamingAndWhatItPublished(t *testing.T) {
	e := newEnv(t, "runlog")
	e.exec(`CREATE TABLE items (id int PRIMARY KEY)`)
	e.exec(`INSERT INTO items SELECT generate_series(1, 5)`)
	p := e.start("run", "--config", e.writeConfig(""))
	p.waitFor(t, 60*time.Second, "the streaming log line", func() bool {
		return len(logLines(p.out.String(), "streaming from the replication slot")) > 0
	})
	if l := logLines(p.out.String(), "streaming from the replication slot")[0]; l["slot"] != "tributary_"+e.name || l["lsn"] == nil {
		t.Errorf("streaming line %v, want the slot and the LSN", l)
	}
	topic := e.prefix + ".public.items"
	p.waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= 5 })
	e.exec(`INSERT INTO items VALUES (6)`)
	p.waitFor(t, 60*time.Second, "the insert", func() bool { return topicEnd(topic) >= 6 })
	time.Sleep(1500 * time.Millisecond) // a checkpoint past the insert's acknowledgement
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.out)
	}
	stopped := logLines(p.out.String(), "stopped")
	if len(stopped) != 1 {
		t.Fatalf("%d stopped lines, want 1\n%s", len(stopped), p.out)
	}
	if s := stopped[0]; s["published"] != 6.0 || s["changes"] != 1.0 || s["backfilled"] != 5.0 {
		t.Errorf("stopped line published=%v changes=%v backfilled=%v, want 6, 1, 5", s["published"], s["changes"], s["backfilled"])
	}
}
