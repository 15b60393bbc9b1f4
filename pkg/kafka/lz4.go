package kafka

import (
	"bytes"
	"encoding/binary"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// lz4Batches compresses produce batches into LZ4 frames as Kafka's own
// Java producer writes them: independent blocks, no block checksum and no
// content checksum (a record batch carries its own CRC32C over the
// compressed bytes). franz-go's default codec writes the frame through
// pierrec's Writer, which copies the batch into a block buffer and hashes
// all of it with xxh32 for the content checksum, a copy and a hash a
// drain's CPU profile shows (docs/hot-path.md). Here each block is
// compressed straight from the batch into the request's buffer, by
// lz4Block (lz4block.go).
type lz4Batches struct {
	tables sync.Pool // *lz4Table: 64 KiB
}

// lz4BlockSize is the frame's largest block (BD 256 KiB): small enough
// that each block's hash table stays in cache, so faster than one block
// for a whole 1 MB batch for a few more bytes, and larger than Java's
// default of 64 KiB, whose blocks compress worse (BenchmarkLZ4Batch).
const lz4BlockSize = 256 << 10

// lz4Header is the frame's magic number and descriptor: FLG version 1
// with independent blocks and no checksums, BD 256 KiB, and the header
// checksum (xxHash32 of FLG and BD, second byte). It is what pierrec's
// writer writes with those settings (TestLZ4HeaderIsPierrecs); a literal,
// as making it with that writer would allocate its 512 KB of block
// buffers in every process.
var lz4Header = []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x50, 0xfb}

func newLZ4Batches() *lz4Batches {
	return &lz4Batches{tables: sync.Pool{New: func() any { return new(lz4Table) }}}
}

// Compress implements kgo.Compressor.
func (l *lz4Batches) Compress(dst *bytes.Buffer, src []byte, _ ...kgo.CompressFlag) ([]byte, kgo.CompressionCodecType) {
	bound := len(lz4Header) + 4 // the end mark
	for rest := len(src); rest > 0; rest -= lz4BlockSize {
		bound += 4 + lz4BlockBound(min(rest, lz4BlockSize))
	}
	dst.Reset()
	dst.Grow(bound)
	out := append(dst.Bytes()[:0], lz4Header...)
	t := l.tables.Get().(*lz4Table)
	defer l.tables.Put(t)
	for len(src) > 0 {
		block := src[:min(len(src), lz4BlockSize)]
		src = src[len(block):]
		at := len(out)
		out = out[:at+4] // the block's size, written below
		n := lz4Block(block, out[at+4:at+4+lz4BlockBound(len(block))], t)
		if n == 0 {
			// Incompressible: the block as it is, flagged by the size's
			// high bit.
			binary.LittleEndian.PutUint32(out[at:], uint32(len(block))|1<<31)
			out = append(out, block...)
			continue
		}
		binary.LittleEndian.PutUint32(out[at:], uint32(n))
		out = out[:at+4+n]
	}
	return binary.LittleEndian.AppendUint32(out, 0), kgo.CodecLz4
}
