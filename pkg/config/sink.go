package config

import (
	"fmt"
	"slices"
	"time"
)

// The sink settings (destination.topic, key_columns, partition_column,
// publish_timeout, max_in_flight, max_in_flight_bytes, client_id): their
// defaults, limits and rules.
const (
	DefaultPublishTimeout = "30s"
	// DefaultMaxInFlight is the producer's record buffer: with 16 MiB of
	// bytes in flight, 16384 records is where ~1 KiB rows fill both bounds
	// together. Fewer records or many more published fewer events a second
	// in BenchmarkEmit/broker (BENCH_MAX_IN_FLIGHT; docs/hot-path.md).
	DefaultMaxInFlight      = 16384
	DefaultMaxInFlightBytes = 16 << 20
	MaxInFlightLimit        = 65536
	MaxInFlightBytesLimit   = 1 << 30
	// maxTopicName is Kafka's limit on a topic name's length.
	maxTopicName = 249
)

// A sink setting left out stays zero in the Config (docs/configuration.md: 0
// means the benchmarked default); these accessors give the value in effect.

// ClientID is destination.client_id, default tributary-<name>.
func (c *Config) ClientID() string {
	if c.Destination.ClientID != "" {
		return c.Destination.ClientID
	}
	return "tributary-" + c.Name
}

// InFlightRecords is destination.max_in_flight, default DefaultMaxInFlight.
func (d Destination) InFlightRecords() int {
	if d.MaxInFlight > 0 {
		return d.MaxInFlight
	}
	return DefaultMaxInFlight
}

// InFlightBytes is destination.max_in_flight_bytes. Left out, it is
// DefaultMaxInFlightBytes, or max_message_bytes when that is larger, so
// that a limit over 16 MiB works without setting both.
func (d Destination) InFlightBytes() int64 {
	if d.MaxInFlightBytes > 0 {
		return d.MaxInFlightBytes
	}
	return max(DefaultMaxInFlightBytes, int64(d.MaxMessageBytes))
}

// LogicalName is Debezium's logical server name: source.name in every
// message and the first part of every schema name (<name>.<schema>.<table>.Key).
// It is destination.topic_prefix; with destination.topic (one topic for
// every table, no prefix) it is the pipeline's name.
func (c *Config) LogicalName() string {
	if c.Destination.TopicPrefix != "" {
		return c.Destination.TopicPrefix
	}
	return c.Name
}

// PublishTimeoutDuration is destination.publish_timeout (default 30 s).
// Validate has checked it parses.
func (d Destination) PublishTimeoutDuration() time.Duration {
	t, err := time.ParseDuration(d.PublishTimeout)
	if d.PublishTimeout == "" || err != nil || t <= 0 {
		t, _ = time.ParseDuration(DefaultPublishTimeout)
	}
	return t
}

func (v validator) sink(c *Config) {
	d := &c.Destination
	if d.Topic != "" {
		switch {
		case d.TopicPrefix != "":
			v.add("destination.topic", "not allowed with destination.topic_prefix: set one (topic: one topic for every table; topic_prefix: one topic per table)")
		case len(d.Topic) > maxTopicName:
			v.add("destination.topic", "is longer than %d characters (Kafka's limit)", maxTopicName)
		case d.Topic == "." || d.Topic == "..":
			v.add("destination.topic", "must not be '.' or '..'")
		default:
			if bad := v.badCharacter("destination.topic", d.Topic, isTopicChar); bad != "" {
				v.add("destination.topic", "%s; use letters, digits, '.', '_' and '-' only", bad)
			}
		}
	}

	sel, _ := c.Source.Selection() // its problems are source's
	listed := func(table string) bool { return sel == nil || sel.Wants(table, true) }
	for _, table := range sortedKeys(d.KeyColumns) {
		field := fmt.Sprintf("destination.key_columns[%s]", table)
		cols := d.KeyColumns[table]
		switch {
		case !validTable.MatchString(table):
			v.add(field, "the key must be schema.table (two names joined by one dot)")
		case !listed(table):
			v.add(field, "names a table not in source.tables (no entry selects it, or source.exclude_tables leaves it out)")
		case len(cols) == 0:
			v.add(field, "must list at least one column")
		}
		for i, col := range cols {
			if col == "" {
				v.add(fmt.Sprintf("%s[%d]", field, i), "is empty; name a column")
			} else if j := slices.Index(cols, col); j < i {
				v.add(fmt.Sprintf("%s[%d]", field, i), "repeats %s[%d]", field, j)
			} else if excluded, mask := sel.Column(table, col); excluded {
				// The key must identify the row: a column left out of
				// the message cannot be its key, and a masked one makes
				// every key alike (one partition; one row left on a
				// compacted topic).
				v.add(fmt.Sprintf("%s[%d]", field, i), "%s.%s is left out by source.exclude_columns; a key column must be published: drop it from the key or from the exclusions", table, col)
			} else if mask != nil {
				v.add(fmt.Sprintf("%s[%d]", field, i), "%s.%s is masked by source.mask_columns, so every key would carry the mask; drop it from the key or from the mask rules", table, col)
			}
		}
	}
	for _, table := range sortedKeys(d.PartitionColumn) {
		field := fmt.Sprintf("destination.partition_column[%s]", table)
		switch {
		case !validTable.MatchString(table):
			v.add(field, "the key must be schema.table (two names joined by one dot)")
		case !listed(table):
			v.add(field, "names a table not in source.tables (no entry selects it, or source.exclude_tables leaves it out)")
		case d.PartitionColumn[table] == "":
			v.add(field, "is empty; name a signed integer column")
		}
	}

	if t, err := time.ParseDuration(d.PublishTimeout); d.PublishTimeout != "" && (err != nil || t < time.Second || t > time.Hour) {
		v.add("destination.publish_timeout", "must be a duration from 1s to 1h, such as 30s or 2m")
	}
	if d.MaxInFlight < 0 || d.MaxInFlight > MaxInFlightLimit {
		v.add("destination.max_in_flight", "must be from 1 to %d records (0 or left out: %d)", MaxInFlightLimit, DefaultMaxInFlight)
	}
	switch {
	case d.MaxInFlightBytes < 0 || d.MaxInFlightBytes > MaxInFlightBytesLimit:
		v.add("destination.max_in_flight_bytes", "must be from 1 to %d (1 GiB)", MaxInFlightBytesLimit)
	case d.MaxMessageBytes > 0 && d.MaxMessageBytes <= MaxMessageBytesLimit && int64(d.MaxMessageBytes) > d.InFlightBytes():
		v.add("destination.max_message_bytes", "does not fit in destination.max_in_flight_bytes: the producer's buffer must hold the largest message; lower max_message_bytes or raise max_in_flight_bytes to at least max_message_bytes")
	}
	if len(d.ClientID) > 255 {
		v.add("destination.client_id", "is longer than 255 characters")
	} else if bad := v.badCharacter("destination.client_id", d.ClientID, isTopicChar); bad != "" {
		v.add("destination.client_id", "%s; use letters, digits, '.', '_' and '-' only", bad)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
