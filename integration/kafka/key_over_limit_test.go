package kafka_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestKafkaKeyOverLimitDelete: a row whose key alone is over
// max_message_bytes is deleted while a tombstone is due after each delete.
// Neither the delete record nor the tombstone (its key alone) fits: both
// are skipped, the one row.skipped event of the delete says its tombstone
// was not published and names destination.max_message_bytes, and the
// pipeline goes on (a row inserted after it arrives, exit 0). On every
// source with delete_mode record_and_tombstone, and with format.unwrap's
// delete-to-tombstone, whose only record of a delete is the tombstone.
func TestKafkaKeyOverLimitDelete(t *testing.T) {
	itest.ForEachBackend(t, "keybig", func(t *testing.T, b itest.Backend) {
		keyOverLimitDelete(t, b, "  delete_mode: record_and_tombstone\n", "")
	})
	t.Run("delete-to-tombstone", func(t *testing.T) {
		b := itest.NewPGBackend(t, "keybigu")
		keyOverLimitDelete(t, b, "", "  unwrap: true\n  delete_handling: delete-to-tombstone\n")
	})
}

func keyOverLimitDelete(t *testing.T, b itest.Backend, dest, format string) {
	e := b.Env()
	for _, q := range b.TextKeyTable("docs") {
		itest.MustExecOn(t, b, q)
	}
	longKey := strings.Repeat("k", 1900)
	itest.MustExecOn(t, b, `INSERT INTO docs VALUES ('small', 'a'), ('`+longKey+`', 'b')`)
	// Without schemas a small row's records are a few hundred bytes.
	cfg := b.Config(nil, dest+"  max_message_bytes: 1500\n")
	itest.AppendConfig(t, cfg, "format:\n  schemas: false\n"+format)
	topic := b.Topic("docs")
	p := e.Start("run", "--config", cfg)
	itest.WaitOrDump(t, p, 60*time.Second, "the small row and the skipped long-key row", func() bool {
		return itest.TopicEnd(topic) >= 1 && len(e.SkippedLines(t)) >= 1
	})
	itest.MustExecOn(t, b, `DELETE FROM docs WHERE id = '`+longKey+`'`)
	itest.MustExecOn(t, b, `INSERT INTO docs VALUES ('after', 'c')`)
	itest.WaitOrDump(t, p, 60*time.Second, "the row after the delete", func() bool { return itest.TopicEnd(topic) >= 2 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	for _, m := range itest.ReadTopic(t, topic) {
		if id, _ := m.Key["id"].(string); id == longKey {
			t.Errorf("a record of the long key was published: %v", m.Value)
		}
	}
	var deletes int
	for _, s := range e.SkippedLines(t) {
		if s.Extra["op"] != "d" {
			continue
		}
		deletes++
		if s.Extra["tombstone_published"] != false {
			t.Errorf("the delete's row.skipped event says tombstone_published %v, want false (its tombstone is over the limit too): %+v", s.Extra["tombstone_published"], s)
		}
		if !strings.Contains(s.Reason, "destination.max_message_bytes 1500") || strings.Contains(s.Reason, "max.message.bytes") {
			t.Errorf("reason %q, want it to name destination.max_message_bytes 1500 (not the topic's max.message.bytes)", s.Reason)
		}
		if s.PrimaryKey["id"] != longKey || s.LimitBytes != 1500 || s.SizeBytes <= 1500 {
			t.Errorf("row.skipped %+v: want the long key, limit 1500 and its size", s)
		}
	}
	if deletes != 1 {
		t.Errorf("%d row.skipped events for the delete, want 1", deletes)
	}
}

// TestKafkaKeyOverTopicLimitDelete: as TestKafkaKeyOverLimitDelete, with
// the limit the topic's max.message.bytes (1,500, below
// max_message_bytes): the delete record is handed over and refused by the
// topic, its tombstone is refused before it is sent. One row.skipped event
// for the delete, saying its tombstone was not published, not a second
// one claiming the delete record went out and only its tombstone did not.
func TestKafkaKeyOverTopicLimitDelete(t *testing.T) {
	b := itest.BackendNamed(t, "mariadb", "keybigtopic")
	e := b.Env()
	topic := b.Topic("docs")
	createTopicConfig(t, topic, 1, 1500)
	for _, q := range b.TextKeyTable("docs") {
		itest.MustExecOn(t, b, q)
	}
	longKey := strings.Repeat("k", 1900)
	itest.MustExecOn(t, b, `INSERT INTO docs VALUES ('small', 'a'), ('`+longKey+`', 'b')`)
	cfg := b.Config(nil, "  delete_mode: record_and_tombstone\n")
	itest.AppendConfig(t, cfg, "format:\n  schemas: false\n")
	p := e.Start("run", "--config", cfg)
	itest.WaitOrDump(t, p, 60*time.Second, "the small row and the skipped long-key row", func() bool {
		return itest.TopicEnd(topic) >= 1 && len(e.SkippedLines(t)) >= 1
	})
	itest.MustExecOn(t, b, `DELETE FROM docs WHERE id = '`+longKey+`'`)
	itest.MustExecOn(t, b, `INSERT INTO docs VALUES ('after', 'c')`)
	itest.WaitOrDump(t, p, 60*time.Second, "the row after the delete", func() bool { return itest.TopicEnd(topic) >= 2 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	for _, m := range itest.ReadTopic(t, topic) {
		if id, _ := m.Key["id"].(string); id == longKey {
			t.Errorf("a record of the long key was published: %v", m.Value)
		}
	}
	var deletes int
	for _, s := range e.SkippedLines(t) {
		if s.Extra["op"] != "d" {
			continue
		}
		deletes++
		t.Logf("row.skipped of the delete: size %d limit %d extra %v reason %q", s.SizeBytes, s.LimitBytes, s.Extra, s.Reason)
		if s.Extra["tombstone_published"] != false {
			t.Errorf("the delete's row.skipped event says tombstone_published %v, want false", s.Extra["tombstone_published"])
		}
		if !strings.Contains(s.Reason, "tombstone") {
			t.Errorf("reason %q does not say the tombstone is not published either", s.Reason)
		}
	}
	if deletes != 1 {
		t.Errorf("%d row.skipped events for the delete, want 1", deletes)
	}
}
