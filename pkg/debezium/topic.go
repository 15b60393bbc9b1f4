package debezium

import (
	"fmt"
	"strings"
	"sync"

	"github.com/tributary-cdc/tributary/pkg/change"
)

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
