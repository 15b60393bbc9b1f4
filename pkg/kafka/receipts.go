package kafka

import (
	"cmp"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// maxGaps bounds the gaps kept per partition; beyond it the receipt
// starts again.
const maxGaps = 32

// Receipt is a write receipt: what the broker acknowledged on one topic
// partition for this pipeline. A consumer reproduces it by reading the
// partition in offset order from FirstOffset up to NextOffset
// (exclusive), leaving out the offsets of Gaps, and for each record
// counting 1 in Records, len(value) in Bytes (0 for a tombstone) and
// folding the value into CRC32C: the Castagnoli CRC-32 of every value
// concatenated in offset order. The checkpoint stores it
// (pkg/checkpoint/receipt.go, the same fields).
type Receipt struct {
	Topic       string
	Partition   int32
	Records     uint64
	Bytes       uint64
	CRC32C      uint32
	FirstOffset int64
	NextOffset  int64
	// Gaps are offset ranges [from, to) that a previous run wrote after
	// its last saved receipt and before it crashed.
	Gaps [][2]int64
}

// Receipts keeps the write receipt of every partition written: the count,
// value bytes and CRC32C of the values the broker acknowledged, in offset
// order (Receipt says how a consumer reproduces them). franz-go
// acknowledges the records of one partition in offset order, so the CRC of
// a partition is the CRC of its values as they lie in the log.
type Receipts struct {
	mu sync.Mutex
	by map[topicPartition]*Receipt
	// restored are partitions whose receipt came from a checkpoint and
	// that have had no acknowledgement in this run yet.
	restored map[topicPartition]bool
}

type topicPartition struct {
	topic     string
	partition int32
}

func newReceipts() *Receipts {
	return &Receipts{by: map[topicPartition]*Receipt{}, restored: map[topicPartition]bool{}}
}

// Restore continues from the receipts of a checkpoint.
func (r *Receipts) Restore(saved []Receipt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range saved {
		s.Gaps = slices.Clone(s.Gaps)
		k := topicPartition{s.Topic, s.Partition}
		r.by[k] = &s
		r.restored[k] = true
	}
}

// acked adds a record the broker acknowledged; crc is its value's
// (crc.go).
func (r *Receipts) acked(rec *kgo.Record, crc valueCRC) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := topicPartition{rec.Topic, rec.Partition}
	s := r.by[k]
	first := r.restored[k]
	delete(r.restored, k)
	switch {
	case s == nil || rec.Offset < s.NextOffset || (first && rec.Offset > s.NextOffset && len(s.Gaps) >= maxGaps):
		// New, or the log was truncated or the topic recreated, or too
		// many crashes: the receipt starts again at this record.
		s = &Receipt{Topic: rec.Topic, Partition: rec.Partition, FirstOffset: rec.Offset}
		r.by[k] = s
	case first && rec.Offset > s.NextOffset:
		// The first record of this run lies after the saved receipt's
		// end: the previous run wrote those offsets after its last
		// checkpoint and crashed (or, with transactions, they hold its
		// last commit marker). Within a run offsets may skip too
		// (transaction markers), and are not gaps: a consumer never sees
		// a record there.
		s.Gaps = append(s.Gaps, [2]int64{s.NextOffset, rec.Offset})
	}
	s.Records++
	s.Bytes += uint64(len(rec.Value))
	s.CRC32C = crc.appendTo(s.CRC32C)
	s.NextOffset = rec.Offset + 1
}

// Snapshot returns every partition's receipt, by topic and partition.
func (r *Receipts) Snapshot() []Receipt {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	out := make([]Receipt, 0, len(r.by))
	for _, s := range r.by {
		c := *s
		c.Gaps = slices.Clone(s.Gaps)
		out = append(out, c)
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b Receipt) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
