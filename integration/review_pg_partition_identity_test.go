package integration

// Review of issue 28's replica identity fix (pkg/source/postgres/catalog.go
// describe, publication.go listTables) for a partitioned table:
// TestReviewPGPartitionIdentityDiffers gives one partition of a
// partitioned table a replica identity of its own (USING INDEX on a
// unique index of that partition) while the table is keyed by its primary
// key. A delete from that partition carries only the index's column, and
// the key is read from the parent (its primary key): the pipeline must
// still publish the delete (or refuse the table at start, naming it),
// not exit at every run on the delete. Expected to fail until fixed: run
// accepts the table, and the delete stops the pipeline (ErrKeyMissing on
// column id) at every restart, since it stays in the slot.

import (
	"strings"
	"testing"
	"time"
)

func TestReviewPGPartitionIdentityDiffers(t *testing.T) {
	e := newEnv(t, "rvpart")
	e.exec(`CREATE TABLE m (id int, region text, code text NOT NULL, v text, PRIMARY KEY (id, region)) PARTITION BY LIST (region)`)
	e.exec(`CREATE TABLE m_eu PARTITION OF m FOR VALUES IN ('eu')`)
	e.exec(`CREATE TABLE m_us PARTITION OF m FOR VALUES IN ('us')`)
	e.exec(`CREATE UNIQUE INDEX m_eu_code ON m_eu (code)`)
	e.exec(`ALTER TABLE m_eu REPLICA IDENTITY USING INDEX m_eu_code`)
	e.exec(`INSERT INTO m VALUES (1, 'eu', 'a', 'x'), (2, 'us', 'b', 'y')`)
	e.exec(sentinelTable)
	cfg := e.writeTablesConfig("public.m", "public.sentinel")
	topic := e.prefix + ".public.m"
	p := e.start("run", "--config", cfg)
	waitOrDump(t, p, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= 2 || p.exited() })
	if p.exited() {
		if out := p.out.String(); strings.Contains(out, "m_eu") {
			t.Logf("refused at start, naming the partition: fine; output:\n%s", out)
			return
		}
		t.Fatalf("exited at start; output:\n%s", p.out)
	}
	e.exec(`DELETE FROM m WHERE id = 1 AND region = 'eu'`)
	e.exec(`INSERT INTO sentinel VALUES (1)`)
	waitFor(t, 60*time.Second, "the sentinel or an exit", func() bool {
		if p.exited() {
			return true
		}
		for _, m := range readTopicIfAny(t, e.prefix+".public.sentinel") {
			if after, ok := m.payload()["after"].(map[string]any); ok && after["id"] == float64(1) {
				return true
			}
		}
		return false
	})
	if p.exited() {
		out := p.out.String()
		if len(out) > 3000 {
			out = out[len(out)-3000:]
		}
		t.Fatalf("exited %d on the delete from the partition with its own replica identity; output (tail):\n%s", p.cmd.ProcessState.ExitCode(), out)
	}
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	var deletes int
	for _, m := range readTopic(t, topic) {
		if m.payload()["op"] == "d" {
			deletes++
			t.Logf("delete key %v", m.Key["payload"])
		}
	}
	if deletes != 1 {
		t.Errorf("%d deletes, want 1", deletes)
	}
}
