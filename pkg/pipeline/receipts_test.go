package pipeline

import (
	"context"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// TestEmitReceiptsMatchTopic: the write receipts of what emit published
// are what a consumer computes from the topic. The receipt continues from
// the CRC of each value's schema prefix (the encoder's debezium.Head,
// hashed once per table), so a head that is not the value's prefix, or
// one counted from the key's start instead of the value's, shows here.
// Against the local broker (make services-up).
func TestEmitReceiptsMatchTopic(t *testing.T) {
	addr := localBroker(t)
	p := emitBenchPipeline(t, addr) // a topic of its own, deleted at the end
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	table := emitBenchTable()
	records := 0
	for _, ev := range emitBenchEvents(table, 200) { // deletes among them
		if err := p.emit(ctx, ev); err != nil {
			t.Fatal(err)
		}
		if ev.Op != change.OpNone {
			records++
		}
	}
	if err := p.Producer.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := context.Cause(p.produceCtx); err != nil {
		t.Fatal(err)
	}

	type receipt struct {
		records, bytes uint64
		crc            uint32
		first          int64
	}
	consumed := map[int32]*receipt{}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(p.Encoder.Topic(table)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	for got := 0; got < records; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records", got, records)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			s := consumed[r.Partition]
			if s == nil {
				s = &receipt{first: r.Offset}
				consumed[r.Partition] = s
			}
			s.records++
			s.bytes += uint64(len(r.Value))
			s.crc = crc32.Update(s.crc, castagnoli, r.Value)
		})
	}
	rs := p.Producer.Receipts.Snapshot()
	if len(rs) != len(consumed) {
		t.Fatalf("%d receipts, records in %d partitions", len(rs), len(consumed))
	}
	for _, r := range rs {
		want := consumed[r.Partition]
		if want == nil {
			t.Fatalf("receipt of partition %d, which has no records", r.Partition)
		}
		if got := (receipt{r.Records, r.Bytes, r.CRC32C, r.FirstOffset}); got != *want {
			t.Errorf("partition %d: receipt %+v, consumed %+v", r.Partition, got, *want)
		}
	}
}
