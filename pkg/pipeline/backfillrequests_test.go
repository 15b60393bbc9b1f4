package pipeline

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/destination"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// TestRequestClearedOnlyOnceCheckpointCarriesIt: a backfill request
// handed over while the source is between encoding a position and
// emitting it (the stream's goroutine reads the snapshot state, then the
// request is queued, then the position is marked) must stay in the store
// until a checkpoint holds a position encoded after the hand-over: that
// stale position does not carry the queued snapshot, and a crash after a
// clear it allowed would lose the request. The source is a test double:
// the interleaving is forced by its timing, which no database offers on
// demand; it emits positions only, so nothing reaches a broker.
func TestRequestClearedOnlyOnceCheckpointCarriesIt(t *testing.T) {
	dir := t.TempDir()
	store, err := checkpoint.OpenFile(dir, "req")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	prod, err := kafka.NewProducer(destination.Kafka(config.Destination{BootstrapServers: "127.0.0.1:9092", DisableTLS: true, MaxMessageBytes: 1 << 20}))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	src := &snapSource{handed: make(chan struct{}), started: make(chan struct{})}
	p := &Pipeline{Name: "req", Source: src, Producer: prod, Store: store, DeleteMode: "record",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), CheckpointEvery: 20 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()

	<-src.started
	if err := checkpoint.RequestBackfillFile(dir, "req", checkpoint.Request{Tables: []string{"public.orders"}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		req, err := checkpoint.PendingFile(dir, "req")
		if err != nil {
			t.Fatal(err)
		}
		if req.Empty() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request was never cleared")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cp, _, err := checkpoint.ReadFile(context.Background(), dir, "req")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cp.Position), "public.orders") {
		t.Errorf("the request was cleared while the checkpoint %s does not carry its snapshot: a crash now loses it", cp.Position)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// snapSource snapshots: each position it emits names the tables queued
// when it was encoded.
type snapSource struct {
	mu      sync.Mutex
	queued  []string
	once    sync.Once
	handed  chan struct{} // closed by the first Snapshot
	started chan struct{} // closed once the start position is emitted
}

func (s *snapSource) Snapshot(_ context.Context, tables []string) error {
	s.mu.Lock()
	s.queued = append(s.queued, tables...)
	s.mu.Unlock()
	s.once.Do(func() { close(s.handed) })
	return nil
}

func (s *snapSource) position(n int) *change.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &change.Event{Position: change.Position(fmt.Sprintf(`{"n":%d,"queued":%q}`, n, strings.Join(s.queued, ",")))}
}

func (s *snapSource) Run(ctx context.Context, _ change.Position, emit func(context.Context, *change.Event) error) error {
	if err := emit(ctx, s.position(0)); err != nil {
		return err
	}
	close(s.started)
	stale := s.position(1) // encoded before the hand-over
	select {
	case <-s.handed:
	case <-ctx.Done():
		return ctx.Err()
	}
	// Marked after the pipeline recorded the hand-over, and checkpointed
	// within a poll period (requestEvery) of it.
	time.Sleep(100 * time.Millisecond)
	if err := emit(ctx, stale); err != nil {
		return err
	}
	// The next position, the first to carry the request, comes after the
	// next poll.
	select {
	case <-time.After(requestEvery + time.Second):
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := emit(ctx, s.position(2)); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

func (s *snapSource) Ack(change.Position) {}
func (s *snapSource) Close() error        { return nil }

// knownSource takes a snapshot request only when it names known tables,
// as a source refuses a table it does not capture; it records what it
// took and counts what it refused.
type knownSource struct {
	snapSource
	known   []string
	took    [][]string
	refused int
}

func (s *knownSource) Snapshot(_ context.Context, tables []string) error {
	for _, t := range tables {
		if !slices.Contains(s.known, t) {
			s.refused++
			return fmt.Errorf("%s is not captured", t)
		}
	}
	s.took = append(s.took, tables)
	return nil
}

// A request the source refuses, made while an earlier one is handed over
// and not cleared (one naming an unknown table, alone or with that table
// again), is refused once: the earlier one then clears, and a later
// request for the same table is handed on. Before, the refused request
// was handed on again at every poll and the earlier one never cleared;
// and the store's request file, removed by the refusal, counted again
// from zero, so that a later request read as the one already handed and
// was never served. Poll and clear are called in turn as the pipeline's
// ticker does, on the file store.
func TestRefusedRequestAnswersItsStamp(t *testing.T) {
	for _, second := range [][]string{{"public.bogus"}, {"public.bogus", "public.ledger"}} {
		t.Run(strings.Join(second, "+"), func(t *testing.T) {
			dir := t.TempDir()
			store, err := checkpoint.OpenFile(dir, "req")
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			src := &knownSource{known: []string{"public.ledger"}}
			p := &Pipeline{Name: "req", Source: src, Store: store, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			ctx := context.Background()
			request := func(tables ...string) {
				t.Helper()
				if err := checkpoint.RequestBackfillFile(dir, "req", checkpoint.Request{Tables: tables}); err != nil {
					t.Fatal(err)
				}
			}
			tick := func() { // a checkpoint past every mark, then the ticker's clear and poll
				p.savedMark.Store(p.tracker.marked() + 2)
				p.clearBackfills(ctx)
				p.pollBackfills(ctx, store)
			}
			request("public.ledger")
			p.pollBackfills(ctx, store)
			request(second...)
			for range 3 {
				tick()
			}
			if pending, err := store.PendingBackfill(ctx); err != nil || !pending.Empty() || src.refused != 1 || len(src.took) != 1 {
				t.Fatalf("after the refusal and three polls: the store holds %+v (%v), %d refusals, the source took %v; want nothing held, one refusal, the first request taken",
					pending, err, src.refused, src.took)
			}
			request("public.ledger")
			tick()
			if len(src.took) != 2 || !slices.Equal(src.took[1], []string{"public.ledger"}) {
				t.Fatalf("a request after the refused one: the source took %v, want public.ledger again", src.took)
			}
			tick()
			if pending, err := store.PendingBackfill(ctx); err != nil || !pending.Empty() {
				t.Fatalf("the last request was never cleared: %+v (%v)", pending, err)
			}
		})
	}
}
