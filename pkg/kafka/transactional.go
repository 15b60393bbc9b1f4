package kafka

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TransactionTimeout is how long the coordinator lets one of our
// transactions stay open before it aborts it (and fences the producer).
// It bounds how long a frozen owner's open transaction can hold back
// read_committed consumers when no successor takes over; a successor's
// initialisation aborts it at once. 60 s; tests shorten it with
// TRIBUTARY_TEST_TRANSACTION_TIMEOUT (a Go duration), never set in
// production.
var TransactionTimeout = transactionTimeout(os.Getenv("TRIBUTARY_TEST_TRANSACTION_TIMEOUT"))

func transactionTimeout(v string) time.Duration {
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d
	}
	return 60 * time.Second
}

// ErrFenced is wrapped when the broker refused this producer because a
// newer one with the same transactional id initialised (another task took
// the pipeline over) or the coordinator aborted a transaction that
// outlived TransactionTimeout.
var ErrFenced = errors.New("kafka: producer fenced by a newer owner of the transactional id")

// NewTransactionalProducer is NewProducer with a transactional id: every
// record is published inside a transaction (BeginTransaction,
// CommitTransaction), and the first use fences any earlier producer of
// the same id at the broker, aborting its open transaction.
func NewTransactionalProducer(d Options, transactionalID string, extra ...kgo.Opt) (*Producer, error) {
	opts := []kgo.Opt{kgo.TransactionalID(transactionalID), kgo.TransactionTimeout(TransactionTimeout)}
	return NewProducer(d, append(opts, extra...)...)
}

// Fence initialises the producer's id and epoch with the transaction
// coordinator. From then on every earlier producer of the transactional id
// is fenced: its open transaction is aborted, and it can neither write nor
// commit. Call it before reading the offsets topic, so that no transaction
// of an earlier owner can commit after the read.
func (p *Producer) Fence(ctx context.Context) error {
	if _, _, err := p.cl.ProducerID(ctx); err != nil {
		return transactionError("initialise the transactional producer", err)
	}
	return nil
}

// BeginTransaction opens a transaction; Publish then writes inside it.
func (p *Producer) BeginTransaction() error {
	if err := p.cl.BeginTransaction(); err != nil {
		return transactionError("begin a transaction", err)
	}
	return nil
}

// CommitTransaction waits until every record of the open transaction is
// acknowledged or failed, and commits it. A record that failed does not
// stop the commit: franz-go, unlike the Java producer, commits whatever
// succeeded (its txn.go says so), and a failed produce fails the
// transactional producer's id only for some errors (a record that ran out
// of attempts or time on a retriable one, NOT_ENOUGH_REPLICAS say, does
// not). The caller must therefore check that every record it published
// was acknowledged before it calls this, and abort otherwise. After an
// error the transaction must be aborted (AbortTransaction); ErrFenced
// means another task owns the pipeline now.
func (p *Producer) CommitTransaction(ctx context.Context) error {
	if err := p.cl.Flush(ctx); err != nil {
		return transactionError("flush the transaction", err)
	}
	err := p.cl.EndTransaction(ctx, kgo.TryCommit)
	if errors.Is(err, kerr.OperationNotAttempted) {
		// A record failed, so the client did not try to commit; the
		// abort that must follow says why (fenced, say).
		if aerr := p.cl.EndTransaction(ctx, kgo.TryAbort); aerr != nil {
			err = fmt.Errorf("%w (abort: %w)", err, aerr)
		}
	}
	if err != nil {
		return transactionError("commit the transaction", err)
	}
	return nil
}

// AbortTransaction drops what is buffered and aborts the open transaction:
// read_committed consumers never see its records.
func (p *Producer) AbortTransaction(ctx context.Context) error {
	if err := p.cl.AbortBufferedRecords(ctx); err != nil {
		return transactionError("abort the transaction", err)
	}
	if err := p.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		return transactionError("abort the transaction", err)
	}
	return nil
}

// AbortBuffered fails every record handed over but not yet written to a
// broker connection, at once, without waiting for the requests in flight:
// those (at most the client's in-flight produce requests per broker) can
// still land. For a task that lost its lease in at-least-once mode.
func (p *Producer) AbortBuffered() { p.cl.UnsafeAbortBufferedRecords() }

