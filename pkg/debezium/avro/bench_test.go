package avro_test

import (
	"context"
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
