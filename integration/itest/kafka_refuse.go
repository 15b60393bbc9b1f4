package itest

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
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
