package pipeline

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/capture"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/destination"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
)

// BenchmarkDrain is the whole hot path in one process: the PostgreSQL source decodes
// pgoutput, the pipeline encodes and produces to the local broker. b.N changes (rounded up
// to transactions of 100, mixed 60/30/10 like `make bench`) are committed while the
// pipeline is stopped; the timer covers draining them. Needs `make services-up`; skipped
// otherwise. A CPU profile of it shows where a drain spends its time:
//
//	go test -run '^$' -bench Drain -benchtime 200000x -cpuprofile cpu.out ./pkg/pipeline
func BenchmarkDrain(b *testing.B) {
	const admin = "postgres://postgres:postgres@127.0.0.1:5432/postgres"
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		b.Skipf("no PostgreSQL on 127.0.0.1:5432 (make services-up): %v", err)
	}
	defer conn.Close(ctx)

	name := fmt.Sprintf("bench_drain_%d_%d", os.Getpid(), time.Now().UnixNano()%1_000_000)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		for i := 0; i < 40; i++ {
			if _, err := conn.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, name); err == nil {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	url := "postgres://postgres:postgres@127.0.0.1:5432/" + name
	db, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close(ctx)
	for _, sql := range []string{drainSchema, "SELECT bench_rows(-60, -1)"} {
		if _, err := db.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
			b.Fatal(err)
		}
	}

	store, err := checkpoint.OpenFile(filepath.Join(b.TempDir(), "checkpoints"), name)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	prefix := "bench-drain-" + name[len("bench_drain_"):]
	b.Cleanup(func() { deleteBenchTopic("127.0.0.1:9092", prefix+".public.bench") })
	run := func(until func(p *Pipeline) bool) {
		src, err := capture.New(ctx, source.Options{Pipeline: name, TopicPrefix: prefix, Config: config.Source{
			Type: "postgres", URL: url, Tables: []string{"public.bench"}, Settings: postgres.Settings{Slot: name, Publication: name}}})
		if err != nil {
			b.Fatal(err)
		}
		defer src.Close()
		prod, err := kafka.NewProducer(destination.Kafka(config.Destination{BootstrapServers: "127.0.0.1:9092", DisableTLS: true, CreateMissingTopics: true, MaxInFlight: benchInFlight()}))
		if err != nil {
			b.Fatal(err)
		}
		defer prod.Close()
		p := &Pipeline{Name: name, Source: src, Encoder: debezium.NewEncoder(debezium.Options{TopicPrefix: prefix}),
			Producer: prod, Store: store, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DeleteMode: "record"}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- p.Run(rctx) }()
		deadline := time.Now().Add(5 * time.Minute)
		for !until(p) {
			select {
			case err := <-done:
				cancel()
				b.Fatalf("pipeline stopped: %v", err)
			case <-time.After(5 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				cancel()
				b.Fatal("pipeline made no progress for 5 minutes")
			}
		}
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}

	// First start: the slot, the seed backfill, a checkpoint. Then the changes pile up.
	run(func(*Pipeline) bool {
		_, found, err := store.Load(ctx)
		return err == nil && found
	})
	batches := (b.N + 99) / 100
	if _, err := db.Exec(ctx, fmt.Sprintf(
		"DO $$ BEGIN FOR b IN 0..%d LOOP PERFORM bench_batch(b); COMMIT; END LOOP; END $$", batches-1),
		pgx.QueryExecModeSimpleProtocol); err != nil {
		b.Fatal(err)
	}

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	run(func(p *Pipeline) bool { return p.Published.Load() >= int64(batches*100) })
	b.StopTimer()
	b.ReportMetric(float64(batches*100)/time.Since(start).Seconds(), "events/s")
}

// drainSchema is integration/bench's table and change generator (see data.go there).
const drainSchema = `
CREATE TABLE bench (
  id bigint PRIMARY KEY, customer_id integer NOT NULL, status text NOT NULL,
  amount numeric(12,2) NOT NULL, created_at timestamptz NOT NULL, note text);
CREATE FUNCTION bench_rows(lo bigint, hi bigint) RETURNS void LANGUAGE sql AS $$
  INSERT INTO bench
  SELECT g, (abs(g) % 10000)::int, (ARRAY['new','paid','shipped','delivered'])[1 + abs(g) % 4],
         (abs(g) % 100000) / 100.0, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second',
         repeat(md5(g::text), 4)
  FROM generate_series(lo, hi) g
$$;
CREATE FUNCTION bench_batch(b bigint) RETURNS void LANGUAGE sql AS $$
  SELECT bench_rows(b * 60, b * 60 + 59);
  UPDATE bench SET status = 'updated', amount = amount + 1, note = repeat(md5((id + 1)::text), 4)
   WHERE id BETWEEN (b - 1) * 60 AND (b - 1) * 60 + 29;
  DELETE FROM bench WHERE id BETWEEN (b - 1) * 60 + 30 AND (b - 1) * 60 + 39;
$$;
`
