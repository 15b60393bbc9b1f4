package kafka

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type partitionKey struct{}

// withPartition marks a record for the partition p; the partitioner reads
// the mark from the record's context (a record field kgo carries through).
func withPartition(ctx context.Context, p int32) context.Context {
	return context.WithValue(ctx, partitionKey{}, p)
}

func fixedPartition(r *kgo.Record) (int32, bool) {
	if r.Context == nil {
		return 0, false
	}
	p, ok := r.Context.Value(partitionKey{}).(int32)
	return p, ok
}

// columnPartitioner sends a record marked with a partition there, and
// every other record where the base partitioner would.
type columnPartitioner struct{ base kgo.Partitioner }

func (c columnPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	return columnTopicPartitioner{c.base.ForTopic(topic)}
}

type columnTopicPartitioner struct{ base kgo.TopicPartitioner }

func (p columnTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	_, fixed := fixedPartition(r)
	return fixed || p.base.RequiresConsistency(r)
}

func (p columnTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if v, ok := fixedPartition(r); ok && int(v) < n {
		return int(v)
	}
	return p.base.Partition(r, n)
}

// OnNewBatch keeps the sticky partitioning of records without a key.
func (p columnTopicPartitioner) OnNewBatch() {
	if nb, ok := p.base.(kgo.TopicPartitionerOnNewBatch); ok {
		nb.OnNewBatch()
	}
}

// partitionCounts caches how many partitions each topic has; a value at
// or beyond the cached count asks the cluster again (partitions may have
// been added), at most once a second per topic.
type partitionCounts struct {
	mu sync.Mutex
	by map[string]partitionCount
}

type partitionCount struct {
	n    int
	read time.Time
}

// Partitions returns how many partitions topic has; at least is the
// partition a caller wants, so that a cached count below it is read again.
func (p *Producer) Partitions(ctx context.Context, topic string, atLeast int64) (int, error) {
	p.counts.mu.Lock()
	c, ok := p.counts.by[topic]
	p.counts.mu.Unlock()
	if ok && (int64(c.n) > atLeast || time.Since(c.read) < time.Second) {
		return c.n, nil
	}
	details, err := p.adm.ListTopics(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("describe topic %s: %w", topic, err)
	}
	td, found := details[topic]
	if !found || td.Err != nil {
		return 0, fmt.Errorf("describe topic %s: %v", topic, td.Err)
	}
	p.counts.mu.Lock()
	if p.counts.by == nil {
		p.counts.by = map[string]partitionCount{}
	}
	p.counts.by[topic] = partitionCount{n: len(td.Partitions), read: time.Now()}
	p.counts.mu.Unlock()
	return len(td.Partitions), nil
}
