package kafka

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
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
}
