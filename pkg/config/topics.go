package config

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"time"
)

// Heartbeat is Debezium's heartbeat topic (heartbeat.interval.ms,
// topic.heartbeat.prefix): every Interval a record on
// <TopicPrefix>.<logical name>, so that consumers and monitors see the
// pipeline alive while the database is idle. It is apart from the
// source's own keep-alives (the PostgreSQL slot's standby status), which
// run whatever this says.
type Heartbeat struct {
	// Interval is heartbeat.interval.ms as a Go duration ("10s"); "" or
	// "0" (default) sends none.
	Interval string `yaml:"interval" json:"interval"`
	// TopicPrefix is topic.heartbeat.prefix. Default __debezium-heartbeat.
	TopicPrefix string `yaml:"topic_prefix" json:"topic_prefix"`
}

// DefaultHeartbeatTopicPrefix is Debezium's topic.heartbeat.prefix.
const DefaultHeartbeatTopicPrefix = "__debezium-heartbeat"

// IntervalDuration is Interval, 0 when off. Validate has checked it parses.
func (h Heartbeat) IntervalDuration() time.Duration {
	d, _ := time.ParseDuration(h.Interval)
	if h.Interval == "0" {
		return 0
	}
	return d
}

// HeartbeatTopic is the heartbeat topic: <topic_prefix>.<logical name>,
// as Debezium names it from topic.prefix.
func (c *Config) HeartbeatTopic() string {
	p := c.Destination.Heartbeat.TopicPrefix
	if p == "" {
		p = DefaultHeartbeatTopicPrefix
	}
	return p + "." + c.LogicalName()
}

// TopicCreation is Kafka Connect's topic.creation.* (KIP-158), which
// Debezium's connectors use: how a topic Tributary creates
// (create_missing_topics) is made. A topic takes the first group, in the
// order listed, whose include matches its whole name and whose exclude
// does not; else Default. Existing topics are never altered.
type TopicCreation struct {
	// Default is topic.creation.default.*.
	Default TopicDefault `yaml:"default" json:"default"`
	// Groups are topic.creation.groups with topic.creation.<name>.*,
	// in the order they are tried.
	Groups []TopicGroup `yaml:"groups" json:"groups"`
}

// TopicDefault is topic.creation.default.*: how a topic no group takes
// is created.
type TopicDefault struct {
	// Partitions and ReplicationFactor: -1 (or 0, left out) is the
	// cluster's default.
	Partitions        int `yaml:"partitions" json:"partitions"`
	ReplicationFactor int `yaml:"replication_factor" json:"replication_factor"`
	// Config is passed to the broker as the new topic's configs.
	Config map[string]string `yaml:"config" json:"config"`
}

// TopicGroup is one group of topic.creation.groups.
type TopicGroup struct {
	// Name is the group's alias (topic.creation.groups).
	Name string `yaml:"name" json:"name"`
	// Include and Exclude are regular expressions matched against the
	// whole topic name; exclude wins.
	Include []string `yaml:"include" json:"include"`
	Exclude []string `yaml:"exclude" json:"exclude"`
	// Partitions and ReplicationFactor: -1 is the cluster's default; 0
	// (left out) is -1 in Default, Default's value in a group.
	Partitions        int `yaml:"partitions" json:"partitions"`
	ReplicationFactor int `yaml:"replication_factor" json:"replication_factor"`
	// Config is passed to the broker as the new topic's configs
	// (cleanup.policy, retention.ms, compression.type,
	// min.insync.replicas, …). A group's does not inherit Default's, as
	// in Kafka Connect.
	Config map[string]string `yaml:"config" json:"config"`
}

// TopicSettings is how one topic is created.
type TopicSettings struct {
	// Field is the settings' place in the configuration, for errors
	// ("destination.topic_creation.groups[0] (events)"); "" when
	// topic_creation is not set.
	Field             string
	Partitions        int32 // -1: the cluster's default
	ReplicationFactor int16 // -1: the cluster's default
	Configs           map[string]string
}

// TopicRule picks a topic's TopicSettings by name; built once from a
// validated TopicCreation.
type TopicRule struct {
	def    TopicSettings
	groups []topicGroupRule
}

type topicGroupRule struct {
	settings         TopicSettings
	include, exclude []*regexp.Regexp
}

// Rule compiles tc (Validate has checked it). The zero TopicCreation
// gives every topic the cluster's defaults, as create_missing_topics
// always did.
func (tc TopicCreation) Rule() *TopicRule {
	r := &TopicRule{def: TopicSettings{Partitions: orDefault(tc.Default.Partitions, -1),
		ReplicationFactor: int16(orDefault(tc.Default.ReplicationFactor, -1)), Configs: tc.Default.Config}}
	if tc.Default.Partitions != 0 || tc.Default.ReplicationFactor != 0 || len(tc.Default.Config) > 0 {
		r.def.Field = "destination.topic_creation.default"
	}
	for i, g := range tc.Groups {
		gr := topicGroupRule{settings: TopicSettings{Field: fmt.Sprintf("destination.topic_creation.groups[%d] (%s)", i, g.Name), Partitions: orDefault(g.Partitions, r.def.Partitions),
			ReplicationFactor: int16(orDefault(g.ReplicationFactor, int32(r.def.ReplicationFactor))), Configs: g.Config}}
		for _, s := range g.Include {
			if re, err := wholeName(s); err == nil {
				gr.include = append(gr.include, re)
			}
		}
		for _, s := range g.Exclude {
			if re, err := wholeName(s); err == nil {
				gr.exclude = append(gr.exclude, re)
			}
		}
		r.groups = append(r.groups, gr)
	}
	return r
}

