package delivery_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestExactlyOnceWaitsForMissingTopic: with create_missing_topics false,
// a source transaction writes a row of a table whose topic exists and then
// one of a table whose topic does not. The task waits for the topic,
// saying so, for longer than the transaction timeout (shortened to 3 s
// here; the coordinator aborts a transaction that outlives it, within its
// 10 s cleanup interval), and must neither exit fenced nor lose or repeat
// a row once the topic is created.
func TestExactlyOnceWaitsForMissingTopic(t *testing.T) {
	itest.ForEachBackend(t, "eoswait", func(t *testing.T, b itest.Backend) {
		e := b.Env()
		itest.CreateTables(t, b, "a", "b", "sentinel")
		adm := itest.NewAdmin(t)
		ctx := context.Background()
		compact := "compact"
		for _, topic := range []string{b.Topic("a"), b.Topic("sentinel")} {
			if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": &compact}, e.Prefix+".tributary-offsets"); err != nil {
			t.Fatal(err)
		}
		missing := b.Topic("b")
		cfg := b.Config(nil, "")
		itest.EditConfig(t, cfg, "create_missing_topics: true", "create_missing_topics: false")
		itest.AppendConfig(t, cfg, itest.ExactlyOnceLines)

		p := e.StartWith([]string{"TRIBUTARY_TEST_TRANSACTION_TIMEOUT=3s"}, "run", "--config", cfg)
		itest.AwaitBackendSentinelCommitted(t, b, p, 1)
		for _, q := range []string{"BEGIN", "INSERT INTO a (k, seq) VALUES (1, 1)", "INSERT INTO b (k, seq) VALUES (1, 1)", "COMMIT"} {
			itest.MustExecOn(t, b, q)
		}
		p.WaitFor(t, 60*time.Second, "the wait for "+missing, func() bool {
			return strings.Contains(p.Out.String(), "topic "+missing+" does not exist")
		})
		time.Sleep(16 * time.Second) // the timeout and the coordinator's cleanup interval
		if p.Exited() {
			t.Fatalf("exited while waiting for %s; output:\n%s", missing, p.Out)
		}
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, missing); err != nil {
			t.Fatal(err)
		}
		itest.MustExecOn(t, b, "INSERT INTO a (k, seq) VALUES (2, 2)")
		itest.AwaitBackendSentinelCommitted(t, b, p, 2)
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
		}
		for table, want := range map[string][]int{"a": {1, 2}, "b": {1}} {
			seen := map[int]int{}
			for _, m := range itest.ReadCommitted(t, b.Topic(table)) {
				seen[int(m.Key["payload"].(map[string]any)["k"].(float64))]++
			}
			for _, k := range want {
				if seen[k] != 1 {
					t.Errorf("table %s row k=%d read %d times by a read_committed consumer, want 1", table, k, seen[k])
				}
			}
		}
	})
}
