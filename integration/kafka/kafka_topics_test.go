package kafka_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaMissingTopics: without create_missing_topics the missing topics
// are listed at start-up and the pipeline waits, reporting
// `topic <name> does not exist` and publishing nothing, until the topics
// are created; then it continues. A partitioned table publishes to its
// parent's topic. With create_missing_topics, an existing topic is used as
// it is: its partitions and configs are not altered.
func TestKafkaMissingTopics(t *testing.T) {
	e := itest.NewEnv(t, "topics")
	e.Exec(`CREATE TABLE items (id int PRIMARY KEY, name text)`)
	e.Exec(`CREATE TABLE events (id int, region text, PRIMARY KEY (id, region)) PARTITION BY LIST (region)`)
	e.Exec(`CREATE TABLE events_eu PARTITION OF events FOR VALUES IN ('eu')`)
	e.Exec(`CREATE TABLE events_us PARTITION OF events FOR VALUES IN ('us')`)
	e.Exec(`INSERT INTO items VALUES (1, 'a'), (2, 'b')`)
	e.Exec(`INSERT INTO events VALUES (1, 'eu'), (2, 'us')`)
	items, events := e.Prefix+".public.items", e.Prefix+".public.events"

	cfg := e.WriteConfig("")
	itest.EditConfig(t, cfg, "create_missing_topics: true", "create_missing_topics: false")
	itest.EditConfig(t, cfg, "  type: postgres\n", "  type: postgres\n  tables: [public.items, public.events]\n")

	addr := itest.FreeAddr(t)
	p := e.Start("run", "--config", cfg, "--http-addr", addr)
	itest.WaitFor(t, 60*time.Second, "the missing-topic report", func() bool {
		out := p.Out.String()
		return strings.Contains(out, "topics do not exist") && strings.Contains(out, " does not exist; waiting")
	})
	// Not only a log line: the metric the TopicMissing alarm watches.
	// The pipeline waits at the first row whose topic is missing, items
	// or events, whichever it reads first.
	missingMetric := func() float64 {
		return itest.Samples(itest.Scrape(t, addr), "tributary_topic_missing", `topic="`+e.Prefix+`.public.`)[""]
	}
	itest.WaitFor(t, 30*time.Second, "tributary_topic_missing 1", func() bool { return missingMetric() == 1 })
	out := p.Out.String()
	if !strings.Contains(out, items) || !strings.Contains(out, events) {
		t.Fatalf("start-up report does not list both topics:\n%s", out)
	}
	time.Sleep(time.Second)
	if p.Exited() || itest.TopicEnd(items)+itest.TopicEnd(events) != 0 {
		t.Fatalf("published or exited while topics were missing:\n%s", p.Out)
	}

	// Someone creates the topics: items with one partition and its own
	// retention, to check below that nothing alters it.
	adm := admin(t)
	ctx := context.Background()
	retention := "3600000"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.ms": &retention}, items); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, -1, -1, nil, events); err != nil {
		t.Fatal(err)
	}
	itest.WaitFor(t, 60*time.Second, "2 items and 2 events", func() bool { return itest.TopicEnd(items) >= 2 && itest.TopicEnd(events) >= 2 })
	if v := missingMetric(); v != 0 {
		t.Errorf("tributary_topic_missing is %v once the topics exist, want 0", v)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}
	listed, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name := range listed {
		if strings.HasPrefix(name, e.Prefix+".public.events_") {
			t.Errorf("a partition has its own topic %s", name)
		}
	}

	// With create_missing_topics the existing topic is left as it is.
	itest.EditConfig(t, cfg, "create_missing_topics: false", "create_missing_topics: true")
	e.Exec(`INSERT INTO items VALUES (3, 'c')`)
	p = e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "item 3", func() bool { return itest.TopicEnd(items) >= 3 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}
	td, err := adm.ListTopics(ctx, items)
	if err != nil || len(td[items].Partitions) != 1 {
		t.Fatalf("items partitions %d (err %v), want 1", len(td[items].Partitions), err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := rcs.On(items, nil)
	for _, c := range rc.Configs {
		if c.Key == "retention.ms" && (c.Value == nil || *c.Value != retention) {
			t.Fatalf("retention.ms altered to %v", c.Value)
		}
	}
}

func admin(t *testing.T) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(itest.KafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}
