package kafka

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// TopicSpec is how EnsureTopic creates a topic: Kafka Connect's
// topic.creation.* settings of the group that takes it.
type TopicSpec struct {
	// Field names the settings in the configuration, for errors
	// ("destination.topic_creation.default"); "": none were given.
	Field string
	// Partitions and ReplicationFactor: -1 is the cluster's default.
	Partitions        int32
	ReplicationFactor int16
	// Configs are the new topic's configs (cleanup.policy, retention.ms, …).
	Configs map[string]string
}

// topicSpec is topic's spec: Options.TopicSpec's, or the cluster's
// defaults.
func (p *Producer) topicSpec(topic string) TopicSpec {
	if p.opts.TopicSpec == nil {
		return TopicSpec{Partitions: -1, ReplicationFactor: -1}
	}
	return p.opts.TopicSpec(topic)
}

// configs is s.Configs as CreateTopics takes them.
func (s TopicSpec) configs() map[string]*string {
	if len(s.Configs) == 0 {
		return nil
	}
	out := make(map[string]*string, len(s.Configs))
	for k, v := range s.Configs {
		out[k] = &v
	}
	return out
}

// describe says, for an error, which settings a topic was created with:
// what the broker refused is then traceable to the configuration.
func (s TopicSpec) describe() string {
	if s.Field == "" {
		return ""
	}
	parts := []string{fmt.Sprintf("partitions %d", s.Partitions), fmt.Sprintf("replication_factor %d", s.ReplicationFactor)}
	for _, k := range slices.Sorted(maps.Keys(s.Configs)) {
		parts = append(parts, k+"="+s.Configs[k])
	}
	return fmt.Sprintf(" as %s says (%s)", s.Field, strings.Join(parts, ", "))
}
