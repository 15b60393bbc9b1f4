package itest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// RefuseWrites makes topic refuse every write (on) or take them again: the
// broker refuses a record whose timestamp is older than its own clock by
// more than the topic's message.timestamp.before.max.ms, here 0, and the
// producer stamps a record when it sends it (linger included), so each one
// is refused with INVALID_TIMESTAMP until the setting is removed. It is
// the one refusal of one topic that this suite's single real broker
// produces on demand: a min.insync.replicas above the replication factor
// does not refuse writes (Kafka 4 caps it at the replica count, see
// exactlyonce_failed_test.go), and MESSAGE_TOO_LARGE skips records.
func RefuseWrites(t *testing.T, adm *kadm.Client, topic string, on bool) {
	t.Helper()
	zero := "0"
	c := kadm.AlterConfig{Op: kadm.SetConfig, Name: "message.timestamp.before.max.ms", Value: &zero}
	if !on {
		c = kadm.AlterConfig{Op: kadm.DeleteConfig, Name: c.Name}
	}
	rs, err := adm.AlterTopicConfigs(context.Background(), []kadm.AlterConfig{c}, topic)
	if err == nil {
		_, err = rs.On(topic, nil)
	}
	if err != nil {
		t.Errorf("%s: set message.timestamp.before.max.ms (refuse %v): %v", topic, on, err)
	}
}

// NewAdmin is an admin client of the local Kafka, closed with the test.
func NewAdmin(t *testing.T) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(KafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// CreateSinglePartitionTopics makes the topics before Tributary does, with one
// partition each, so that the topic's order is the connector's order and
// can be compared with Debezium's message by message.
func CreateSinglePartitionTopics(t *testing.T, topics ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(KafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopics(ctx, 1, 1, nil, topics...)
	if err != nil {
		t.Fatalf("create topics: %v", err)
	}
	for _, r := range resp.Sorted() {
		if r.Err != nil {
			t.Fatalf("create topic %s: %v", r.Topic, r.Err)
		}
	}
}
