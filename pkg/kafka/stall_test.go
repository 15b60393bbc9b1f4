package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestIsStall: the errors of a cluster that cannot take writes for a while
// (two of three brokers down, a leader election, a broker out of reach)
// are stalls, as franz-go hands them to a record's promise; a record the
// broker refuses for good, a record's own corruption and errors that are
// not publish failures are not.
func TestIsStall(t *testing.T) {
	pub := func(err error) error {
		return fmt.Errorf("publish failed: %w", &PublishError{Topic: "t", Partition: 1, Err: err})
	}
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{pub(kerr.NotEnoughReplicas), true},
		{pub(kerr.NotEnoughReplicasAfterAppend), true},
		{pub(kerr.LeaderNotAvailable), true},
		{pub(kerr.NotLeaderForPartition), true},
		{pub(kerr.RequestTimedOut), true},
		{pub(kerr.KafkaStorageError), true},
		{pub(kgo.ErrRecordTimeout), true},
		{pub(kgo.ErrRecordRetries), true},
		{pub(fmt.Errorf("unable to dial: %w", dial)), true},
		// A topic deleted while streaming: the retry waits for it.
		{pub(kerr.UnknownTopicID), true},
		{pub(kerr.UnknownTopicOrPartition), true},
		// A topic refusing the timestamps the producer gives now.
		{pub(kerr.InvalidTimestamp), true},
		// Poison records and configuration problems stop the pipeline.
		{pub(kerr.CorruptMessage), false},
		{pub(kerr.InvalidRecord), false},
		{pub(kerr.MessageTooLarge), false},
		{pub(&RecordTooLargeError{Topic: "t", Size: 30000, Limit: 20000, Err: kerr.MessageTooLarge}), false},
		// A batch too large for a limit lowered under the producer.
		{pub(&TopicLimitError{Topic: "t", Limit: 1 << 20, Err: kerr.MessageTooLarge}), true},
		{pub(kerr.TopicAuthorizationFailed), false},
		{pub(context.Canceled), false},
		{pub(errors.New("something else")), false},
		// Only a publish failure can be a stall.
		{kerr.NotEnoughReplicas, false},
		{fmt.Errorf("save checkpoint: %w", dial), false},
		{nil, false},
	} {
		if got := IsStall(c.err); got != c.want {
			t.Errorf("IsStall(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
