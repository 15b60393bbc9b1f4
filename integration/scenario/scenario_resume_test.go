package scenario_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestScenarioResume, on every source: backfill (r), then c/u/d streamed
// with the headers and key a consumer routes on, a graceful stop with a
// checkpoint, changes made while stopped, and a restart that streams them
// without backfilling again. With TRIBUTARY_PREVIOUS_BINARY set (a
// tributary binary of another build) that build runs until the stop, so
// its checkpoint is the one this build resumes. (The per-type encodings stay in
// TestPostgresToKafka and TestMySQLTypesAndDDL.)
func TestScenarioResume(t *testing.T) {
	itest.ForEachBackend(t, "resume", func(t *testing.T, b itest.Backend) {
		itest.CreateTables(t, b, "items")
		itest.MustExecOn(t, b, `INSERT INTO items (k, seq, v) VALUES (1, 1, 'one'), (2, 2, NULL)`)
		e := b.Env()
		cfg := b.Config(nil, "")
		topic := b.Topic("items")
		// TRIBUTARY_PREVIOUS_BINARY (another build, e.g. the last
		// release) runs the first part: its checkpoint must resume here.
		current := itest.Binary
		if prev := os.Getenv("TRIBUTARY_PREVIOUS_BINARY"); prev != "" {
			itest.Binary = prev
		}
		p := e.Start("run", "--config", cfg)
		itest.Binary = current
		itest.WaitFor(t, 60*time.Second, "2 backfilled rows", func() bool { return itest.TopicEnd(topic) >= 2 })
		itest.MustExecOn(t, b, `INSERT INTO items (k, seq, v) VALUES (3, 3, 'three')`)
		itest.MustExecOn(t, b, `UPDATE items SET seq = 4, v = 'two' WHERE k = 2`)
		itest.MustExecOn(t, b, `DELETE FROM items WHERE k = 1`)
		itest.WaitFor(t, 30*time.Second, "5 messages", func() bool { return itest.TopicEnd(topic) >= 5 })
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM, want 0; output:\n%s", code, p.Out)
		}
		if _, err := os.Stat(filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")); err != nil {
			t.Fatalf("no checkpoint after a graceful stop: %v", err)
		}

		type ev struct {
			op  string
			k   float64
			seq any
		}
		var got []ev
		for _, m := range itest.ReadTopic(t, topic) {
			pl := m.Payload()
			op, _ := pl["op"].(string)
			if m.Headers["content-type"] != "application/json" || m.Headers["tributary-op"] != op || m.Headers["tributary-event-id"] == "" {
				t.Errorf("headers %v for op %s", m.Headers, op)
			}
			if name := m.Key["schema"].(map[string]any)["name"]; name != topic+".Key" {
				t.Errorf("key schema name %v, want %s.Key", name, topic)
			}
			row, _ := pl["after"].(map[string]any)
			if op == "d" {
				row, _ = pl["before"].(map[string]any)
				if pl["after"] != nil {
					t.Errorf("delete with an after image: %v", pl["after"])
				}
			}
			if src, _ := pl["source"].(map[string]any); op != "r" && src["snapshot"] != "false" {
				t.Errorf("op %s: source.snapshot %v, want \"false\"", op, src["snapshot"])
			}
			got = append(got, ev{op, m.Key["payload"].(map[string]any)["k"].(float64), row["seq"]})
		}
		// Topics may have several partitions: the order is per key, so
		// compare as a set (each key here changes once after its r).
		want := []ev{{"r", 1, 1.0}, {"r", 2, 2.0}, {"c", 3, 3.0}, {"u", 2, 4.0}, {"d", 1, 1.0}}
		sameEvents(t, "before the restart", got, want)

		// Changes while stopped stream on restart; nothing is backfilled again.
		itest.MustExecOn(t, b, `INSERT INTO items (k, seq, v) VALUES (5, 5, 'while stopped')`)
		itest.MustExecOn(t, b, `UPDATE items SET seq = 6 WHERE k = 3`)
		p = e.Start("run", "--config", cfg)
		itest.WaitFor(t, 60*time.Second, "the changes made while stopped", func() bool { return itest.TopicEnd(topic) >= 7 })
		time.Sleep(2 * time.Second) // a second backfill would show up by now
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM, want 0; output:\n%s", code, p.Out)
		}
		got = got[:0]
		for _, m := range itest.ReadTopic(t, topic) {
			pl := m.Payload()
			row, _ := pl["after"].(map[string]any)
			if pl["op"] == "d" {
				row, _ = pl["before"].(map[string]any)
			}
			got = append(got, ev{pl["op"].(string), m.Key["payload"].(map[string]any)["k"].(float64), row["seq"]})
		}
		sameEvents(t, "after the restart", got, append(want, ev{"c", 5, 5.0}, ev{"u", 3, 6.0}))
	})
}

