// Package destination builds pkg/kafka's options from the destination
// section of a pipeline's configuration (pkg/config). pkg/kafka reads no
// configuration document; every caller that has one (the CLI, the
// connection-test Lambda, tests) builds its options here, the same way.
package destination

import (
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// Kafka is d as kafka.Options, with the defaults of docs/configuration.md
// applied (publish_timeout, max_in_flight, max_in_flight_bytes).
func Kafka(d config.Destination) kafka.Options {
	return kafka.Options{
		BootstrapServers:    d.BootstrapServers,
		Authentication:      d.Authentication,
		Username:            d.Username,
		Password:            d.Password,
		AWSRoleARN:          d.AWSRoleARN,
		ExternalID:          d.ExternalID,
		AWSRegion:           d.AWSRegion,
		DisableTLS:          d.DisableTLS,
		CACertificate:       d.CACertificate,
		ClientCertificate:   d.ClientCertificate,
		ClientKey:           d.ClientKey,
		ClientID:            d.ClientID,
		CreateMissingTopics: d.CreateMissingTopics,
		MessageCompression:  d.MessageCompression,
		MaxMessageBytes:     d.MaxMessageBytes,
		PublishTimeout:      d.PublishTimeoutDuration(),
		MaxInFlight:         d.InFlightRecords(),
		MaxInFlightBytes:    d.InFlightBytes(),
		TopicSpec:           topicSpec(d.TopicCreation),
		TopicSpecs:          topicSpecs(d.TopicCreation),
	}
}

// topicSpec is destination.topic_creation as kafka.Options.TopicSpec.
func topicSpec(tc config.TopicCreation) func(string) kafka.TopicSpec {
	rule := tc.Rule()
	return func(topic string) kafka.TopicSpec {
		s := rule.For(topic)
		return kafka.TopicSpec{Field: s.Field, Partitions: s.Partitions, ReplicationFactor: s.ReplicationFactor, Configs: s.Configs}
	}
}

// Producer is the options of cfg's producer: its destination, under the
// pipeline's client id (destination.client_id, default tributary-<name>).
func Producer(cfg *config.Config) kafka.Options {
	o := Kafka(cfg.Destination)
	o.ClientID = cfg.ClientID()
	return o
}

// TestOptions are the connection-test options cfg's delivery needs (the
// transactions check for exactly_once), followed by more.
func TestOptions(cfg *config.Config, more ...kafka.TestOption) []kafka.TestOption {
	var opts []kafka.TestOption
	if cfg.ExactlyOnce() {
		opts = append(opts, kafka.WithTransactions())
	}
	return append(opts, more...)
}

// topicSpecs are destination.topic_creation's groups, the default group
// first, when it is set.
func topicSpecs(tc config.TopicCreation) []kafka.TopicSpec {
	var out []kafka.TopicSpec
	for _, s := range tc.Rule().All() {
		out = append(out, kafka.TopicSpec{Field: s.Field, Partitions: s.Partitions, ReplicationFactor: s.ReplicationFactor, Configs: s.Configs})
	}
	return out
}
