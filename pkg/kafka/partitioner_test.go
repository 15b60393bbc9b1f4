package kafka

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestColumnPartitionerNeverRehashes: a record marked for a partition goes
// there, also when franz-go knows fewer partitions (added ones it has not
// seen yet): franz-go then fails it as an invalid choice rather than the
// partitioner sending it where its key hashes. Unmarked records hash, but
// not into a topic of one partition.
func TestColumnPartitionerNeverRehashes(t *testing.T) {
	tp := columnPartitioner{kgo.StickyKeyPartitioner(nil)}.ForTopic("t")
	marked := &(&Producer{}).newOutgoing(context.Background(), Message{Key: []byte("k"), Partition: 3, Partitioned: true}, nil, false).rec
	for _, n := range []int{1, 2, 4, 8} {
		if got := tp.Partition(marked, n); got != 3 {
			t.Errorf("marked for 3 with %d partitions known: partition %d", n, got)
		}
	}
	if !tp.RequiresConsistency(marked) {
		t.Error("a marked record must be partitioned over all partitions, not only writable ones")
	}
	plain := &kgo.Record{Key: []byte("k")}
	if a, b := tp.Partition(plain, 8), tp.Partition(plain, 8); a != b || a < 0 || a >= 8 {
		t.Errorf("keyed record: partitions %d and %d of 8", a, b)
	}
	if got := tp.Partition(plain, 1); got != 0 {
		t.Errorf("keyed record, one partition: partition %d", got)
	}
}
