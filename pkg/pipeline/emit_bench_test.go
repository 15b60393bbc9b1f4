package pipeline

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/destination"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
)

// The hot path of a running pipeline, from a decoded change.Event onwards: emit encodes the
// key and value, builds the record and hands it to the real producer, whose promise acks the
// tracker. The rows are those of `make bench` (integration/bench): six columns, about 200
// bytes. Profile with
//
//	go test -run '^$' -bench Emit -cpuprofile cpu.out ./pkg/pipeline && go tool pprof -top cpu.out
//
// BenchmarkEmit/kfake needs nothing; BenchmarkEmit/broker needs the local Kafka of
// `make services-up` and is skipped without it. drain_bench_test.go adds the decoder in front.

// emitBenchTable has the columns of integration/bench's table.
func emitBenchTable() *change.Table {
	t := func(k change.Kind, p, s int) change.Type {
		return change.Type{Kind: k, Precision: p, Scale: s, Length: -1}
	}
	return &change.Table{
		ID: change.TableID{DB: "bench", Schema: "public", Name: "bench"},
		Columns: []change.Column{
			{Name: "id", Type: t(change.KindInt64, -1, -1)},
			{Name: "customer_id", Type: t(change.KindInt32, -1, -1)},
			{Name: "status", Type: t(change.KindString, -1, -1)},
			{Name: "amount", Type: t(change.KindDecimal, 12, 2)},
			{Name: "created_at", Type: t(change.KindTimestampTZ, -1, -1)},
			{Name: "note", Type: t(change.KindString, -1, -1), Optional: true},
		},
		Key:     []int{0},
		Version: 1,
	}
}

// emitBenchEvents returns n events cycling through the 60/30/10 insert/update/delete mix, a
// transaction-end position marker after every 100, like a drained slot.
func emitBenchEvents(t *change.Table, n int) []*change.Event {
	evs := make([]*change.Event, 0, n+n/100)
	note := strings.Repeat("0123456789abcdef0123456789abcdef", 4)
	for i := 0; i < n; i++ {
		row := change.Row{
			change.IntValue(int64(i)),
			change.IntValue(int64(i % 10000)),
			change.TextValue([]string{"new", "paid", "shipped", "delivered"}[i%4]),
			change.TextValue(fmt.Sprintf("%d.%02d", i%1000, i%100)),
			change.IntValue(1_704_067_200_000_000 + int64(i)*1_000_000),
			change.TextValue(note),
		}
		ev := &change.Event{
			Table: t,
			Source: change.Source{Block: postgres.SourceBlock, Name: "bench", DB: "bench", Schema: "public", Table: "bench",
				CommitMicros: 1_704_067_200_000_000 + int64(i),
				Sequence:     fmt.Sprintf(`[null,"%d"]`, 0x1000000+i*300)},
			ID: fmt.Sprintf("0/%X:%d", 0x1000000+i*300, i%100),
		}
		ev.Source.Ints[postgres.SourceBlock.Slot("txId")] = int64(1000 + i/100)
		ev.Source.Ints[postgres.SourceBlock.Slot("lsn")] = int64(0x1000000 + i*300)
		switch k := i % 100; {
		case k < 60:
			ev.Op, ev.After = change.OpCreate, row
		case k < 90:
			ev.Op, ev.After = change.OpUpdate, row
		default:
			ev.Op, ev.Before = change.OpDelete, row
		}
		evs = append(evs, ev)
		if i%100 == 99 {
			evs = append(evs, &change.Event{Position: change.Position(fmt.Sprintf(`{"lsn":"%d"}`, i))})
		}
	}
	return evs
}

// emitBenchPipeline is a Pipeline ready for emit, publishing to the brokers at addr.
func emitBenchPipeline(b testing.TB, addr string) *Pipeline {
	prod, err := kafka.NewProducer(destination.Kafka(config.Destination{BootstrapServers: addr, DisableTLS: true, CreateMissingTopics: true, MaxInFlight: benchInFlight()}))
	if err != nil {
		b.Fatal(err)
	}
	prefix := fmt.Sprintf("bench-emit-%d", time.Now().UnixNano())
	b.Cleanup(func() {
		deleteBenchTopic(addr, prefix+".public.bench")
		prod.Close()
	})
	p := &Pipeline{
		Name:       "bench",
		Encoder:    debezium.NewEncoder(debezium.Options{TopicPrefix: prefix}),
		Producer:   prod,
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		DeleteMode: "record",
	}
	p.defaults()
	ctx, cancel := context.WithCancelCause(context.Background())
	b.Cleanup(func() { cancel(nil) })
	p.produceCtx = ctx
	p.fail = func(err error) { cancel(err) }
	return p
}

// runEmit pushes b.N events through emit and waits until all are acknowledged.
func runEmit(b *testing.B, p *Pipeline) {
	ctx := context.Background()
	t := emitBenchTable()
	evs := emitBenchEvents(t, 10_000)
	// The first emit creates the topic; keep that out of the measurement.
	if err := p.emit(ctx, evs[0]); err != nil {
		b.Fatal(err)
	}
	if err := p.Producer.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := p.emit(ctx, evs[i%len(evs)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := p.Producer.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if err := context.Cause(p.produceCtx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// deleteBenchTopic removes what a benchmark wrote; the broker is shared.
func deleteBenchTopic(addr, topic string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kadm.NewClient(cl).DeleteTopics(ctx, topic)
}

func BenchmarkEmit(b *testing.B) {
	b.Run("kfake", func(b *testing.B) {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(3))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		runEmit(b, emitBenchPipeline(b, strings.Join(c.ListenAddrs(), ",")))
	})
	b.Run("broker", func(b *testing.B) {
		const addr = "127.0.0.1:9092"
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			b.Skipf("no broker on %s (make services-up): %v", addr, err)
		}
		conn.Close()
		runEmit(b, emitBenchPipeline(b, addr))
	})
}

// BenchmarkEncode is emit's encoding alone (key and value of one event), for comparison
// with BenchmarkEmit: the difference is record building, the producer and the tracker.
func BenchmarkEncode(b *testing.B) {
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: "bench"})
	evs := emitBenchEvents(emitBenchTable(), 1000)
	b.ReportAllocs()
	var key, value []byte
	for i := 0; b.Loop(); i++ {
		ev := evs[i%len(evs)]
		if ev.Op == change.OpNone {
			continue
		}
		var err error
		if key, _, err = enc.AppendKey(key[:0], ev); err != nil {
			b.Fatal(err)
		}
		if value, err = enc.AppendValue(value[:0], ev, 1_704_067_300_000_000); err != nil {
			b.Fatal(err)
		}
	}
}

// benchInFlight is destination.max_in_flight for the benchmarks:
// BENCH_MAX_IN_FLIGHT when set (to compare settings), else the default.
func benchInFlight() int {
	n, _ := strconv.Atoi(os.Getenv("BENCH_MAX_IN_FLIGHT"))
	return n
}
