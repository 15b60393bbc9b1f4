package kafka

import (
	"errors"
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// stallErrors are the retriable produce errors that say the cluster cannot
// accept writes right now (too few in-sync replicas, no reachable leader,
// a leader election or a broker restart under way), not that anything is
// wrong with the record: they pass once the brokers are back, which is
// what a multi-broker cluster does during MSK patching or an outage of
// two brokers. A topic deleted under a running pipeline (UNKNOWN_TOPIC_ID,
// or UNKNOWN_TOPIC_OR_PARTITION once the metadata says it is gone: every
// topic existed before its first record) is one too: the retry from the
// checkpoint goes through the topic rules of docs/delivery.md again (create it
// with create_missing_topics, else wait for it and report it missing), as
// a restarted task would. CORRUPT_MESSAGE (retriable to Kafka, but about
// the record) is not among them.
var stallErrors = []error{
	kerr.NotEnoughReplicas,
	kerr.NotEnoughReplicasAfterAppend,
	kerr.LeaderNotAvailable,
	kerr.NotLeaderForPartition,
	kerr.RequestTimedOut,
	kerr.BrokerNotAvailable,
	kerr.ReplicaNotAvailable,
	kerr.NetworkException,
	kerr.KafkaStorageError,
	kerr.FencedLeaderEpoch,
	kerr.UnknownLeaderEpoch,
	kerr.UnknownTopicID,
	kerr.UnknownTopicOrPartition,
	// The broker refuses the record's timestamp (a topic's
	// message.timestamp.before.max.ms or after.max.ms against its clock).
	// franz-go stamps a record when it sends it (Publish sets none), so the
	// refusal is about the clocks or the topic's setting now, not the
	// record: the retry from the checkpoint stamps it anew.
	kerr.InvalidTimestamp,
	// publish_timeout ran out, or the attempts on a partition whose
	// leader could not be reached: the record waited on the cluster.
	kgo.ErrRecordTimeout,
	kgo.ErrRecordRetries,
}

// IsStall reports whether err, a publish failure (*PublishError), means
// the cluster cannot accept writes right now: the pipeline then waits and
// resumes from its checkpoint instead of stopping (a stall,
// docs/delivery.md). Any other publish failure, and any
// error that is not a publish failure, is not a stall: a record the broker
// refuses for good (a poison record) still stops the pipeline.
func IsStall(err error) bool {
	var pe *PublishError
	if !errors.As(err, &pe) {
		return false
	}
	var tl *TopicLimitError
	if errors.As(pe.Err, &tl) {
		return true // its batches were too large, not it (messagesize.go)
	}
	for _, s := range stallErrors {
		if errors.Is(pe.Err, s) {
			return true
		}
	}
	// A broker that cannot be reached (refused, reset, timed out): franz-go
	// fails the partition's records with the dial or read error.
	var ne net.Error
	return errors.As(pe.Err, &ne)
}
