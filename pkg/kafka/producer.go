package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/config"
)

// Delivery settings (DESIGN.md §1 Delivery).
const (
	// MaxAttempts is how often one record is tried before the pipeline fails.
	MaxAttempts = 10
	// MaxBackoff caps the wait between attempts.
	MaxBackoff = 5 * time.Second
	// maxBufferedBytes bounds what is handed to the producer but not yet
	// acknowledged; Produce blocks beyond it (backpressure).
	maxBufferedBytes = 64 << 20
	linger           = 5 * time.Millisecond
)

// Producer publishes records idempotently with acks=all and LZ4 batches,
// partitioned by murmur2 of the key like the Java client.
type Producer struct {
	cl     *kgo.Client
	adm    *kadm.Client
	create bool

	mu     sync.Mutex
	topics map[string]bool // topics known to exist
}

// NewProducer connects lazily: the first request dials.
func NewProducer(d config.Destination) (*Producer, error) {
	opts, err := ClientOpts(d)
	if err != nil {
		return nil, err
	}
	maxBytes := int32(d.MaxMessageBytes)
	if maxBytes <= 0 {
		maxBytes = 1 << 20
	}
	opts = append(opts,
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(kgo.Lz4Compression(), kgo.NoCompression()),
		kgo.ProducerLinger(linger),
		kgo.MaxBufferedBytes(maxBufferedBytes),
		kgo.MaxBufferedRecords(1<<20),
		// A batch must hold at least one record of the largest allowed size
		// plus its overhead.
		kgo.ProducerBatchMaxBytes(maxBytes+64<<10),
		kgo.RecordRetries(MaxAttempts),
		kgo.RetryBackoffFn(backoff),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	return &Producer{cl: cl, adm: kadm.NewClient(cl), create: d.CreateMissingTopics, topics: map[string]bool{}}, nil
}

// backoff doubles from 100 ms up to MaxBackoff.
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

// Close stops the client; records still buffered fail.
func (p *Producer) Close() { p.cl.Close() }

// ErrTopicMissing is returned for a topic that does not exist when topics
// may not be created.
var ErrTopicMissing = errors.New("topic does not exist")

// EnsureTopic makes sure topic exists before it is written: with
// create_missing_topics it is created with the cluster's default partitions
// and replication factor; otherwise a missing topic is an error. Existing
// topics are never altered.
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
	if !exists {
		if !p.create {
			return fmt.Errorf("topic %s does not exist (set destination.create_missing_topics or create it): %w", topic, ErrTopicMissing)
		}
		resp, err := p.adm.CreateTopic(ctx, -1, -1, nil, topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", topic, err)
		}
	}
	p.mu.Lock()
	p.topics[topic] = true
	p.mu.Unlock()
	return nil
}
