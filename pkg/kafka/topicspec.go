package kafka

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
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

// topicSpecsProbe validates, without creating anything, the probe topic
// with each spec (destination.topic_creation's groups): a replication
// factor the cluster cannot give or a topic config it refuses shows in
// the connection test, with the group's field and the broker's reason,
// rather than at the first topic the pipeline creates. detail is the
// default probe's, kept when every spec passes.
func topicSpecsProbe(ctx context.Context, cl *kgo.Client, probe string, specs []TopicSpec, detail string) (bool, string) {
	var refused []string
	for _, s := range specs {
		if ok, why := createProbeWith(ctx, cl, probe, s); !ok {
			refused = append(refused, s.Field+": "+why)
		}
	}
	if len(refused) > 0 {
		return false, "the cluster refuses topics as destination.topic_creation says: " + strings.Join(refused, "; ")
	}
	if len(specs) > 0 {
		detail += fmt.Sprintf("; destination.topic_creation's %d group(s) validated", len(specs))
	}
	return true, detail
}
