package kafka_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// createdTopic is what the broker says of a topic: its partitions, the
// replicas of each, and the configs set on the topic itself (not
// inherited from the broker).
type createdTopic struct {
	partitions, replicas int
	configs              map[string]string
}

func describeCreated(t *testing.T, adm *kadm.Client, topic string) createdTopic {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	details, err := adm.ListTopics(ctx, topic)
	if err != nil || details[topic].Err != nil {
		t.Fatalf("describe %s: %v %v", topic, err, details[topic].Err)
	}
	c := createdTopic{partitions: len(details[topic].Partitions), configs: map[string]string{}}
	for _, p := range details[topic].Partitions {
		c.replicas = len(p.Replicas)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatalf("describe configs of %s: %v", topic, err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("configs of %s: %v %v", topic, err, rc.Err)
	}
	for _, cfg := range rc.Configs {
		if cfg.Source.String() == "DYNAMIC_TOPIC_CONFIG" {
			c.configs[cfg.Key] = cfg.MaybeValue()
		}
	}
	return c
}

// TestKafkaTopicCreationGroups: destination.topic_creation, as Kafka
// Connect's topic.creation.* that Debezium users set. Topics Tributary
// creates take the first group whose include matches the whole name
// (orders, and not orders_archive, which its exclude leaves to the
// next group), else the default group, the heartbeat topic too; a group
// takes the default's partitions when it sets none, never its configs.
// The broker's description of each topic says so. A topic that exists
// is used as it is.
func TestKafkaTopicCreationGroups(t *testing.T) {
	e := itest.NewEnv(t, "topiccreate")
	for _, table := range []string{"orders", "orders_archive", "items", "kept"} {
		e.Exec(`CREATE TABLE ` + table + ` (id int PRIMARY KEY)`)
		e.Exec(`INSERT INTO ` + table + ` VALUES (1)`)
	}
	topic := func(table string) string { return e.Prefix + ".public." + table }
	heartbeat := "__debezium-heartbeat." + e.Prefix
	itest.CreateSinglePartitionTopics(t, topic("kept"))
	quoted := strings.ReplaceAll(e.Prefix, ".", `\.`)
	cfg := e.WriteConfig(`  heartbeat:
    interval: 200ms
  topic_creation:
    default:
      partitions: 2
      config:
        cleanup.policy: compact
        retention.ms: 604800000
    groups:
      - name: orders
        include: ['` + quoted + `\.public\.orders.*']
        exclude: ['.*_archive']
        partitions: 3
        config:
          compression.type: zstd
          min.insync.replicas: 1
          segment.bytes: 104857600
      - name: archives
        include: ['.*_archive']
        replication_factor: 1
        config:
          cleanup.policy: delete
`)
	p := e.Start("run", "--config", cfg)
	itest.WaitOrDump(t, p, 90*time.Second, "every row and a heartbeat", func() bool {
		for _, table := range []string{"orders", "orders_archive", "items", "kept"} {
			if itest.TopicEnd(topic(table)) < 1 {
				return false
			}
		}
		return itest.TopicEnd(heartbeat) >= 1
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}
	adm := itest.NewAdmin(t)
	for _, c := range []struct {
		topic string
		want  createdTopic
	}{
		{topic("orders"), createdTopic{3, 1, map[string]string{"compression.type": "zstd", "min.insync.replicas": "1", "segment.bytes": "104857600"}}},
		{topic("orders_archive"), createdTopic{2, 1, map[string]string{"cleanup.policy": "delete"}}},
		{topic("items"), createdTopic{2, 1, map[string]string{"cleanup.policy": "compact", "retention.ms": "604800000"}}},
		{heartbeat, createdTopic{2, 1, map[string]string{"cleanup.policy": "compact", "retention.ms": "604800000"}}},
		{topic("kept"), createdTopic{1, 1, map[string]string{}}},
	} {
		got := describeCreated(t, adm, c.topic)
		if got.partitions != c.want.partitions || got.replicas != c.want.replicas || len(got.configs) != len(c.want.configs) {
			t.Errorf("%s: %d partitions, %d replicas, configs %v; want %d, %d, %v", c.topic, got.partitions, got.replicas, got.configs,
				c.want.partitions, c.want.replicas, c.want.configs)
			continue
		}
		for k, v := range c.want.configs {
			if got.configs[k] != v {
				t.Errorf("%s: %s=%q, want %q", c.topic, k, got.configs[k], v)
			}
		}
	}
}

// TestKafkaTopicCreationRefused: a replication factor the cluster cannot
// give (3 on the one test broker) stops the pipeline at the first topic it
// creates, with the broker's reason and the setting that asked for it.
func TestKafkaTopicCreationRefused(t *testing.T) {
	e := itest.NewEnv(t, "topicrefused")
	e.Exec(`CREATE TABLE items (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO items VALUES (1)`)
	cfg := e.WriteConfig("  topic_creation:\n    default:\n      replication_factor: 3\n")
	out, code := e.Run("run", "--config", cfg)
	if code != 1 || !strings.Contains(out, "destination.topic_creation.default") || !strings.Contains(out, "replication_factor 3") ||
		!strings.Contains(out, "INVALID_REPLICATION_FACTOR") {
		t.Fatalf("run: exit %d; want 1 naming destination.topic_creation.default and the broker's reason\n%s", code, out)
	}
	if n := itest.TopicEnd(e.Prefix + ".public.items"); n != 0 {
		t.Errorf("%d records published", n)
	}
}

// TestKafkaTopicCreationConnTest: test-connection validates every
// topic_creation group with the cluster (validate only: nothing is
// created): groups the broker takes pass, and a replication factor it
// cannot give fails the create check, naming the group's field with the
// broker's reason, before any pipeline runs.
func TestKafkaTopicCreationConnTest(t *testing.T) {
	e := itest.NewEnv(t, "topicconntest")
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY)`)
	good := e.WritePipeline(itest.PipelineConfig{File: "good.yaml", Destination: `  topic_creation:
    default:
      partitions: 2
      config: {cleanup.policy: compact}
    groups:
      - {name: orders, include: ['.*orders'], replication_factor: 1, config: {retention.ms: 1000}}
`})
	out, code := e.Run("test-connection", "--config", good)
	if code != 0 || !strings.Contains(out, "2 group(s) validated") {
		t.Fatalf("test-connection with groups the cluster takes: exit %d\n%s", code, out)
	}
	bad := e.WritePipeline(itest.PipelineConfig{File: "bad.yaml", Destination: `  topic_creation:
    groups:
      - {name: orders, include: ['.*orders'], replication_factor: 3}
      - {name: odd, include: ['.*odd'], config: {cleanup.policy: sometimes}}
`})
	out, code = e.Run("test-connection", "--config", bad)
	if code != 1 || !strings.Contains(out, "destination.topic_creation.groups[0] (orders)") || !strings.Contains(out, "INVALID_REPLICATION_FACTOR") ||
		!strings.Contains(out, "destination.topic_creation.groups[1] (odd)") || !strings.Contains(out, "INVALID_CONFIG") {
		t.Fatalf("test-connection with an RF over the brokers and a bad config: exit %d; want 1 naming both groups and the broker's reasons\n%s", code, out)
	}
}
