package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestExactlyOnceWaitsForMissingTopic: with create_missing_topics false,
// a source transaction writes a row of a table whose topic exists and then
// one of a table whose topic does not. The task waits for the topic,
// saying so, for longer than the transaction timeout (shortened to 3 s
// here; the coordinator aborts a transaction that outlives it, within its
// 10 s cleanup interval), and must neither exit fenced nor lose or repeat
// a row once the topic is created.
func TestExactlyOnceWaitsForMissingTopic(t *testing.T) {
	forEachBackend(t, "eoswait", func(t *testing.T, b backend) {
		e := b.env()
		createTables(t, b, "a", "b", "sentinel")
		adm := newAdmin(t)
		ctx := context.Background()
		compact := "compact"
		for _, topic := range []string{b.topic("a"), b.topic("sentinel")} {
			if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": &compact}, e.prefix+".tributary-offsets"); err != nil {
			t.Fatal(err)
		}
		missing := b.topic("b")
		cfg := b.config(nil, "")
		editConfig(t, cfg, "create_missing_topics: true", "create_missing_topics: false")
		appendConfig(t, cfg, exactlyOnceLines)

		p := e.startWith([]string{"TRIBUTARY_TEST_TRANSACTION_TIMEOUT=3s"}, "run", "--config", cfg)
		awaitBackendSentinelCommitted(t, b, p, 1)
		for _, q := range []string{"BEGIN", "INSERT INTO a (k, seq) VALUES (1, 1)", "INSERT INTO b (k, seq) VALUES (1, 1)", "COMMIT"} {
			mustExecOn(t, b, q)
		}
		p.waitFor(t, 60*time.Second, "the wait for "+missing, func() bool {
			return strings.Contains(p.out.String(), "topic "+missing+" does not exist")
		})
		time.Sleep(16 * time.Second) // the timeout and the coordinator's cleanup interval
		if p.exited() {
			t.Fatalf("exited while waiting for %s; output:\n%s", missing, p.out)
		}
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, missing); err != nil {
			t.Fatal(err)
		}
		mustExecOn(t, b, "INSERT INTO a (k, seq) VALUES (2, 2)")
		awaitBackendSentinelCommitted(t, b, p, 2)
		if code := p.stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
		}
		for table, want := range map[string][]int{"a": {1, 2}, "b": {1}} {
			seen := map[int]int{}
			for _, m := range readCommitted(t, b.topic(table)) {
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

// newAdmin is an admin client of the local Kafka, closed with the test.
func newAdmin(t *testing.T) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}
