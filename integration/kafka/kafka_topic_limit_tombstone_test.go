package kafka_test

// TestKafkaTopicLimitTombstone, with delete_mode record_and_tombstone,
// deletes a row whose old image (REPLICA
// IDENTITY FULL, 30 KB) is over the topic's max.message.bytes (20,000,
// read at start). The insert and the delete event are skipped as too
// large, the delete's tombstone is published (a compacted topic forgets
// the row), and the delete's row.skipped event says so
// (tombstone_published), as it does for a row over
// destination.max_message_bytes (pipeline.go emitRow): the topic-limit path
// of produce must count tombstone_published too.

import (
	"fmt"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

func TestKafkaTopicLimitTombstone(t *testing.T) {
	e := itest.NewEnv(t, "rvtomb")
	topic := e.Prefix + ".public.docs"
	createTopicConfig(t, topic, 1, lowLimit)
	e.Exec(`CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL)`)
	e.Exec(`ALTER TABLE docs REPLICA IDENTITY FULL`)
	e.Exec(`ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL`)
	e.Exec(`INSERT INTO docs VALUES (0, 'first')`)
	p := e.Start("run", "--config", e.WriteConfig("  delete_mode: record_and_tombstone\n"))
	itest.WaitOrDump(t, p, 60*time.Second, "row 0", func() bool { return itest.TopicEnd(topic) >= 1 })
	e.Exec(`INSERT INTO docs VALUES (1, $1)`, itest.Alnum(30000))
	e.Exec(`DELETE FROM docs WHERE id = 1`)
	e.Exec(`INSERT INTO docs VALUES (2, 'after')`)
	itest.WaitOrDump(t, p, 60*time.Second, "row 2", func() bool {
		for _, m := range itest.ReadTopicIfAny(t, topic) {
			if m.Value != nil && fmt.Sprint(m.Key["payload"].(map[string]any)["id"]) == "2" {
				return true
			}
		}
		return false
	})
	if p.Exited() {
		t.Fatalf("exited; output:\n%s", p.Out)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	var tombstones, ones int
	for _, m := range itest.ReadTopic(t, topic) {
		if fmt.Sprint(m.Key["payload"].(map[string]any)["id"]) != "1" {
			continue
		}
		ones++
		if m.Value == nil {
			tombstones++
		}
	}
	if tombstones != 1 || ones != 1 {
		t.Errorf("row 1: %d messages, %d tombstones; want only its tombstone", ones, tombstones)
	}
	var sawDelete bool
	for _, s := range e.SkippedLines(t) {
		t.Logf("row.skipped: key %v op %v size %d limit %d extra %v reason %q", s.PrimaryKey, s.Extra["op"], s.SizeBytes, s.LimitBytes, s.Extra, s.Reason)
		if s.Extra["op"] == "d" {
			sawDelete = true
			if s.Extra["tombstone_published"] != true {
				t.Errorf("the delete's row.skipped event lacks tombstone_published: true although its tombstone was published: %+v", s)
			}
		}
	}
	if !sawDelete {
		t.Errorf("no row.skipped event for the delete of row 1")
	}
}
