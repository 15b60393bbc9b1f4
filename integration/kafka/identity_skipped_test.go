package kafka_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestIdentitySkippedLongKeyAndTombstone: a backfilled row whose primary
// key is 2,000 characters (with spaces) and whose value is over
// max_message_bytes is recorded as row.skipped with an event id that the
// row-skipped function and an SQS FIFO queue accept (at most 128
// characters, no spaces); its source event id is kept in extra. With
// delete_mode record_and_tombstone, deleting that row skips the
// oversized delete record but still publishes its tombstone, so a
// compacted topic forgets the row. On every source.
func TestIdentitySkippedLongKeyAndTombstone(t *testing.T) {
	itest.ForEachBackend(t, "idskip", identitySkipped)
}

func identitySkipped(t *testing.T, b itest.Backend) {
	e := b.Env()
	for _, q := range b.TextKeyTable("docs") {
		itest.MustExecOn(t, b, q)
	}
	longKey := strings.Repeat("key with spaces ", 125) // 2,000 characters
	big := strings.Repeat("x", 40<<10)
	itest.MustExecOn(t, b, `INSERT INTO docs VALUES ('small', 'a'), ('`+longKey+`', '`+big+`')`)

	const secret = "whsec_dGVzdC1zZWNyZXQtMDEyMzQ1Njc4OWFiY2RlZmdo" // "test-secret-0123456789abcdefgh"
	hookURL, received := rowSkippedHook(t, secret)

	cfg := b.Config(nil, "  delete_mode: record_and_tombstone\n  max_message_bytes: 20000\n")
	itest.AppendConfig(t, cfg, "webhooks:\n  row_skipped_url: "+hookURL+"\n  signing_secret: "+secret+"\n")

	topic := b.Topic("docs")
	nEvents := func() int { return len(received()) }
	p := e.Start("run", "--config", cfg)
	itest.WaitOrDump(t, p, 60*time.Second, "the small row and the skipped backfill row", func() bool { return itest.TopicEnd(topic) >= 1 && nEvents() >= 1 })
	itest.MustExecOn(t, b, `DELETE FROM docs WHERE id = '`+longKey+`'`)
	itest.MustExecOn(t, b, `INSERT INTO docs VALUES ('after', 'b')`)
	itest.WaitOrDump(t, p, 60*time.Second, "the tombstone and the row after it", func() bool { return itest.TopicEnd(topic) >= 3 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	var tombstones, longRecords int
	for _, m := range itest.ReadTopic(t, topic) {
		pl, _ := m.Key["payload"].(map[string]any)
		if pl["id"] != longKey {
			continue
		}
		if m.Value == nil {
			tombstones++
		} else {
			longRecords++
		}
	}
	if tombstones != 1 || longRecords != 0 {
		t.Errorf("for the long-key row the topic holds %d tombstones and %d records, want 1 tombstone and no record", tombstones, longRecords)
	}

	events := received()
	if len(events) != 2 {
		t.Fatalf("%d row.skipped events, want 2 (the backfilled row and its delete): %+v", len(events), events)
	}
	ops := map[string]bool{}
	for _, ev := range events {
		if len(ev.EventID) > 128 || strings.ContainsAny(ev.EventID, " \t\n") {
			t.Errorf("event id %q: %d characters; an SQS FIFO deduplication id is at most 128, without spaces", ev.EventID, len(ev.EventID))
		}
		src, _ := ev.Extra["source_event_id"].(string)
		op, _ := ev.Extra["op"].(string)
		if src == "" || op == "r" && !strings.Contains(src, "key with spaces") {
			t.Errorf("op %s: extra.source_event_id %q does not keep the source event id", op, src)
		}
		ops[op] = true
		if op == "d" && ev.Extra["tombstone_published"] != true {
			t.Errorf("the skipped delete's event does not say its tombstone was published: %+v", ev.Extra)
		}
		if ev.PrimaryKey["id"] != longKey {
			t.Errorf("primary_key %v, want the long key", ev.PrimaryKey)
		}
	}
	if !ops["r"] || !ops["d"] || events[0].EventID == events[1].EventID {
		t.Errorf("events %+v, want one for op r and one for op d with distinct ids", events)
	}
	if b, _ := json.Marshal(events); strings.Contains(string(b), big[:100]) {
		t.Error("a row.skipped event holds the row's contents")
	}
}