func orDefault[T int | int32](v T, def int32) int32 {
	if v == 0 {
		return def
	}
	return int32(v)
}

// For returns the settings topic is created with: the first group that
// includes and does not exclude it, else the default group.
func (r *TopicRule) For(topic string) TopicSettings {
	for _, g := range r.groups {
		if matchAny(g.include, topic) && !matchAny(g.exclude, topic) {
			return g.settings
		}
	}
	return r.def
}

// All are the settings of every group that is set, the default group
// first (when set): what a connection test validates.
func (r *TopicRule) All() []TopicSettings {
	var out []TopicSettings
	if r.def.Field != "" {
		out = append(out, r.def)
	}
	for _, g := range r.groups {
		out = append(out, g.settings)
	}
	return out
}

func matchAny(res []*regexp.Regexp, s string) bool {
	return slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(s) })
}

// wholeName compiles a group's regular expression to match a whole topic
// name, as Java's Matcher.matches does in Kafka Connect.
func wholeName(expr string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + expr + `)$`)
}

// topicGroupName is a group name Kafka Connect accepts as an alias in
// topic.creation.<name>.*.
var topicGroupName = boundedPattern(`^[A-Za-z0-9_-]+$`, 1, 64, nil)

func (v validator) heartbeat(c *Config) {
	h := c.Destination.Heartbeat
	if h.Interval != "" && h.Interval != "0" {
		d, err := time.ParseDuration(h.Interval)
		if err != nil || d < 0 {
			v.add("destination.heartbeat.interval", "must be a Go duration such as 10s or 1m (0: no heartbeats), not %s", v.plain("destination.heartbeat.interval", h.Interval))
		} else if d > 0 && d < 10*time.Millisecond {
			v.add("destination.heartbeat.interval", "must be at least 10ms (or 0: no heartbeats)")
		}
	}
	if h.TopicPrefix != "" {
		if bad := v.badCharacter("destination.heartbeat.topic_prefix", h.TopicPrefix, isTopicChar); bad != "" {
			v.add("destination.heartbeat.topic_prefix", "%s; use letters, digits, '.', '_' and '-' only", bad)
		}
	}
	if len(c.HeartbeatTopic()) > maxTopicName {
		v.add("destination.heartbeat.topic_prefix", "makes the heartbeat topic %d characters long; Kafka allows %d", len(c.HeartbeatTopic()), maxTopicName)
	}
}

func (v validator) topicCreation(c *Config) {
	tc := c.Destination.TopicCreation
	set := tc.Default.Partitions != 0 || tc.Default.ReplicationFactor != 0 || len(tc.Default.Config) > 0 || len(tc.Groups) > 0
	if set && !c.Destination.CreateMissingTopics {
		v.add("destination.topic_creation", "applies only to topics Tributary creates: set destination.create_missing_topics: true, or remove it")
	}
	v.topicGroup("destination.topic_creation.default", TopicGroup{Partitions: tc.Default.Partitions, ReplicationFactor: tc.Default.ReplicationFactor, Config: tc.Default.Config}, true)
	names := map[string]bool{}
	for i, g := range tc.Groups {
		field := fmt.Sprintf("destination.topic_creation.groups[%d]", i)
		v.topicGroup(field, g, false)
		if names[g.Name] {
			v.add(field+".name", "%s names another group too; names must be unique", v.plain(field+".name", g.Name))
		}
		names[g.Name] = true
	}
}

func (v validator) topicGroup(field string, g TopicGroup, isDefault bool) {
	if !isDefault {
		switch {
		case g.Name == "":
			v.add(field+".name", "required: the group's name (Kafka Connect's alias in topic.creation.groups)")
		case g.Name == "default":
			v.add(field+".name", "default is the default group's (destination.topic_creation.default); choose another name")
		case !topicGroupName.MatchString(g.Name):
			v.add(field+".name", "%s; use up to 64 letters, digits, '_' and '-'", v.plain(field+".name", g.Name))
		}
		if len(g.Include) == 0 {
			v.add(field+".include", "required: one or more regular expressions matching whole topic names")
		}
	}
	for _, list := range []struct {
		key   string
		exprs []string
	}{{"include", g.Include}, {"exclude", g.Exclude}} {
		for j, expr := range list.exprs {
			if _, err := regexp.Compile(expr); err != nil {
				// The rule, not the text: the expression may come from a
				// reference, whose value is never quoted back.
				msg := "does not parse"
				var se *syntax.Error
				if errors.As(err, &se) {
					msg = se.Code.String()
				}
				v.add(fmt.Sprintf("%s.%s[%d]", field, list.key, j), "not a valid regular expression: %s (RE2 syntax: no lookarounds or backreferences)", msg)
			} else if _, err := wholeName(expr); err != nil {
				// An expression that only parses alone, such as one ending in
				// an escape, cannot be matched against a whole name.
				v.add(fmt.Sprintf("%s.%s[%d]", field, list.key, j), "not a valid regular expression for a whole topic name")
			}
		}
	}
	if g.Partitions < -1 {
		v.add(field+".partitions", "must be 1 or more, or -1 (the cluster's default), not %d", g.Partitions)
	}
	if g.ReplicationFactor < -1 || g.ReplicationFactor > 32767 {
		v.add(field+".replication_factor", "must be from 1 to 32767, or -1 (the cluster's default), not %d", g.ReplicationFactor)
	}
	for k := range g.Config {
		if k == "" || strings.TrimSpace(k) != k {
			v.add(field+".config", "has an empty or padded topic config name %q", k)
		}
	}
}
