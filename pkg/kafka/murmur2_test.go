package kafka

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka's UtilsTest.testMurmur2 vectors, hashed after each other through
// one keyHash: a key lands where the Java client puts it.
func TestKeyHashKafkaVectors(t *testing.T) {
	var kh keyHash
	for _, c := range []struct {
		in   string
		want int32
	}{
		{"21", -973932308},
		{"foobar", -790332482},
		{"a-little-bit-long-string", -985981536},
		{"a-little-bit-longer-string", -1486304829},
		{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
		{"abc", 479470107},
		{"21", -973932308},
	} {
		if got := int32(kh.sum([]byte(c.in))); got != c.want {
			t.Errorf("murmur2(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestKeyHashPartitionsAsFranzGo sends runs of Debezium keys (one table's
// schema, then random ids: same lengths, new lengths, keys past
// maxKeyHashPrefix that differ before and after it) through the topic
// partitioner and franz-go's StickyKeyPartitioner: every key must land on
// the same partition. The seed is printed.
func TestKeyHashPartitionsAsFranzGo(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	head := `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"}],"optional":false,"name":"bench.public.bench.Key"},"payload":{"id":`
	long := strings.Repeat("x", maxKeyHashPrefix-40)
	ours := columnPartitioner{kgo.StickyKeyPartitioner(nil)}.ForTopic("t")
	theirs := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for i := range 20000 {
		var key string
		switch rng.IntN(6) {
		case 0, 1, 2:
			key = fmt.Sprintf("%s%d}}", head, rng.Int64N(1_000_000))
		case 3:
			key = fmt.Sprintf("%s%s%d}}", head, long, rng.Int64N(1_000_000_000)) // around the prefix bound
		case 4:
			b := make([]byte, rng.IntN(2*maxKeyHashPrefix))
			for j := range b {
				b[j] = byte(rng.IntN(3)) // few distinct bytes: long common prefixes
			}
			key = string(b)
		case 5:
			key = ""
		}
		for _, n := range []int{2, 3, 7, 64} {
			r := &kgo.Record{Key: []byte(key)}
			if got, want := ours.Partition(r, n), theirs.Partition(r, n); got != want {
				t.Fatalf("key %d (%d bytes) of %d partitions: partition %d, franz-go's %d", i, len(key), n, got, want)
			}
		}
	}
}

// FuzzKeyHash holds keyHash to franz-go's murmur2 (through its KafkaHasher)
// over pairs of keys hashed in turn.
func FuzzKeyHash(f *testing.F) {
	f.Add([]byte(`{"payload":{"id":1}}`), []byte(`{"payload":{"id":2}}`))
	f.Add([]byte("abcd"), []byte("abce"))
	f.Add([]byte{}, []byte{0})
	theirs := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var kh keyHash
		for _, key := range [][]byte{a, b, a, a, b} {
			const n = 1 << 30 // the partition is then the hash's low 30 bits
			got := int(kh.sum(key)&0x7fffffff) % n
			if want := theirs.Partition(&kgo.Record{Key: key}, n); got != want {
				t.Fatalf("key %q: %d, franz-go's %d", key, got, want)
			}
		}
	})
}

// BenchmarkKeyHash partitions a table's Debezium keys, ids counting up,
// with franz-go's StickyKeyPartitioner (the peer) and the topic
// partitioner's keyHash.
func BenchmarkKeyHash(b *testing.B) {
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"}],"optional":false,"name":"bench.public.bench.Key"},"payload":{"id":%d}}`, 100_000+i)
	}
	for _, c := range []struct {
		name string
		p    kgo.TopicPartitioner
	}{{"franz-go", kgo.StickyKeyPartitioner(nil).ForTopic("t")}, {"tributary", columnPartitioner{kgo.StickyKeyPartitioner(nil)}.ForTopic("t")}} {
		b.Run(c.name, func(b *testing.B) {
			r := &kgo.Record{}
			i := 0
			for b.Loop() {
				r.Key = keys[i%len(keys)]
				c.p.Partition(r, 3)
				i++
			}
		})
	}
}
