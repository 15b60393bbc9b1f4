package integration

import (
	"os"
	"testing"
	"time"
)

// TestResumeCheckpointOfPreviousBuild, on every source: a checkpoint
// written by another build of tributary (TRIBUTARY_PREVIOUS_BINARY, e.g.
// the last release: `git worktree add /tmp/prev v1.2 && go build -o
// /tmp/tributary-prev ./cmd/tributary` there) resumes with this one: the
// changes made while stopped stream, and nothing is backfilled again.
// Skipped without the variable (the default run has one build only).
func TestResumeCheckpointOfPreviousBuild(t *testing.T) {
	prev := os.Getenv("TRIBUTARY_PREVIOUS_BINARY")
	if prev == "" {
		t.Skip("set TRIBUTARY_PREVIOUS_BINARY to a tributary binary of another build")
	}
	forEachBackend(t, "prevbuild", func(t *testing.T, b backend) {
		mustExec := func(sql string) {
			t.Helper()
			if err := b.exec(sql); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		for _, s := range b.createTable("items") {
			mustExec(s)
		}
		mustExec(`INSERT INTO items (k, seq, v) VALUES (1, 1, 'one'), (2, 2, 'two')`)
		e := b.env()
		cfg := b.config(nil, "")
		topic := b.topic("items")

		current := binary
		binary = prev
		p := e.start("run", "--config", cfg)
		binary = current
		waitFor(t, 60*time.Second, "2 backfilled rows", func() bool { return topicEnd(topic) >= 2 })
		mustExec(`INSERT INTO items (k, seq, v) VALUES (3, 3, 'three')`)
		waitFor(t, 30*time.Second, "3 messages", func() bool { return topicEnd(topic) >= 3 })
		if code := p.stop(t); code != 0 {
			t.Fatalf("the previous build exited %d after SIGTERM; output:\n%s", code, p.out)
		}

		mustExec(`INSERT INTO items (k, seq, v) VALUES (4, 4, 'while stopped')`)
		mustExec(`UPDATE items SET seq = 5 WHERE k = 1`)
		p = e.start("run", "--config", cfg)
		waitFor(t, 60*time.Second, "the changes made while stopped", func() bool { return topicEnd(topic) >= 5 })
		time.Sleep(2 * time.Second) // a second backfill would show up by now
		if code := p.stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
		}
		type ev struct {
			op  string
			k   float64
			seq any
		}
		var got []ev
		for _, m := range readTopic(t, topic) {
			pl := m.payload()
			row, _ := pl["after"].(map[string]any)
			got = append(got, ev{pl["op"].(string), m.Key["payload"].(map[string]any)["k"].(float64), row["seq"]})
		}
		sameEvents(t, "after resuming the previous build's checkpoint", got,
			[]ev{{"r", 1, 1.0}, {"r", 2, 2.0}, {"c", 3, 3.0}, {"c", 4, 4.0}, {"u", 1, 5.0}})
	})
}
