package kafka

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fixedPartition is the partition a record is marked for: Publish's
// record carries its Message's in its Context (outgoing).
func fixedPartition(r *kgo.Record) (int32, bool) {
	if o, ok := r.Context.(*outgoing); ok && o.fixed {
		return o.partition, true
	}
	return 0, false
}

// columnPartitioner sends a record marked with a partition there, and
// every other record where the base partitioner would.
type columnPartitioner struct{ base kgo.Partitioner }

func (c columnPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	return &columnTopicPartitioner{base: c.base.ForTopic(topic)}
}

// columnTopicPartitioner is a topic's: franz-go calls it under a lock of
// the topic's own, so its keyHash needs none.
type columnTopicPartitioner struct {
	base kgo.TopicPartitioner
	hash keyHash
}

func (p *columnTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	_, fixed := fixedPartition(r)
	return fixed || p.base.RequiresConsistency(r)
}

// Partition never moves a marked record elsewhere: one for a partition
// franz-go does not know yet (partitions waits for it) fails with franz-go's
// "invalid record partitioning choice" instead of landing where its key
// hashes.
func (p *columnTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if v, ok := fixedPartition(r); ok {
		return int(v)
	}
	if n == 1 {
		return 0 // where any key hashes: spares murmur2 over the key and its schema
	}
	if r.Key != nil {
		// As the base (kgo.StickyKeyPartitioner's KafkaHasher) and Kafka's
		// Java producer place a keyed record.
		return int(p.hash.sum(r.Key)&0x7fffffff) % n
	}
	return p.base.Partition(r, n)
}

// OnNewBatch keeps the sticky partitioning of records without a key.
func (p *columnTopicPartitioner) OnNewBatch() {
	if nb, ok := p.base.(kgo.TopicPartitionerOnNewBatch); ok {
		nb.OnNewBatch()
	}
}

// partitionCounts caches how many partitions each topic has. Partitions
// are only ever added, so a cached count above the wanted partition holds;
// one at or below it asks the cluster again (partitions may have been
// added since), for every such row: a row is skipped as out of range only
// on a count read after it arrived.
type partitionCounts struct {
	mu sync.Mutex
	by map[string]int
}

// partitions returns how many partitions topic has; want is the partition
// a caller is about to write, so that a cached count not above it is read
// again. When want exists, Partitions returns once the producer can write
// it (awaitPartition).
func (p *Producer) partitions(ctx context.Context, topic string, want int64) (int, error) {
	n, err := p.partitionCount(ctx, topic, want)
	if err == nil && want >= 0 && want < int64(n) {
		p.awaitPartition(ctx, topic, int32(want))
	}
	return n, err
}

// PartitionRangeError is a message Publish refused because its Partition
// is negative or not below the topic's partition count (read after the
// message arrived: partitions may have been added).
type PartitionRangeError struct {
	Topic      string
	Partition  int64
	Partitions int // the topic's partition count; 0 when Partition is negative
}

func (e *PartitionRangeError) Error() string {
	if e.Partition < 0 {
		return fmt.Sprintf("partition %d of topic %s is negative", e.Partition, e.Topic)
	}
	return fmt.Sprintf("partition %d is out of range: topic %s has %d partitions", e.Partition, e.Topic, e.Partitions)
}

// checkPartition returns nil once the producer can write partition part
// of topic, a *PartitionRangeError when topic has no such partition.
func (p *Producer) checkPartition(ctx context.Context, topic string, part int64) error {
	if part < 0 {
		return &PartitionRangeError{Topic: topic, Partition: part}
	}
	n, err := p.partitions(ctx, topic, part)
	if err != nil {
		return err
	}
	if part >= int64(n) {
		return &PartitionRangeError{Topic: topic, Partition: part, Partitions: n}
	}
	return nil
}

// partitionWait bounds awaitPartition; past it the record is produced and
// fails in the partitioner if franz-go still does not know its partition.
const partitionWait = 10 * time.Second

// awaitPartition waits until franz-go's producer knows partition part of
// topic. It learns of partitions added to a topic it writes already only
// at its next metadata refresh (MetadataMaxAge, 5 minutes), and until then
// partitions by the old count; a topic it does not write yet gets its
// partitions with its first record.
func (p *Producer) awaitPartition(ctx context.Context, topic string, part int32) {
	// Known: with a leader, or with a load error (franz-go has it and
	// retries it like any partition without a leader).
	known := func(part int32) bool { l, _, err := p.cl.PartitionLeader(topic, part); return l >= 0 || err != nil }
	if known(part) || !known(0) {
		return
	}
	deadline := time.Now().Add(partitionWait)
	var refresh time.Time
	for !known(part) && time.Now().Before(deadline) {
		if time.Since(refresh) >= time.Second {
			p.cl.ForceMetadataRefresh()
			refresh = time.Now()
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// partitionCount is the topic's partition count, cached while above want.
func (p *Producer) partitionCount(ctx context.Context, topic string, want int64) (int, error) {
	p.counts.mu.Lock()
	cached, ok := p.counts.by[topic]
	p.counts.mu.Unlock()
	if ok && int64(cached) > want {
		return cached, nil
	}
	// A metadata request of its own: kadm's ListTopics answers from
	// franz-go's metadata cache, up to MetadataMinAge (5 s) old.
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, p.cl)
	if err != nil {
		return 0, fmt.Errorf("describe topic %s: %w", topic, err)
	}
	n, found := 0, false
	for _, t := range resp.Topics {
		if t.Topic != nil && *t.Topic == topic {
			if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
				return 0, fmt.Errorf("describe topic %s: %w", topic, err)
			}
			n, found = len(t.Partitions), true
		}
	}
	if !found {
		return 0, fmt.Errorf("describe topic %s: not in the metadata", topic)
	}
	p.counts.mu.Lock()
	if p.counts.by == nil {
		p.counts.by = map[string]int{}
	}
	p.counts.by[topic] = n
	p.counts.mu.Unlock()
	return n, nil
}
