package kafka

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestValueCRCAppends: folding values in one by one through their
// hand-over CRCs gives the CRC32C of all of them concatenated, as a
// consumer computes a receipt, for lengths across the cache's edge.
func TestValueCRCAppends(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	lengths := []int{0, 1, 3, 7, 8, 4096, len(shifts) - 1, len(shifts), len(shifts) + 1, 1 << 20}
	for range 200 {
		lengths = append(lengths, r.IntN(9000))
	}
	var folded, whole uint32
	for _, n := range lengths {
		v := make([]byte, n)
		for i := range v {
			v[i] = byte(r.Uint32())
		}
		folded = crcOf(v).appendTo(folded)
		whole = crc32.Update(whole, castagnoli, v)
		if folded != whole {
			t.Fatalf("after a value of %d bytes: folded %#x, hashed whole %#x", n, folded, whole)
		}
	}
	// Cached and computed shifts agree.
	for _, n := range []int{5, 1000, 65535} {
		cached := zerosShift(n)
		shifts[n].Store(0)
		if fresh := zerosShift(n); fresh != cached {
			t.Errorf("zerosShift(%d): %#x cached, %#x computed", n, cached, fresh)
		}
	}
}

// TestPublishHeadReceipt: a Message's head (the CRC32C of its value's
// schema prefix, computed once per table) spares hashing that prefix and
// changes nothing else: the receipt is the CRC32C of the values as they
// lie in the partition. A gzipped value is hashed whole (its head is of
// the value before compression), and a head longer than the value is
// ignored. Against the local broker (make services-up), in a topic of one
// partition of its own.
func TestPublishHeadReceipt(t *testing.T) {
	const addr = "127.0.0.1:9092"
	adm, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	topic := fmt.Sprintf("head-receipt-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(adm).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatalf("create %s on %s (make services-up): %v", topic, addr, err)
	}
	defer kadm.NewClient(adm).DeleteTopics(context.Background(), topic)
	p, err := NewProducer(Options{BootstrapServers: addr, DisableTLS: true, MaxMessageBytes: 1 << 20, MessageCompression: "gzip"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	head := []byte(`{"schema":{"type":"struct","fields":[],"name":"p.public.t.Envelope"},"payload":{"before":`)
	headCRC := crc32.Checksum(head, castagnoli)
	value := func(tail string) []byte { return append(bytes.Clone(head), tail...) }
	big := value(string(bytes.Repeat([]byte(`{"id":1},`), GzipThreshold/8))) // gzipped
	ms := []Message{
		{Value: value(`{"id":1}}}`), HeadLen: len(head), HeadCRC: headCRC},
		{Value: value(`{"id":2}}}`)}, // no head: hashed whole
		{Value: value(`null,"after":{"id":3}}}`), HeadLen: len(head), HeadCRC: headCRC},
		{Value: big, HeadLen: len(head), HeadCRC: headCRC},
		{Value: []byte("{}"), HeadLen: len(head), HeadCRC: headCRC}, // shorter than its head
		{Value: nil}, // a tombstone
		{Value: value(`{"id":4}}}`), HeadLen: len(head), HeadCRC: headCRC},
	}
	var want uint32
	var bytesWant uint64
	acks := make(chan error, len(ms))
	for i, m := range ms {
		m.Topic, m.Op, m.EventID = topic, "c", "e"
		if err := p.Publish(ctx, m, func(err error) { acks <- err }); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		wire, _, _ := compressValue("gzip", m.Value)
		want = crc32.Update(want, castagnoli, wire)
		bytesWant += uint64(len(wire))
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for range ms {
		if err := <-acks; err != nil {
			t.Fatal(err)
		}
	}
	rs := p.Receipts.Snapshot()
	if len(rs) != 1 {
		t.Fatalf("receipts %+v", rs)
	}
	if r := rs[0]; r.Records != uint64(len(ms)) || r.Bytes != bytesWant || r.CRC32C != want {
		t.Fatalf("receipt %d records, %d bytes, CRC32C %#x; want %d, %d, %#x", r.Records, r.Bytes, r.CRC32C, len(ms), bytesWant, want)
	}
}

func FuzzValueCRC(f *testing.F) {
	f.Add([]byte("{}"), []byte(`{"id":1}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		got := crcOf(b).appendTo(crcOf(a).appendTo(0))
		if want := crc32.Checksum(append(a[:len(a):len(a)], b...), castagnoli); got != want {
			t.Fatalf("%#x, want %#x", got, want)
		}
	})
}

func BenchmarkReceiptCRC(b *testing.B) {
	v := envelopeBatch(6, 3700)[:3700]
	b.Run("at-ack", func(b *testing.B) {
		var crc uint32
		for b.Loop() {
			crc = crc32.Update(crc, castagnoli, v)
		}
	})
	b.Run("handover+append", func(b *testing.B) {
		var crc uint32
		for b.Loop() {
			crc = crcOf(v).appendTo(crc)
		}
	})
	// The schema prefix's CRC known (debezium.Head): 2.9 KB of
	// BenchmarkEmit's 3.5 KB values.
	b.Run("handover+append,head", func(b *testing.B) {
		const n = 2900
		head := crc32.Checksum(v[:n], castagnoli)
		var crc uint32
		for b.Loop() {
			crc = crcAfter(head, v, n).appendTo(crc)
		}
	})
}
