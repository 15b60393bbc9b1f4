package kafka

import (
	"hash/crc32"
	"math/bits"
	"sync/atomic"
)

// A receipt folds each acknowledged value into its partition's CRC32C
// (receipts.go). Hashing the value at the acknowledgement read it from
// memory again, long after it was encoded, a visible share of a drain's
// CPU.
// Instead the value is hashed when it is handed over, while the encoder's
// bytes are still in cache, and the acknowledgement appends that CRC to
// the receipt's: crc(A‖B) = crc(A)·x^(8·len(B)) ⊕ crc(B) modulo the
// Castagnoli polynomial (the combination zlib's crc32_combine computes).

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// castagnoliReflected is the Castagnoli polynomial, bit-reflected as
// hash/crc32 computes with it: bit 31 is x⁰.
const castagnoliReflected = 0x82f63b78

// valueCRC is what the acknowledgement of value needs: its CRC32C and
// x^(8·len(value)).
type valueCRC struct {
	crc, shift uint32
}

func crcOf(value []byte) valueCRC {
	return valueCRC{crc: crc32.Update(0, castagnoli, value), shift: zerosShift(len(value))}
}

// crcAfter is crcOf(value) where head is the CRC32C of value[:n], known
// beforehand: most of a value is its table's schema, hashed once.
func crcAfter(head uint32, value []byte, n int) valueCRC {
	return valueCRC{crc: crc32.Update(head, castagnoli, value[n:]), shift: zerosShift(len(value))}
}

// appendTo returns the CRC32C of the bytes crc covers followed by v's.
func (v valueCRC) appendTo(crc uint32) uint32 {
	return gfMul(v.shift, crc) ^ v.crc
}

// gfMul is a·b modulo the Castagnoli polynomial, both reflected.
func gfMul(a, b uint32) uint32 {
	var p uint32
	for range 32 {
		p ^= b & -(a >> 31) // a's x^i coefficient, x⁰ first
		a <<= 1
		b = b>>1 ^ castagnoliReflected&-(b&1) // b·x
	}
	return p
}

// x2n[k] is x^(2^k) modulo the polynomial.
var x2n = func() (t [64]uint32) {
	t[0] = 1 << 30 // x¹
	for k := 1; k < len(t); k++ {
		t[k] = gfMul(t[k-1], t[k-1])
	}
	return t
}()

// shifts caches zerosShift of the lengths below len(shifts); 0 (never a
// power of x modulo the polynomial) is not computed yet.
var shifts [1 << 16]atomic.Uint32

// zerosShift is x^(8n) modulo the polynomial: what a CRC is multiplied by
// when n bytes follow.
func zerosShift(n int) uint32 {
	if n < len(shifts) {
		if s := shifts[n].Load(); s != 0 {
			return s
		}
	}
	s := uint32(1 << 31) // x⁰
	for e := uint64(n) * 8; e != 0; e &= e - 1 {
		s = gfMul(s, x2n[bits.TrailingZeros64(e)])
	}
	if n < len(shifts) {
		shifts[n].Store(s)
	}
	return s
}
