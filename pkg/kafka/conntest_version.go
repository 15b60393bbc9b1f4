package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Connection test checks of what the cluster's version allows.
const (
	CheckVersion    = "broker version"
	CheckIdempotent = "idempotent write"
)

// versionChecks reads the brokers' API versions and reports in words what
// an old cluster cannot do: before 2.4 (KIP-464) CreateTopics cannot take
// the cluster's default partitions and replication factor, so
// create_missing_topics cannot work; and an idempotent producer (which
// Tributary always is) needs, before 3.0 (KIP-679), the IdempotentWrite
// permission on the cluster, which InitProducerID probes.
func versionChecks(ctx context.Context, cl *kgo.Client, d Options, add func(name string, required, ok bool, detail string)) {
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		add(CheckVersion, false, false, "could not read the brokers' API versions: "+describeConnErr(err))
		return
	}
	vs := kversion.FromApiVersionsResponse(resp)
	guess := vs.VersionGuess()
	createTopics, _ := vs.LookupMaxKeyVersion(int16(kmsg.CreateTopics))
	produce, _ := vs.LookupMaxKeyVersion(int16(kmsg.Produce))
	if createTopics < 4 {
		add(CheckVersion, d.CreateMissingTopics, false, fmt.Sprintf("the cluster runs Kafka %s, older than 2.4: it cannot create a topic with its default partitions and replication factor, so destination.create_missing_topics cannot work; create the topics yourself", guess))
	} else {
		add(CheckVersion, false, true, "Kafka "+guess)
	}
	before30 := produce < 9 // Produce v9 came with Kafka 3.0

	err = initProducerID(ctx, cl)
	switch {
	case err == nil:
		add(CheckIdempotent, true, true, "the broker gives this principal a producer id (idempotent writes allowed)")
	case errors.Is(err, kerr.ClusterAuthorizationFailed) && before30:
		add(CheckIdempotent, true, false, "the principal lacks the IdempotentWrite permission on the cluster, which Kafka before 3.0 requires of an idempotent producer (Tributary always writes idempotently): grant it, e.g. kafka-acls --add --allow-principal User:<name> --operation IdempotentWrite --cluster")
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		add(CheckIdempotent, true, false, "the broker refuses this principal a producer id: from Kafka 3.0 that needs Write on at least one topic (or IdempotentWrite on the cluster)")
	default:
		add(CheckIdempotent, true, false, "could not get a producer id: "+describeConnErr(err))
	}
}

// initProducerID asks for a producer id, again while the broker answers
// with a retriable error: a new cluster's coordinator answers
// COORDINATOR_LOAD_IN_PROGRESS for its first seconds, which says nothing
// about what the principal may do.
func initProducerID(ctx context.Context, cl *kgo.Client) error {
	for {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionTimeoutMillis = 60000
		ip, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(ip.ErrorCode)
		}
		if err == nil || !kerr.IsRetriable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}
