package debezium

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// maxTopicLen is Kafka's limit on topic name length.
const maxTopicLen = 249

// topicName builds the topic of a table as Debezium's default topic naming
// strategy does: <prefix>.<schema>.<table> (PostgreSQL; a table unified
// across schemas has schema "_"), <prefix>.<db>.<table> for a table without
// a schema (MySQL, MongoDB collections), <prefix>.<db>.<schema>.<table>
// when the database is part of the name (SQL Server; unified across
// databases, the db is blank). Blank parts are skipped, then every
// character outside [A-Za-z0-9._-] becomes '_' (one per UTF-16 unit, as
// Java iterates a String's chars), the name is cut to 249 characters, and
// "." / ".." become "_" / "__". Debezium logs a warning when it changes a
// name; callers that care can compare Topic with the raw name.
// TopicName is the default topic of table id under prefix, as
// topicName makes it: what a source that names its own messages (MongoDB,
// for each message) calls its topic and names its schemas after. A
// <prefix>.<db>.<table> Kafka accepts as it is costs one concatenation.
func TopicName(prefix string, id change.TableID) string {
	if prefix != "" && id.DB != "" && id.Name != "" && id.Schema == "" && !id.DBInTopic {
		if s := prefix + "." + id.DB + "." + id.Name; validTopic(s) {
			return s
		}
	}
	return topicName(prefix, id)
}

func topicName(prefix string, id change.TableID) string {
	parts := [...]string{prefix, "", id.Schema, id.Name}
	switch {
	case id.DBInTopic:
		parts[1] = id.DB
	case id.Schema == "":
		parts[2] = id.DB
	}
	var b strings.Builder
	for _, part := range parts {
		if strings.TrimSpace(part) == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(part)
	}
	return sanitizeTopic(b.String())
}

func sanitizeTopic(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if validTopicByte(c) {
				b = append(b, c)
			} else {
				b = append(b, '_')
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		b = append(b, '_')
		if r > 0xFFFF { // a surrogate pair in Java: two chars
			b = append(b, '_')
		}
		i += size
	}
	if len(b) > maxTopicLen {
		b = b[:maxTopicLen]
	}
	switch string(b) {
	case ".":
		return "_"
	case "..":
		return "__"
	}
	return string(b)
}

// validTopic tells whether Kafka accepts s as a topic name.
func validTopic(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > maxTopicLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !validTopicByte(s[i]) {
			return false
		}
	}
	return true
}

func validTopicByte(c byte) bool {
	return c == '.' || c == '_' || c == '-' ||
		'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
}

// TopicCollisionError says two different tables would publish to one
// topic: either the same name once sanitized ("my table" and my_table,
// "表" and "桌"), or two names Kafka treats as one because they differ
// only in '.' and '_' (a.b_c and a_b.c). Debezium publishes both tables
// to the one topic; Tributary refuses, because a consumer keyed on the
// message key would read a change of one table as a change of the other.
type TopicCollisionError struct {
	Table, Other      change.TableID // Table is the one seen second
	Topic, OtherTopic string
}

func (e *TopicCollisionError) Error() string {
	fix := "; Tributary never mixes two tables in one topic: leave one of them out of source.tables (list the tables to capture), or rename one"
	if e.Topic == e.OtherTopic {
		return fmt.Sprintf("tables '%s' and '%s' would both publish to topic %s (characters Kafka does not allow in topic names become '_')%s",
			e.Other.String(), e.Table.String(), e.Topic, fix)
	}
	return fmt.Sprintf("tables '%s' and '%s' would publish to topics %s and %s, which Kafka treats as the same topic (names that differ only in '.' and '_' collide)%s",
		e.Other.String(), e.Table.String(), e.OtherTopic, e.Topic, fix)
}

// topicClaims remembers which table publishes to which topic, so that a
// second table is refused before anything of it is published.
type topicClaims struct {
	mu sync.Mutex
	by map[string]topicClaim // collisionKey(topic) → the table that has it
}

type topicClaim struct {
	id    change.TableID
	topic string
}

// claim records that id publishes to topic, or returns a
// *TopicCollisionError naming the table that already does.
func (c *topicClaims) claim(id change.TableID, topic string) error {
	k := collisionKey(topic)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.by[k]; ok {
		if old.id == id {
			return nil
		}
		return &TopicCollisionError{Table: id, Topic: topic, Other: old.id, OtherTopic: old.topic}
	}
	if c.by == nil {
		c.by = map[string]topicClaim{}
	}
	c.by[k] = topicClaim{id: id, topic: topic}
	return nil
}

// collisionKey is Kafka's rule for topics that may not coexist: names
// equal once every '.' is read as '_' (Topic.unifyCollisionChars).
func collisionKey(topic string) string { return strings.ReplaceAll(topic, ".", "_") }
