package kafka

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// An LZ4 block compressor (the block format of lz4.org's
// lz4_Block_format.md) for produce batches. A batch of Debezium envelopes
// is mostly the same schema, kilobytes long, repeated in every value:
// nearly all of a batch is long matches. pierrec's compressor extends a
// match eight bytes a turn, much of its time on such batches; here a match past its first 32 bytes is
// extended 256 bytes a turn with bytes.Equal, which compares in vector
// registers. The search for matches is LZ4's usual one: a hash of the next
// bytes, one candidate per hash, and a growing step over bytes that find
// none. It is faster than pierrec's on BenchmarkLZ4Batch; in a drain,
// where batch and table are less often in cache, about level with it
// (docs/hot-path.md).

const (
	lz4MinMatch     = 4
	lz4LastLiterals = 5  // a block ends with at least this many literals
	lz4MFLimit      = 12 // the last match starts at least this far from the end
	lz4MaxOffset    = 65535
	lz4HashLog      = 14
	lz4SkipTrigger  = 4 // the step grows by one every 16 searches without a match
)

// lz4Table is a compressor's hash table: for each hash of five bytes, the
// position (in the block being compressed) where they were last seen.
// Each block starts with it cleared: a position left from another block
// is a candidate whose bytes are unrelated, read from memory (often not
// in cache) only to miss. A benchmark that compresses the same bytes over
// and over finds old positions right, so only a drain shows that cost.
type lz4Table [1 << lz4HashLog]int32

func lz4Hash(u uint64) uint32 {
	return uint32((u << 24) * 0x9E3779B185EBCA87 >> (64 - lz4HashLog)) // five bytes
}

// lz4BlockBound is the largest compressed size of n bytes: what dst must
// hold for lz4Block.
func lz4BlockBound(n int) int { return n + n/255 + 16 }

// lz4Block compresses src into dst as one LZ4 block and returns its size,
// or 0 when the block would be no smaller than src (store src as it is).
// dst must have room for lz4BlockBound(len(src)) bytes.
func lz4Block(src, dst []byte, t *lz4Table) int {
	*t = lz4Table{}
	d, anchor := 0, 0
	if len(src) > lz4MFLimit {
		sLimit := len(src) - lz4MFLimit      // matches start before it
		mLimit := len(src) - lz4LastLiterals // and end at it at the latest
		s, misses := 0, 0
		for s < sLimit {
			seq := binary.LittleEndian.Uint64(src[s:])
			h := lz4Hash(seq)
			cand := int(t[h])
			t[h] = int32(s)
			if cand >= s || s-cand > lz4MaxOffset || binary.LittleEndian.Uint32(src[cand:]) != uint32(seq) {
				misses++
				s += 1 + misses>>lz4SkipTrigger
				continue
			}
			misses = 0
			for s > anchor && cand > 0 && src[s-1] == src[cand-1] { // backwards
				s--
				cand--
			}
			n := lz4MinMatch + commonPrefix(src[s+lz4MinMatch:mLimit], src[cand+lz4MinMatch:])
			if d = lz4Sequence(dst, d, src[anchor:s], s-cand, n); d < 0 {
				return 0
			}
			s += n
			anchor = s
			if s < sLimit { // the bytes just before the next search
				t[lz4Hash(binary.LittleEndian.Uint64(src[s-2:]))] = int32(s - 2)
			}
		}
	}
	if d = lz4Sequence(dst, d, src[anchor:], 0, 0); d < 0 || d >= len(src) {
		return 0
	}
	return d
}

// lz4Sequence writes a sequence at dst[d:]: the literals, then a match of
// n bytes at offset back (none when n is 0: the block's last sequence). It
// returns the new end, or -1 when the block would outgrow its source.
func lz4Sequence(dst []byte, d int, literals []byte, offset, n int) int {
	if d+len(literals)+len(literals)/255+8 > len(dst) {
		return -1
	}
	token := d
	d++
	tok := byte(0)
	if l := len(literals); l >= 15 {
		tok = 15 << 4
		d = lz4Length(dst, d, l-15)
	} else {
		tok = byte(l) << 4
	}
	d += copy(dst[d:], literals)
	if n > 0 {
		binary.LittleEndian.PutUint16(dst[d:], uint16(offset))
		d += 2
		if m := n - lz4MinMatch; m >= 15 {
			if d+m/255+1 > len(dst) {
				return -1
			}
			tok |= 15
			d = lz4Length(dst, d, m-15)
		} else {
			tok |= byte(m)
		}
	}
	dst[token] = tok
	return d
}

// lz4Length writes a length's bytes past its token's 15.
func lz4Length(dst []byte, d, n int) int {
	for ; n >= 255; n -= 255 {
		dst[d] = 255
		d++
	}
	dst[d] = byte(n)
	return d + 1
}

// commonPrefix is how many bytes a and b begin with alike; b is at least
// as long as a.
func commonPrefix(a, b []byte) int {
	n := 0
	// Most matches outside a schema are short: eight bytes a turn first.
	for ; n+8 <= len(a) && n < 32; n += 8 {
		if x := binary.LittleEndian.Uint64(a[n:]) ^ binary.LittleEndian.Uint64(b[n:]); x != 0 {
			return n + bits.TrailingZeros64(x)>>3
		}
	}
	for n+256 <= len(a) && bytes.Equal(a[n:n+256], b[n:n+256]) {
		n += 256
	}
	for ; n+8 <= len(a); n += 8 {
		if x := binary.LittleEndian.Uint64(a[n:]) ^ binary.LittleEndian.Uint64(b[n:]); x != 0 {
			return n + bits.TrailingZeros64(x)>>3
		}
	}
	for n < len(a) && a[n] == b[n] {
		n++
	}
	return n
}
