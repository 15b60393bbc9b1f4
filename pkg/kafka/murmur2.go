package kafka

import (
	"encoding/binary"
	"math/bits"
)

// keyHash is Kafka's murmur2 of record keys (the Java client's
// partitioner, which franz-go's StickyKeyPartitioner mirrors), remembering
// the state after each four-byte block of the last key hashed. A
// Debezium key is its schema, the same for every row of a table, and then
// the row's key values: the next key of the same length hashes on from
// the first block in which the two differ instead of from its first byte,
// so the schema, most of a key's bytes, is not hashed again.
// It is per topic, used under franz-go's lock of the topic's partitioner.
type keyHash struct {
	last    []byte   // the last key hashed, up to maxKeyHashPrefix bytes
	lastLen int      // its whole length, which murmur2's first state holds
	states  []uint32 // states[i]: h after i blocks of last
}

const (
	murmur2Seed uint32 = 0x9747b28c
	murmur2M    uint32 = 0x5bd1e995

	// maxKeyHashPrefix bounds what a keyHash keeps of a key; longer keys
	// hash on from their first difference in it, or from there.
	maxKeyHashPrefix = 1 << 10
)

// sum is murmur2(key).
func (kh *keyHash) sum(key []byte) uint32 {
	blocks := 0 // blocks of key whose state is in states
	if len(key) == kh.lastLen && kh.last != nil {
		blocks = sameUpTo(key, kh.last) / 4
	}
	if blocks == 0 {
		kh.states = append(kh.states[:0], murmur2Seed^uint32(len(key)))
	}
	kh.states = kh.states[:blocks+1]
	h := kh.states[blocks]
	keep := min(len(key), maxKeyHashPrefix)
	b := key[blocks*4:]
	for i := blocks * 4; len(b) >= 4; i += 4 {
		k := binary.LittleEndian.Uint32(b)
		b = b[4:]
		k *= murmur2M
		k ^= k >> 24
		k *= murmur2M
		h *= murmur2M
		h ^= k
		if i+4 <= keep {
			kh.states = append(kh.states, h)
		}
	}
	kh.last = append(kh.last[:min(blocks*4, keep)], key[min(blocks*4, keep):keep]...)
	kh.lastLen = len(key)
	switch len(b) {
	case 3:
		h ^= uint32(b[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(b[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(b[0])
		h *= murmur2M
	}
	h ^= h >> 13
	h *= murmur2M
	h ^= h >> 15
	return h
}

// sameUpTo is how many bytes a and b begin with alike.
func sameUpTo(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)>>3
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}