// transactionError says in words what the broker's transaction errors mean.
func transactionError(what string, err error) error {
	switch {
	case errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch), errors.Is(err, kerr.TransactionalIDNotFound),
		errors.Is(err, kerr.InvalidProducerIDMapping):
		return fmt.Errorf("%s: %w: %w", what, ErrFenced, err)
	case errors.Is(err, kerr.TransactionalIDAuthorizationFailed):
		return fmt.Errorf("%s: the principal may not use this transactional id (grant Describe and Write on it, or on MSK kafka-cluster:DescribeTransactionalId and AlterTransactionalId): %w", what, err)
	case errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.UnsupportedVersion):
		return fmt.Errorf("%s: the cluster does not support transactions or its transaction coordinator is not available (check transaction.state.log.replication.factor and min.isr): %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// EnsureOffsetsTopic makes sure the offsets topic exists: with
// create_missing_topics it is created compacted with one partition;
// otherwise a missing one is an error saying how to create it.
func (p *Producer) EnsureOffsetsTopic(ctx context.Context, topic string) error {
	missing, err := p.MissingTopics(ctx, []string{topic})
	if err != nil || len(missing) == 0 {
		return err
	}
	if !p.opts.CreateMissingTopics {
		return fmt.Errorf("offsets topic %s does not exist: create it compacted (cleanup.policy=compact) with one partition, or set destination.create_missing_topics", topic)
	}
	compact := "compact"
	resp, err := p.adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": &compact}, topic)
	if resp.Err != nil {
		err = withMessage(resp.Err, resp.ErrMessage)
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create offsets topic %s: %w", topic, err)
	}
	return nil
}

// ReadLastCommitted returns the value of the last committed record with
// key in topic, read with isolation level read_committed from the start to
// the end the topic had when called (found false: none, or the last one is
// a tombstone). Every writer of the topic is transactional, so the log
// always ends with a transaction marker; control records are kept to see
// that end even when the last transaction was aborted.
func ReadLastCommitted(ctx context.Context, d Options, topic string, key []byte) (value []byte, found bool, err error) {
	opts, err := ClientOpts(d)
	if err != nil {
		return nil, false, err
	}
	opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(), kgo.FetchMaxWait(500*time.Millisecond))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, false, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	want, err := endOffsets(ctx, kadm.NewClient(cl), topic)
	if err != nil {
		return nil, false, err
	}
	start := map[string]map[int32]kgo.Offset{topic: {}}
	for part := range want {
		start[topic][part] = kgo.NewOffset().AtStart()
	}
	if len(want) == 0 {
		return nil, false, nil
	}
	cl.AddConsumePartitions(start)
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, false, fmt.Errorf("read %s: %w", topic, err)
		}
		var fetchErr error
		fs.EachError(func(_ string, part int32, err error) {
			fetchErr = fmt.Errorf("read %s partition %d: %w", topic, part, err)
		})
		if fetchErr != nil {
			return nil, false, fetchErr
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := want[r.Partition]
			if !ok {
				return
			}
			if r.Offset < end && !r.Attrs.IsControl() && string(r.Key) == string(key) {
				value, found = r.Value, r.Value != nil
			}
			// The record at end-1 may be an aborted one, which is
			// dropped: its marker, past end, ends the read too.
			if r.Offset+1 >= end {
				delete(want, r.Partition)
			}
		})
	}
	return value, found, nil
}

// ReadLastCommitted is ReadLastCommitted on the producer's destination.
func (p *Producer) ReadLastCommitted(ctx context.Context, topic string, key []byte) ([]byte, bool, error) {
	return ReadLastCommitted(ctx, p.opts, topic, key)
}

// endOffsetsPatience is how long endOffsets asks again while the cluster
// answers with a retriable error.
const endOffsetsPatience = 60 * time.Second

// endOffsets returns the end offset of each non-empty partition of topic:
// the end including open transactions, so that reading up to it waits
// until they are decided and none can commit a position after the read.
// A retriable answer (as in a rolling restart: a broker that has
// just started answers UNKNOWN_TOPIC_OR_PARTITION for the offsets topic
// until it has caught up with the cluster's metadata; a partition without
// a leader) is asked again for up to endOffsetsPatience instead of ending
// the task.
func endOffsets(ctx context.Context, adm *kadm.Client, topic string) (map[int32]int64, error) {
	deadline := time.Now().Add(endOffsetsPatience)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		want, err := endOffsetsOnce(ctx, adm, topic)
		if err == nil || !kerr.IsRetriable(err) || time.Now().After(deadline) {
			return want, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (%w)", err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

func endOffsetsOnce(ctx context.Context, adm *kadm.Client, topic string) (map[int32]int64, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	want := map[int32]int64{}
	var listErr error
	ends.Each(func(o kadm.ListedOffset) {
		switch {
		case o.Err != nil:
			listErr = fmt.Errorf("end offset of %s partition %d: %w", topic, o.Partition, o.Err)
		case o.Offset > 0:
			want[o.Partition] = o.Offset
		}
	})
	return want, listErr
}
