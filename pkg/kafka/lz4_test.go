package kafka

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
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

// encodedBatch is about size bytes of keys and values as the encoder
// writes them for the bench's table (integration/bench: an id, a customer,
// a status, an amount, a time and a 128-character note), inserts and
// updates, each record's key and value one after the other as in a batch.
func encodedBatch(size int) []byte {
	kind := func(k change.Kind, p, s int) change.Type {
		return change.Type{Kind: k, Precision: p, Scale: s, Length: -1}
	}
	table := &change.Table{
		ID: change.TableID{DB: "bench", Schema: "public", Name: "bench"},
		Columns: []change.Column{
			{Name: "id", Type: kind(change.KindInt64, -1, -1)},
			{Name: "customer_id", Type: kind(change.KindInt32, -1, -1)},
			{Name: "status", Type: kind(change.KindString, -1, -1)},
			{Name: "amount", Type: kind(change.KindDecimal, 12, 2)},
			{Name: "created_at", Type: kind(change.KindTimestampTZ, -1, -1)},
			{Name: "note", Type: kind(change.KindString, -1, -1), Optional: true},
		},
		Key: []int{0},
	}
	e := debezium.NewEncoder(debezium.Options{TopicPrefix: "bench"})
	var b []byte
	for id := int64(0); len(b) < size; id++ {
		sum := md5.Sum(strconv.AppendInt(nil, id, 10))
		row := change.Row{change.IntValue(id), change.IntValue(id % 10000), change.TextValue([]string{"new", "paid", "shipped", "delivered"}[id%4]),
			change.TextValue(fmt.Sprintf("%d.%02d", id%100000/100, id%100)), change.IntValue(1_704_067_200_000_000 + id*1_000_000),
			change.TextValue(strings.Repeat(hex.EncodeToString(sum[:]), 4))}
		ev := &change.Event{Table: table, Op: change.OpCreate, After: row,
			Source: change.Source{Block: postgres.SourceBlock, Name: "bench", DB: "bench", Schema: "public", Table: "bench",
				CommitMicros: 1_764_000_000_000_000 + id}}
		ev.Source.Ints[postgres.SourceBlock.Slot("txId")] = 1000 + id/100
		ev.Source.Ints[postgres.SourceBlock.Slot("lsn")] = 1<<30 + id*300
		if id%3 == 1 {
			ev.Op, ev.Before = change.OpUpdate, row
		}
		var err error
		if b, _, err = e.AppendKey(b, ev); err != nil {
			panic(err)
		}
		if b, err = e.AppendValue(b, ev, 1_764_000_000_100_000+id); err != nil {
			panic(err)
		}
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

// TestLZ4HeaderIsPierrecs: the frame header is the one pierrec's writer
// writes with the same settings.
func TestLZ4HeaderIsPierrecs(t *testing.T) {
	var b bytes.Buffer
	w := lz4.NewWriter(&b)
	if err := w.Apply(lz4.BlockSizeOption(lz4.Block256Kb), lz4.ChecksumOption(false), lz4.BlockChecksumOption(false)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil { // an empty frame: header and end mark
		t.Fatal(err)
	}
	if want := b.Bytes()[:b.Len()-4]; !bytes.Equal(lz4Header, want) {
		t.Fatalf("lz4Header % x, pierrec writes % x", lz4Header, want)
	}
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
		"encoded, 1 MB":               encodedBatch(1 << 20),
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

// pierrecBlocks is lz4Batches with pierrec's block compressor in place of
// lz4Block: the peer of BenchmarkLZ4Batch.
type pierrecBlocks struct{ c lz4.Compressor }

func (p *pierrecBlocks) Compress(dst *bytes.Buffer, src []byte, _ ...kgo.CompressFlag) ([]byte, kgo.CompressionCodecType) {
	dst.Reset()
	out := append(dst.Bytes()[:0], lz4Header...)
	for len(src) > 0 {
		block := src[:min(len(src), lz4BlockSize)]
		src = src[len(block):]
		at := len(out)
		out = append(out, make([]byte, 4+lz4.CompressBlockBound(len(block)))...)
		n, err := p.c.CompressBlock(block, out[at+4:])
		if err != nil || n == 0 {
			panic("pierrec: incompressible")
		}
		binary.LittleEndian.PutUint32(out[at:], uint32(n))
		out = out[:at+4+n]
	}
	return binary.LittleEndian.AppendUint32(out, 0), kgo.CodecLz4
}

// TestLZ4BlockEdges round-trips blocks through pierrec's block decoder,
// which refuses a block that breaks the format's end rules (the last five
// bytes literals, the last match twelve bytes from the end): every length
// around those limits, runs that match at offset 1, matches longer than the
// 256-byte steps of commonPrefix and ending anywhere within one, and
// repeats further back than an offset reaches.
func TestLZ4BlockEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	text := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + r.IntN(4))
		}
		return b
	}
	var cases [][]byte
	for n := range 40 {
		cases = append(cases, bytes.Repeat([]byte{'x'}, n), text(n))
	}
	unit := text(3000)
	for _, cut := range []int{0, 1, 7, 8, 31, 32, 33, 255, 256, 257, 511, 2999} {
		changed := bytes.Clone(unit)
		changed[cut] ^= 0x20
		cases = append(cases, slices.Concat(unit, changed, unit, []byte("tail")))
	}
	far := text(70_000)
	cases = append(cases, slices.Concat(far, far[:5000]), envelopeBatch(9, lz4BlockSize))
	var table lz4Table
	for i, src := range cases {
		dst := make([]byte, lz4BlockBound(len(src)))
		n := lz4Block(src, dst, &table)
		if n == 0 {
			if len(src) > 64 && bytes.Count(src, src[:1]) == len(src) {
				t.Fatalf("case %d: a run of %d equal bytes left uncompressed", i, len(src))
			}
			continue
		}
		got := make([]byte, len(src))
		m, err := lz4.UncompressBlock(dst[:n], got)
		if err != nil || !bytes.Equal(got[:m], src) {
			t.Fatalf("case %d (%d bytes): round trip failed: %v", i, len(src), err)
		}
	}
}

// BenchmarkLZ4Batch compresses a 1 MB batch of envelopes with franz-go's
// default LZ4 codec, with pierrec's block compressor in lz4Batches' frame
// (the peer of lz4Block) and with lz4Batches:
//
//	go test -run '^$' -bench LZ4Batch -benchmem ./pkg/kafka
func BenchmarkLZ4Batch(b *testing.B) {
	for _, batch := range []struct {
		name string
		src  []byte
	}{{"synthetic", envelopeBatch(5, 1<<20)}, {"encoded", encodedBatch(1 << 20)}} {
		b.Run(batch.name, func(b *testing.B) { benchmarkLZ4Batch(b, batch.src) })
	}
}

func benchmarkLZ4Batch(b *testing.B, src []byte) {
	def, err := kgo.DefaultCompressor(kgo.Lz4Compression())
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		c    kgo.Compressor
	}{{"franz-go", def}, {"pierrec-blocks", new(pierrecBlocks)}, {"tributary", newLZ4Batches()}} {
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
