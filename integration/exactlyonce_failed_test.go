package integration

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestExactlyOnceFailedRecordNotCommitted: a transaction in which a record
// failed must not commit. On the real broker the fault is a compacted
// topic refusing a record without a key (INVALID_RECORD) while the offsets
// topic stays healthy (a min.insync.replicas above the replication factor
// does not fail writes: since KIP-966 the broker caps it at the replica
// count). franz-go commits whatever part of a transaction succeeded, so the
// commit carried the offsets record past the refused row, and the restart
// after the topic was fixed never sent it.
func TestExactlyOnceFailedRecordNotCommitted(t *testing.T) {
	e := newEnv(t, "eosfail")
	e.exec(`CREATE TABLE nokey (v text)`)
	e.exec(`ALTER TABLE nokey REPLICA IDENTITY FULL`) // a listed keyless table needs one (docs/postgresql.md)
	e.exec(sentinelTable)
	topic := e.prefix + ".public.nokey"
	adm := newAdmin(t)
	ctx := context.Background()
	compact, del := "compact", "delete"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": &compact}, topic); err != nil {
		t.Fatal(err)
	}
	cfg := e.writePipeline(pipelineConfig{source: "  tables: [public.nokey, public.sentinel]\n"})
	// A commit due 1 ms after its records starts while the refused record
	// is still in flight (the producer lingers 5 ms): the refusal comes
	// during the commit's flush, not before the commit starts.
	appendConfig(t, cfg, exactlyOnceLines+"transactions:\n  max_interval: 1ms\n")

	p := e.start("run", "--config", cfg)
	e.awaitSentinelCommitted(p, 1)
	e.exec(`INSERT INTO nokey VALUES ('refused')`)
	e.exec(`INSERT INTO sentinel VALUES (2)`)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("still running 60 s after a record its topic refuses; output:\n%s", p.out)
	}
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "cleanup.policy", Value: &del}}, topic); err != nil {
		t.Fatal(err)
	}
	p = e.start("run", "--config", cfg)
	e.awaitSentinelCommitted(p, 3)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	got := 0 // keyless: read raw (the message helpers decode a key)
	eachRawRecordWithin(t, topic, 60*time.Second, []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()},
		func(r *kgo.Record) {
			if bytes.Contains(r.Value, []byte(`"v":"refused"`)) {
				got++
			}
		})
	if got != 1 {
		t.Fatalf("the refused row read %d times by a read_committed consumer after the topic was fixed, want 1; output:\n%s", got, p.out)
	}
}
