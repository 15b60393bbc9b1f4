package config

import (
	"strings"
	"time"
)

// Delivery guarantees (the top-level delivery key).
const (
	DeliveryAtLeastOnce = "at_least_once"
	DeliveryExactlyOnce = "exactly_once"
	DefaultDelivery     = DeliveryAtLeastOnce
)

// Transaction sizing defaults of delivery exactly_once: 50 ms keeps the
// commit wait inside a p99 latency of 100 ms, the bench's exactly-once
// target (integration/bench, the tributary-exactly-once system).
const (
	DefaultTransactionMaxRecords  = 5000
	DefaultTransactionMaxInterval = "50ms"
	// MaxTransactionInterval stays well inside the broker's default
	// transaction.max.timeout.ms (15 min) and the producer's transaction
	// timeout: a longer transaction would be aborted by the coordinator.
	MaxTransactionInterval = 10 * time.Second
	// OffsetsTopicSuffix names the default offsets topic under the prefix.
	OffsetsTopicSuffix = "tributary-offsets"
)

// Transactions sizes the Kafka transactions of delivery exactly_once and
// names the topic that holds the positions committed with them.
type Transactions struct {
	// MaxRecords: a transaction commits at the first source-transaction
	// end after this many records; a source transaction of more records
	// is split every MaxRecords records. Default 5000.
	MaxRecords int `yaml:"max_records" json:"max_records"`
	// MaxInterval: a transaction commits at the first source-transaction
	// end once it has been open this long (a Go duration), at the latest:
	// while caught up it commits as soon as the source pauses at one
	// (pkg/pipeline). Default 50ms.
	MaxInterval string `yaml:"max_interval" json:"max_interval"`
	// OffsetsTopic holds each pipeline's committed position (compacted,
	// key = pipeline name). Default <topic_prefix>.tributary-offsets.
	OffsetsTopic string `yaml:"offsets_topic" json:"offsets_topic"`
}

// ExactlyOnce reports delivery exactly_once.
func (c *Config) ExactlyOnce() bool { return c.Delivery == DeliveryExactlyOnce }

// OffsetsTopic is transactions.offsets_topic, or its default under the
// topic prefix (so the prefix-scoped ACLs and IAM policies cover it).
func (c *Config) OffsetsTopic() string {
	if c.Transactions.OffsetsTopic != "" {
		return c.Transactions.OffsetsTopic
	}
	if c.Destination.TopicPrefix == "" {
		return ""
	}
	return c.Destination.TopicPrefix + "." + OffsetsTopicSuffix
}

// TransactionalID is the pipeline's Kafka transactional id:
// <topic_prefix>.tributary-<name>. It is the same for every task of the
// pipeline, so a new owner's initialisation fences the previous one, and
// it sits under the topic prefix so that prefix-scoped transactional-id
// ACLs and IAM policies cover it.
func (c *Config) TransactionalID() string {
	id := "tributary-" + c.Name
	if c.Destination.TopicPrefix != "" {
		id = c.Destination.TopicPrefix + "." + id
	}
	return id
}

// TransactionInterval is transactions.max_interval; Validate has checked it.
func (t Transactions) TransactionInterval() time.Duration {
	d, _ := time.ParseDuration(t.MaxInterval)
	return d
}

func (c *Config) applyDeliveryDefaults() {
	setDefault(&c.Delivery, DefaultDelivery)
	if c.Transactions.MaxRecords == 0 {
		c.Transactions.MaxRecords = DefaultTransactionMaxRecords
	}
	setDefault(&c.Transactions.MaxInterval, DefaultTransactionMaxInterval)
}

func (v validator) delivery(c *Config) {
	switch c.Delivery {
	case "", DeliveryAtLeastOnce, DeliveryExactlyOnce:
	default:
		v.add("delivery", "must be at_least_once or exactly_once, not %s", v.quote("delivery", c.Delivery))
	}
	t := c.Transactions
	if t.MaxRecords < 0 {
		v.add("transactions.max_records", "must be at least 1, not %d", t.MaxRecords)
	}
	if t.MaxInterval != "" {
		d, err := time.ParseDuration(t.MaxInterval)
		switch {
		case err != nil:
			v.add("transactions.max_interval", "%s is not a duration (like \"50ms\" or \"1s\")", v.quote("transactions.max_interval", t.MaxInterval))
		case d <= 0 || d > MaxTransactionInterval:
			v.add("transactions.max_interval", "%s is out of range: more than 0 and at most %s", v.plain("transactions.max_interval", t.MaxInterval), MaxTransactionInterval)
		}
	}
	if o := t.OffsetsTopic; o != "" && (len(o) > 249 || strings.Trim(o, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" || o == "." || o == "..") {
		v.add("transactions.offsets_topic", "%s is not a valid topic name: up to 249 letters, digits, '.', '_' and '-'", v.quote("transactions.offsets_topic", o))
	}
	if c.ExactlyOnce() && c.OffsetsTopic() == "" {
		v.add("transactions.offsets_topic", "required with delivery exactly_once when destination.topic_prefix is not set")
	}
}
