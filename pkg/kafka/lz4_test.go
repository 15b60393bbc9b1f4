package kafka

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kgo"
)

// envelopeBatch is the uncompressed records of a batch of about size bytes
// shaped like a streaming drain's: a Debezium envelope whose schema repeats
// and whose payload varies, with random text in it.
func envelopeBatch(seed uint64, size int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	schema := `{"schema":{"type":"struct","fields":[` + strings.Repeat(`{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":true,"field":"note"}],"optional":true,"name":"bench.public.bench.Value","field":"before"},`, 12) + `],"optional":false,"name":"bench.public.bench.Envelope","version":2},"payload":`
	var b []byte
	for id := 0; len(b) < size; id++ {
		note := make([]byte, r.IntN(200))
		for i := range note {
			note[i] = byte('a' + r.IntN(26))
		}
		b = append(b, schema...)
		b = fmt.Appendf(b, `{"before":null,"after":{"id":%d,"note":"%s","n":%d},"op":"c","ts_ms":%d}}`, id, note, r.Int64(), r.Int64N(1<<41))
	}
	return b
}

var decompressor = kgo.DefaultDecompressor()

// readLZ4 decodes a frame with pierrec's reader, which checks the
// descriptor's checksum, and with franz-go's consumer-side decompressor.
func readLZ4(t testing.TB, frame []byte) []byte {
	t.Helper()
	got, err := io.ReadAll(lz4.NewReader(bytes.NewReader(frame)))
	if err != nil {
		t.Fatalf("pierrec reader: %v", err)
	}
	kgot, err := decompressor.Decompress(frame, kgo.CodecLz4)
	if err != nil {
		t.Fatalf("franz-go decompressor: %v", err)
	}
	if !bytes.Equal(got, kgot) {
		t.Fatalf("pierrec and franz-go read different bytes (%d, %d)", len(got), len(kgot))
	}
	return got
}

func TestLZ4BatchesRoundTrip(t *testing.T) {
	// FLG: version 1, independent blocks, no block or content checksum,
	// no content size; BD: 256 KiB blocks.
	if flg, bd := lz4Header[4], lz4Header[5]; flg != 0x60 || bd != 0x50 {
		t.Fatalf("frame descriptor FLG %#x BD %#x, want 0x60 0x50", flg, bd)
	}
	c := newLZ4Batches()
	r := rand.New(rand.NewPCG(7, 7))
	random := make([]byte, 300_000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	cases := map[string][]byte{
		"one byte":                    {'x'},
		"envelopes, 1 MB":             envelopeBatch(1, 1<<20),
		"envelopes over a block":      envelopeBatch(2, lz4BlockSize+12345),
		"incompressible":              random,
		"incompressible after blocks": append(envelopeBatch(3, lz4BlockSize), random...),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			var dst bytes.Buffer
			dst.WriteString("left over from the last batch")
			frame, codec := c.Compress(&dst, src)
			if codec != kgo.CodecLz4 {
				t.Fatalf("codec %v, want lz4", codec)
			}
			if got := readLZ4(t, frame); !bytes.Equal(got, src) {
				t.Fatalf("round trip changed the batch: %d bytes in, %d out", len(src), len(got))
			}
			if name == "envelopes, 1 MB" && len(frame) > len(src)/10 {
				t.Errorf("a batch of envelopes compressed to %d of %d bytes: not compressed", len(frame), len(src))
			}
		})
	}
}

// FuzzLZ4Batches round-trips its input repeated into batches of up to four
// blocks. Minimizing such inputs takes most of a short run: add
// -fuzzminimizetime 0 to spend it on new inputs (about 2,000 a second).
func FuzzLZ4Batches(f *testing.F) {
	f.Add([]byte("{}"), uint16(0))
	f.Add(envelopeBatch(4, 20_000), uint16(13))
	c := newLZ4Batches()
	f.Fuzz(func(t *testing.T, src []byte, times uint16) {
		if len(src) == 0 {
			return // franz-go never compresses an empty batch
		}
		// The input repeated, up to a few blocks: frames of several
		// blocks, compressed ones after raw ones and the other way round.
		batch := bytes.Repeat(src, 1+int(times)%max(1, 4*lz4BlockSize/len(src)))
		var dst bytes.Buffer
		frame, _ := c.Compress(&dst, batch)
		if got := readLZ4(t, frame); !bytes.Equal(got, batch) {
			t.Fatalf("round trip changed %d bytes", len(batch))
		}
	})
}

// BenchmarkLZ4Batch compresses a 1 MB batch of envelopes with franz-go's
// default LZ4 codec and with lz4Batches:
//
//	go test -run '^$' -bench LZ4Batch -benchmem ./pkg/kafka
func BenchmarkLZ4Batch(b *testing.B) {
	src := envelopeBatch(5, 1<<20)
	def, err := kgo.DefaultCompressor(kgo.Lz4Compression())
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		c    kgo.Compressor
	}{{"franz-go", def}, {"tributary", newLZ4Batches()}} {
		b.Run(c.name, func(b *testing.B) {
			var dst bytes.Buffer
			b.SetBytes(int64(len(src)))
			var n int
			for b.Loop() {
				dst.Reset()
				out, _ := c.c.Compress(&dst, src)
				n = len(out)
			}
			b.ReportMetric(float64(n), "frame-bytes")
		})
	}
}