func sameEvents[E comparable](t *testing.T, when string, got, want []E) {
	t.Helper()
	count := map[E]int{}
	for _, g := range got {
		count[g]++
	}
	for _, w := range want {
		count[w]--
	}
	for e, n := range count {
		if n != 0 {
			t.Errorf("%s: messages %v, want %v (%v off by %d)", when, got, want, e, n)
			return
		}
	}
}

// TestScenarioResumeMidSnapshot, on every source, with
// TRIBUTARY_PREVIOUS_BINARY set (a tributary binary of another build,
// e.g. the last release; skipped otherwise, TestScenarioResume covers a
// build's own checkpoints): that build stops halfway through the initial
// snapshot, and this build reads on after the checkpointed key: every row
// is read, hardly any twice, and a change made while stopped streams.
func TestScenarioResumeMidSnapshot(t *testing.T) {
	prev := os.Getenv("TRIBUTARY_PREVIOUS_BINARY")
	if prev == "" {
		t.Skip("TRIBUTARY_PREVIOUS_BINARY is not set")
	}
	itest.ForEachBackend(t, "resumemid", func(t *testing.T, b itest.Backend) {
		const rows = 3000
		for _, s := range append(b.CreateTable("items"), b.BulkInsert("items", 0, 0, rows)) {
			if err := b.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		e, cfg, topic := b.Env(), b.Config(nil, ""), b.Topic("items")
		ckpt := filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")
		current := itest.Binary
		itest.Binary = prev
		p := e.StartWith([]string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=5", "TRIBUTARY_CHECKPOINT_INTERVAL=100ms"}, "run", "--config", cfg)
		itest.Binary = current
		itest.WaitFor(t, 60*time.Second, "a checkpoint halfway through the snapshot", func() bool {
			st, ok := itest.ReadSnapshotState(ckpt)
			return ok && len(st.Tables) > 0 && itest.TopicEnd(topic) >= 300
		})
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM, want 0; output:\n%s", code, p.Out)
		}
		before := itest.TopicEnd(topic)
		if err := b.Exec(b.BulkInsert("items", rows, rows, 1)); err != nil {
			t.Fatal(err)
		}
		p = e.Start("run", "--config", cfg)
		itest.WaitFor(t, 90*time.Second, "the snapshot to finish", func() bool {
			st, ok := itest.ReadSnapshotState(ckpt)
			return ok && len(st.Tables) == 0 && itest.TopicEnd(topic) >= rows+1
		})
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM, want 0; output:\n%s", code, p.Out)
		}
		reads := map[int]int{}
		for _, m := range itest.ReadTopic(t, topic) {
			if m.Payload()["op"] == "r" {
				reads[int(m.Key["payload"].(map[string]any)["k"].(float64))]++
			}
		}
		twice := 0
		for k := 1; k <= rows; k++ {
			if reads[k] == 0 {
				t.Errorf("row %d was never read", k)
			}
			if reads[k] > 1 {
				twice++
			}
		}
		// The stop may land before the last chunk's checkpoint: a few
		// chunks are read again, never the table from its start.
		if twice >= int(before) {
			t.Errorf("%d rows read twice of the %d published before the stop: the snapshot started over", twice, before)
		}
	})
}
