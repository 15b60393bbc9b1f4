package integration

// Review of issue 28's REPLICA IDENTITY USING INDEX fix
// (pkg/source/postgres/catalog.go describe, stream.go relation).
// TestReviewPGIdentityChangedWithDeleteInWAL shows that a change of a
// table's replica identity (here from its primary key to USING INDEX)
// while the stream is behind (here: while the pipeline is stopped) makes a
// delete still in the slot's WAL unpublishable: its old image carries the
// identity of when it was written (id), but the key is read from the
// current catalog (code), so the encoder refuses it (ErrKeyMissing) and the
// task exits — and exits again at every restart, since the delete stays in
// the slot. Expected to fail until fixed.

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestReviewPGIdentityChangedWithDeleteInWAL(t *testing.T) {
	e := newEnv(t, "rvident")
	e.exec(`CREATE TABLE acct (id int PRIMARY KEY, code text NOT NULL, v text, CONSTRAINT acct_code UNIQUE (code))`)
	e.exec(`INSERT INTO acct VALUES (1, 'a', 'x'), (2, 'b', 'y')`)
	e.exec(sentinelTable)
	cfg := e.writeTablesConfig("public.acct", "public.sentinel")
	topic := e.prefix + ".public.acct"
	p := e.start("run", "--config", cfg)
	waitOrDump(t, p, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= 2 })
	e.pgCaughtUp(p, 1)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}

	// While stopped (as while the stream lags): a delete under the primary
	// key identity, then the identity becomes the unique index.
	e.exec(`DELETE FROM acct WHERE id = 1`)
	e.exec(`ALTER TABLE acct REPLICA IDENTITY USING INDEX acct_code`)
	e.exec(`UPDATE acct SET v = 'z' WHERE id = 2`)

	var exits []string
	for run := 1; run <= 2; run++ {
		p = e.start("run", "--config", cfg)
		e.exec(`INSERT INTO sentinel VALUES ($1)`, 10+run)
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) && !p.exited() && !strings.Contains(p.out.String(), `"id":11`) {
			time.Sleep(time.Second)
			var found bool
			for _, m := range readTopicIfAny(t, e.prefix+".public.sentinel") {
				if after, ok := m.payload()["after"].(map[string]any); ok && after["id"] == float64(10+run) {
					found = true
				}
			}
			if found {
				break
			}
		}
		if p.exited() {
			out := p.out.String()
			if len(out) > 3000 {
				out = out[len(out)-3000:]
			}
			t.Logf("run %d: output (tail):\n%s", run, out)
			exits = append(exits, fmt.Sprintf("run %d exited %d", run, p.cmd.ProcessState.ExitCode()))
			continue
		}
		if code := p.stop(t); code != 0 {
			t.Fatalf("exit %d; output:\n%s", code, p.out)
		}
	}
	if len(exits) > 0 {
		t.Fatalf("after the identity change, with a delete in the WAL: %s (want both running on, the delete published)", strings.Join(exits, ", "))
	}
	var deletes int
	for _, m := range readTopic(t, topic) {
		if m.payload()["op"] == "d" {
			deletes++
			t.Logf("delete key %v", m.Key["payload"])
		}
	}
	if deletes != 1 {
		t.Errorf("%d deletes published, want 1 (row 1)", deletes)
	}
}
