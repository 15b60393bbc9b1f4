package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Delivery settings (docs/delivery.md).
const (
	// MaxAttempts is how often one record is tried before the pipeline fails.
	MaxAttempts = 10
	// MaxBackoff caps the wait between attempts.
	MaxBackoff = 5 * time.Second
	linger     = 5 * time.Millisecond
)

// Producer publishes records idempotently with acks=all and LZ4 batches,
// partitioned by murmur2 of the key like the Java client.
type Producer struct {
	cl   *kgo.Client
	adm  *kadm.Client
	opts Options    // create_missing_topics, message_compression; the offsets reader of transactions
	gate *writeGate // GateWrites (gate.go)

	mu     sync.Mutex
	topics map[string]bool // topics known to exist
	limits *topicLimits    // each topic's max.message.bytes (messagesize.go)
	counts partitionCounts // each topic's partitions (partitioner.go)

	// Receipts holds the write receipts of what was acknowledged (receipts.go).
	Receipts *Receipts
}

// NewProducer connects lazily: the first request dials. extra options are
// applied last (tests use them for a faster backoff); NewProducer refuses
// any combination whose effective settings break at-least-once delivery
// (see CheckSettings).
func NewProducer(o Options, extra ...kgo.Opt) (*Producer, error) {
	gate := &writeGate{}
	opts, err := clientOpts(o, gate.dialer(defaultDial))
	if err != nil {
		return nil, err
	}
	maxBytes := int32(o.MaxMessageBytes)
	if maxBytes <= 0 {
		maxBytes = 1 << 20
	}
	limits := &topicLimits{def: maxBytes}
	opts = append(opts, producerOpts(o, limits)...)
	opts = append(opts,
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.WithCompressor(newLZ4Batches()), // LZ4, as franz-go's codec writes it but cheaper (lz4.go)
		kgo.ProducerLinger(linger),
		// kgo retries while tries <= RecordRetries: n retries are n+1 attempts.
		kgo.RecordRetries(MaxAttempts-1),
		kgo.RetryBackoffFn(backoff),
		kgo.RecordPartitioner(columnPartitioner{kgo.StickyKeyPartitioner(nil)}),
	)
	opts = append(opts, extra...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	if err := CheckSettings(cl); err != nil {
		cl.Close()
		return nil, err
	}
	return &Producer{cl: cl, adm: kadm.NewClient(cl), opts: o, gate: gate, topics: map[string]bool{}, limits: limits, Receipts: newReceipts()}, nil
}

// ErrUnsafeProducer is returned by CheckSettings.
var ErrUnsafeProducer = errors.New("producer settings break at-least-once delivery")

// CheckSettings reads back the client's effective producer settings and
// fails unless they are what at-least-once, in-order delivery needs:
// idempotent writes, acks=all, and a bounded number of attempts.
func CheckSettings(cl *kgo.Client) error {
	var problems []string
	if acks, _ := cl.OptValue(kgo.RequiredAcks).(kgo.Acks); acks != kgo.AllISRAcks() {
		problems = append(problems, "acks is not all")
	}
	if off, _ := cl.OptValue(kgo.DisableIdempotentWrite).(bool); off {
		problems = append(problems, "idempotent writes are off")
	}
	if n, _ := cl.OptValue(kgo.RecordRetries).(int64); n < 0 || n+1 > MaxAttempts {
		problems = append(problems, fmt.Sprintf("record attempts are %d, want 1 to %d", n+1, MaxAttempts))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s; refusing to run", ErrUnsafeProducer, strings.Join(problems, ", "))
	}
	return nil
}

// backoff doubles from 100 ms up to MaxBackoff. It spaces retries of
// failed requests; a partition-level produce error instead waits for the
// next metadata refresh, which franz-go does at most every MetadataMinAge
// (5 s by default), so those retries come about 5 s apart: still within
// the cap.
func backoff(attempt int) time.Duration {
	d := 100 * time.Millisecond
	for i := 1; i < attempt && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// Produce hands r to the producer; promise runs once the broker
// acknowledged it or every attempt failed. It blocks while too much is in
// flight.
func (p *Producer) Produce(ctx context.Context, r *kgo.Record, promise func(*kgo.Record, error)) {
	p.cl.Produce(ctx, r, promise)
}

// Flush waits until every record handed over is acknowledged or failed.
func (p *Producer) Flush(ctx context.Context) error { return p.cl.Flush(ctx) }

// Hurry sends what the producer holds without waiting for the linger, and
// does not wait for it to be acknowledged: for a caller that knows no more
// records are coming soon. Records handed over afterwards linger again.
func (p *Producer) Hurry() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = p.cl.Flush(ctx) // a done context: franz-go unlingers every batch and returns at once
}

// Close stops the client; records still buffered fail.
func (p *Producer) Close() { p.cl.Close() }

// ErrTopicMissing is returned (wrapped in a *TopicMissingError) for a topic
// that does not exist when topics may not be created.
var ErrTopicMissing = errors.New("topic does not exist")

// TopicMissingError names the missing topic: "topic <name> does not exist".
type TopicMissingError struct{ Topic string }

func (e *TopicMissingError) Error() string { return "topic " + e.Topic + " does not exist" }

// Is makes errors.Is(err, ErrTopicMissing) hold.
func (e *TopicMissingError) Is(target error) bool { return target == ErrTopicMissing }

// MissingTopics returns those of topics that do not exist, in order. It
// reads metadata only; a topic the principal may not describe is an error
// carrying the broker's.
func (p *Producer) MissingTopics(ctx context.Context, topics []string) ([]string, error) {
	if len(topics) == 0 {
		return nil, nil
	}
	details, err := p.adm.ListTopics(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("describe topics: %w", err)
	}
	var missing []string
	for _, t := range topics {
		td, ok := details[t]
		switch {
		case !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition):
			missing = append(missing, t)
		case td.Err != nil:
			return nil, fmt.Errorf("describe topic %s: %w", t, td.Err)
		}
	}
	return missing, nil
}

// EnsureTopic makes sure topic exists before it is written: with
// create_missing_topics it is created with the cluster's default partitions
// and replication factor; otherwise a cluster that creates topics
// automatically may do so (autocreate.go), and where it does not, a
// missing topic is an error. Existing topics are never altered.
func (p *Producer) EnsureTopic(ctx context.Context, topic string) error {
	p.mu.Lock()
	known := p.topics[topic]
	p.mu.Unlock()
	if known {
		return nil
	}
	details, err := p.adm.ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("describe topic %s: %w", topic, err)
	}
	td, ok := details[topic]
	exists := ok && td.Err == nil
	if ok && td.Err != nil && !errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		return fmt.Errorf("describe topic %s: %w", topic, td.Err)
	}
	if !exists && !p.opts.CreateMissingTopics && !p.autoCreated(ctx, topic) {
		return &TopicMissingError{Topic: topic}
	}
	if !exists && p.opts.CreateMissingTopics {
		spec := p.topicSpec(topic)
		resp, err := p.adm.CreateTopic(ctx, spec.Partitions, spec.ReplicationFactor, spec.configs(), topic)
		if resp.Err != nil { // CreateTopic returns resp.Err as err too, without the message
			err = withMessage(resp.Err, resp.ErrMessage)
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s%s: %w", topic, spec.describe(), err)
		}
	}
	p.learnLimit(ctx, topic)
	p.mu.Lock()
	p.topics[topic] = true
	p.mu.Unlock()
	return nil
}
