package delivery_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

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
	e := itest.NewEnv(t, "eosfail")
	e.Exec(`CREATE TABLE nokey (v text)`)
	e.Exec(`ALTER TABLE nokey REPLICA IDENTITY FULL`) // a listed keyless table needs one (docs/postgresql.md)
	e.Exec(itest.SentinelTable)
	topic := e.Prefix + ".public.nokey"
	adm := itest.NewAdmin(t)
	ctx := context.Background()
	compact, del := "compact", "delete"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": &compact}, topic); err != nil {
		t.Fatal(err)
	}
	cfg := e.WritePipeline(itest.PipelineConfig{Source: "  tables: [public.nokey, public.sentinel]\n"})
	// A commit due 1 ms after its records starts while the refused record
	// is still in flight (the producer lingers 5 ms): the refusal comes
	// during the commit's flush, not before the commit starts.
	itest.AppendConfig(t, cfg, itest.ExactlyOnceLines+"transactions:\n  max_interval: 1ms\n")

	p := e.Start("run", "--config", cfg)
	e.AwaitSentinelCommitted(p, 1)
	e.Exec(`INSERT INTO nokey VALUES ('refused')`)
	e.Exec(`INSERT INTO sentinel VALUES (2)`)
	select {
	case <-p.Done:
	case <-time.After(60 * time.Second):
		t.Fatalf("still running 60 s after a record its topic refuses; output:\n%s", p.Out)
	}
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "cleanup.policy", Value: &del}}, topic); err != nil {
		t.Fatal(err)
	}
	p = e.Start("run", "--config", cfg)
	e.AwaitSentinelCommitted(p, 3)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	got := 0 // keyless: read raw (the message helpers decode a key)
	itest.EachRawRecordWithin(t, topic, 60*time.Second, []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()},
		func(r *kgo.Record) {
			if bytes.Contains(r.Value, []byte(`"v":"refused"`)) {
				got++
			}
		})
	if got != 1 {
		t.Fatalf("the refused row read %d times by a read_committed consumer after the topic was fixed, want 1; output:\n%s", got, p.Out)
	}
}
