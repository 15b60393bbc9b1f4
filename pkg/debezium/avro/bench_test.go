package avro_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
)

// fixedRegistry registers nothing: the benchmark measures the per-record
// cost after the schema is cached.
type fixedRegistry struct{}

func (fixedRegistry) Register(context.Context, string, string) ([]byte, error) {
	return avro.ConfluentHeader(1), nil
}
func (fixedRegistry) Kind() string { return "confluent" }

// BenchmarkEncode compares, per change of the wide table, the JSON value
// alone, the JSON value rewritten as Avro (the recoder, which heartbeats,
// transaction events, the outbox and format.unwrap still take) and the
// Avro value written straight from the event (table rows).
func BenchmarkEncode(b *testing.B) {
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: "bench"})
	tbl := wide("w")
	ev := &change.Event{Table: tbl, Op: change.OpUpdate, Before: wideRow(1, false), After: wideRow(1, false),
		Source: change.Source{Block: postgres.SourceBlock, Name: "bench", DB: "shop", CommitMicros: 1_700_000_000_000_000}}
	rec := &avro.Recoder{Registry: fixedRegistry{}, Value: true}
	ctx := context.Background()
	var buf []byte
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf, _ = enc.AppendValue(buf[:0], ev, 1)
		}
		b.ReportMetric(float64(len(buf)), "bytes/msg")
	})
	b.Run("avro", func(b *testing.B) {
		b.ReportAllocs()
		var out []byte
		for i := 0; i < b.N; i++ {
			buf, _ = enc.AppendValue(buf[:0], ev, 1)
			var err error
			if out, err = rec.RecodeValue(ctx, "bench.public.w", buf); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(out)), "bytes/msg")
	})
	b.Run("avro-direct", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var err error
			if buf, _, _, err = rec.AppendValue(ctx, buf[:0], enc, "bench.public.w", ev, 1); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(buf)), "bytes/msg")
	})
}

// BenchmarkEncodeBenchRow is BenchmarkEncode for a key and a value of
// the table make bench drains (bigint key, integer, text, numeric(12,2),
// timestamptz, text), an update as streamed from PostgreSQL.
func BenchmarkEncodeBenchRow(b *testing.B) {
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: "bench"})
	tbl := &change.Table{
		ID: change.TableID{DB: "bench", Schema: "public", Name: "bench"},
		Columns: []change.Column{
			{Name: "id", Type: typ(change.KindInt64, -1, -1)},
			{Name: "customer_id", Type: typ(change.KindInt32, -1, -1)},
			{Name: "status", Type: typ(change.KindString, -1, -1)},
			{Name: "amount", Type: typ(change.KindDecimal, 12, 2)},
			{Name: "created_at", Type: typ(change.KindTimestampTZ, 6, -1)},
			{Name: "note", Type: typ(change.KindString, -1, -1), Optional: true},
		},
		Key: []int{0},
	}
	row := change.Row{change.IntValue(123456), change.IntValue(3456), change.TextValue("shipped"), change.TextValue("1234.56"),
		change.IntValue(1_704_067_200_000_000 + 123456e6), change.TextValue(strings.Repeat("0123456789abcdef0123456789abcdef", 4))}
	src := change.Source{Block: postgres.SourceBlock, Name: "bench", DB: "bench", CommitMicros: 1_700_000_000_000_000}
	src.Ints[postgres.SourceBlock.Slot("lsn")] = 123456789
	src.Ints[postgres.SourceBlock.Slot("txId")] = 4242
	ev := &change.Event{Table: tbl, Op: change.OpUpdate, After: row, Source: src}
	rec := &avro.Recoder{Registry: fixedRegistry{}, Key: true, Value: true}
	ctx := context.Background()
	topic := enc.Topic(tbl)
	var buf []byte
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf, _, _ = enc.AppendKey(buf[:0], ev)
			buf, _ = enc.AppendValue(buf, ev, 1)
		}
		b.ReportMetric(float64(len(buf)), "bytes/msg")
	})
	b.Run("avro-recoded", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for i := 0; i < b.N; i++ {
			buf, _, _ = enc.AppendKey(buf[:0], ev)
			k, err := rec.RecodeKey(ctx, topic, buf)
			if err != nil {
				b.Fatal(err)
			}
			buf, _ = enc.AppendValue(buf[:0], ev, 1)
			v, err := rec.RecodeValue(ctx, topic, buf)
			if err != nil {
				b.Fatal(err)
			}
			n = len(k) + len(v)
		}
		b.ReportMetric(float64(n), "bytes/msg")
	})
	b.Run("avro-direct", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var err error
			if buf, _, err = rec.AppendKey(ctx, buf[:0], enc, topic, ev); err != nil {
				b.Fatal(err)
			}
			if buf, _, _, err = rec.AppendValue(ctx, buf, enc, topic, ev, 1); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(buf)), "bytes/msg")
	})
}
