package config

import (
	"strings"
	"testing"
	"time"
)

const topicsYAML = shopYAML + `  create_missing_topics: true
  heartbeat:
    interval: 5s
    topic_prefix: __hb
  topic_creation:
    default:
      replication_factor: 3
      partitions: 6
      config:
        cleanup.policy: compact
        min.insync.replicas: 2
    groups:
      - name: orders
        include: ['shop\.public\.orders.*']
        exclude: ['.*_archive']
        partitions: 12
        config:
          retention.ms: 604800000
          compression.type: zstd
      - name: everything-public
        include: ['shop\.public\..*']
        replication_factor: -1
`

func TestTopicSettingsParse(t *testing.T) {
	cfg := mustParse(t, topicsYAML)
	if got := cfg.Destination.Heartbeat.IntervalDuration(); got != 5*time.Second {
		t.Fatalf("heartbeat interval %v", got)
	}
	if got := cfg.HeartbeatTopic(); got != "__hb.shop" {
		t.Fatalf("heartbeat topic %q", got)
	}
	rule := cfg.Destination.TopicCreation.Rule()
	for _, c := range []struct {
		topic, field string
		partitions   int32
		rf           int16
		config       map[string]string
	}{
		// The first group that takes a topic wins, as in Kafka Connect;
		// a group takes Default's partitions and replication factor when
		// it does not set them, never its configs.
		{"shop.public.orders", "destination.topic_creation.groups[0] (orders)", 12, 3, map[string]string{"retention.ms": "604800000", "compression.type": "zstd"}},
		{"shop.public.orders_v2", "destination.topic_creation.groups[0] (orders)", 12, 3, map[string]string{"retention.ms": "604800000", "compression.type": "zstd"}},
		// Excluded from the first, taken by the second.
		{"shop.public.orders_archive", "destination.topic_creation.groups[1] (everything-public)", 6, -1, nil},
		// The whole name must match: no group takes it.
		{"x.shop.public.items", "destination.topic_creation.default", 6, 3, map[string]string{"cleanup.policy": "compact", "min.insync.replicas": "2"}},
		{"__hb.shop", "destination.topic_creation.default", 6, 3, map[string]string{"cleanup.policy": "compact", "min.insync.replicas": "2"}},
	} {
		s := rule.For(c.topic)
		if s.Field != c.field || s.Partitions != c.partitions || s.ReplicationFactor != c.rf || len(s.Configs) != len(c.config) {
			t.Errorf("%s: %+v, want %s %d %d %v", c.topic, s, c.field, c.partitions, c.rf, c.config)
		}
		for k, v := range c.config {
			if s.Configs[k] != v {
				t.Errorf("%s: config %s=%q, want %q", c.topic, k, s.Configs[k], v)
			}
		}
	}
}

// TestTopicSettingsDefaults: without the new keys, nothing changes:
// no heartbeats, Debezium's heartbeat topic name, and topics created
// with the cluster's defaults.
func TestTopicSettingsDefaults(t *testing.T) {
	cfg := validConfig(t)
	if cfg.Destination.Heartbeat.IntervalDuration() != 0 || cfg.HeartbeatTopic() != "__debezium-heartbeat.shop" {
		t.Fatalf("heartbeat %v %s", cfg.Destination.Heartbeat.IntervalDuration(), cfg.HeartbeatTopic())
	}
	s := cfg.Destination.TopicCreation.Rule().For("shop.public.orders")
	if s.Field != "" || s.Partitions != -1 || s.ReplicationFactor != -1 || s.Configs != nil {
		t.Fatalf("default topic settings %+v", s)
	}
}

// TestTopicSettingsRules: every bad setting is reported at once, each
// naming its field.
func TestTopicSettingsRules(t *testing.T) {
	doc := strings.NewReplacer(
		"  create_missing_topics: true\n", "",
		"interval: 5s", "interval: soon",
		"topic_prefix: __hb", "topic_prefix: 'h b'",
		"partitions: 6", "partitions: 0",
		"replication_factor: 3", "replication_factor: -2",
		"['shop\\.public\\.orders.*']", "['shop\\.(orders']",
		"partitions: 12", "partitions: -5",
		"- name: everything-public\n        include: ['shop\\.public\\..*']", "- name: orders\n        include: []",
	).Replace(topicsYAML)
	wantProblems(t, doc, []string{
		"destination.topic_creation",
		"destination.heartbeat.interval",
		"destination.heartbeat.topic_prefix",
		"destination.topic_creation.default.replication_factor",
		"destination.topic_creation.groups[0].include[0]",
		"destination.topic_creation.groups[0].partitions",
		"destination.topic_creation.groups[1].include",
		"destination.topic_creation.groups[1].name",
	}, []string{"set destination.create_missing_topics: true", "not a valid regular expression: missing closing )",
		"must be 1 or more, or -1", "names must be unique"})
}
