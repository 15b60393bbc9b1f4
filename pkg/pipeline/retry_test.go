package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/destination"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
)

// The retry contract end to end (docs/delivery.md): a publish that
// keeps failing stops the pipeline after kafka.MaxAttempts attempts without
// the checkpoint passing the failed record, and one that heals in time
// delivers everything. The source is a test double (the pipeline knows no
// database); the broker is kfake because the fault must be injected on one
// partition only, which a real broker does not do on demand.

const (
	retryTopic   = "retry.public.orders"
	goodPart     = 1 // the partition that works
	badPart      = 0 // the partition whose produce requests fail
	rowsAround   = 5 // rows on goodPart before and after the one on badPart
	retryTimeout = 25 * time.Second
)

func TestRetryExhaustedStopsWithoutPassingFailedRecord(t *testing.T) {
	h := newRetryHarness(t)
	faults := h.cluster.Fault(kfake.Fault{
		Keys: []kmsg.Key{kmsg.Produce}, Topic: retryTopic, Partitions: []int32{badPart},
		Err: kerr.NotEnoughReplicas, Count: -1,
	})
	// Only the waits between attempts are shortened (see pipeline); the
	// number of attempts is the production setting.
	p := h.pipeline(t, kgo.RetryBackoffFn(func(int) time.Duration { return 5 * time.Millisecond }))

	ctx, cancel := context.WithTimeout(context.Background(), retryTimeout)
	defer cancel()
	start := time.Now()
	err := p.Run(ctx)
	if ctx.Err() != nil {
		t.Fatalf("Run did not stop on its own within %s (err %v, %d produce attempts on partition %d)", retryTimeout, err, faults.Hits(), badPart)
	}
	if !errors.Is(err, errPublish) || !errors.Is(err, kerr.NotEnoughReplicas) || !strings.Contains(err.Error(), fmt.Sprintf("partition %d", badPart)) {
		t.Fatalf("Run: %v, want a publish failure on partition %d with NOT_ENOUGH_REPLICAS", err, badPart)
	}
	if n := faults.Hits(); n != kafka.MaxAttempts {
		t.Errorf("%d produce attempts on partition %d, want %d", n, badPart, kafka.MaxAttempts)
	}

	// Nothing at or after the failed row was ever checkpointed or acked
	// to the source; what came before it was.
	lastSafe := h.positions[h.failed-1]
	for _, pos := range h.store.saves() {
		if i := h.index(pos); i >= h.failed {
			t.Errorf("checkpoint saved position %s of row %d, at or past the failed row %d", pos, i, h.failed)
		}
	}
	for _, pos := range h.source.acks() {
		if i := h.index(pos); i >= h.failed {
			t.Errorf("source acked position %s of row %d, at or past the failed row %d", pos, i, h.failed)
		}
	}
	if got := h.reload(t); string(got) != string(lastSafe) {
		t.Errorf("checkpoint after the failure is %s, want %s (the row before the failed one)", got, lastSafe)
	}
	t.Logf("stopped after %s and %d attempts: %v; checkpoint %s (row %d of %d)",
		time.Since(start).Round(time.Millisecond), faults.Hits(), err, lastSafe, h.failed-1, len(h.positions))
}

func TestRetryHealsBeforeAttemptsRunOut(t *testing.T) {
	h := newRetryHarness(t)
	const failures = 4
	faults := h.cluster.Fault(kfake.Fault{
		Keys: []kmsg.Key{kmsg.Produce}, Topic: retryTopic, Partitions: []int32{badPart},
		Err: kerr.NotEnoughReplicas, Count: failures,
	})
	p := h.pipeline(t)

	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- p.Run(ctx) }()
	last := h.positions[len(h.positions)-1]
	deadline := time.After(retryTimeout)
	for !h.store.hasSaved(last) {
		select {
		case err := <-runErr:
			cancel()
			t.Fatalf("Run returned %v before the last position was checkpointed (%d attempts failed)", err, faults.Hits())
		case <-deadline:
			cancel()
			<-runErr
			t.Fatalf("last position not checkpointed within %s; saves %q", retryTimeout, h.store.saves())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Fatalf("Run after a graceful stop: %v", err)
	}
	if n := faults.Hits(); n != failures {
		t.Errorf("%d failed produce attempts, want %d", n, failures)
	}
	if got := h.reload(t); string(got) != string(last) {
		t.Errorf("checkpoint %s, want %s", got, last)
	}

	// Every row arrived exactly once (the producer is idempotent, so the
	// retries of the failed partition did not duplicate anything).
	ids := h.consumeEventIDs(t, len(h.positions))
	for i := range h.positions {
		if n := ids[eventID(i)]; n != 1 {
			t.Errorf("row %d (%s) delivered %d times, want 1", i, eventID(i), n)
		}
	}
	t.Logf("%d attempts failed, then all %d rows delivered; checkpoint %s", faults.Hits(), len(h.positions), last)
}

// retryHarness is a kfake cluster with retryTopic (two partitions), a
// source of rows whose keys land rowsAround on goodPart, one on badPart,
// rowsAround on goodPart, and a file checkpoint store in a temp dir.
type retryHarness struct {
	cluster   *kfake.Cluster
	enc       *debezium.Encoder
	source    *listSource
	store     *recordingStore
	dir       string
	positions []change.Position // positions[i] follows row i
	failed    int               // index of the row on badPart
}

func newRetryHarness(t *testing.T) *retryHarness {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, retryTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	h := &retryHarness{cluster: c, enc: debezium.NewEncoder(debezium.Options{TopicPrefix: "retry"}), dir: t.TempDir()}
	table := &change.Table{
		ID: change.TableID{DB: "shop", Schema: "public", Name: "orders"},
		Columns: []change.Column{
			{Name: "id", Type: change.Type{Kind: change.KindInt64, Precision: -1, Scale: -1, Length: -1}},
			{Name: "note", Type: change.Type{Kind: change.KindString, Precision: -1, Scale: -1, Length: -1}, Optional: true},
		},
		Key:     []int{0},
		Version: 1,
	}
	if got := h.enc.Topic(table); got != retryTopic {
		t.Fatalf("topic %s, want %s", got, retryTopic)
	}
	// Pick ids by the partition the producer's murmur2 key hash gives them.
	part := kgo.StickyKeyPartitioner(nil).ForTopic(retryTopic)
	var good, bad []*change.Event
	for id := int64(1); len(good) < 2*rowsAround || len(bad) < 1; id++ {
		ev := &change.Event{
			Table: table, Op: change.OpCreate,
			After: change.Row{change.IntValue(id), change.TextValue(fmt.Sprintf("order %d", id))},
			Source: change.Source{Block: postgres.SourceBlock, Name: "retry", DB: "shop", Schema: "public", Table: "orders",
				CommitMicros: 1_704_067_200_000_000 + id},
		}
		key, _, err := h.enc.AppendKey(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		switch part.Partition(&kgo.Record{Key: key}, 2) {
		case goodPart:
			good = append(good, ev)
		case badPart:
			bad = append(bad, ev)
		}
	}
	events := append(append(append([]*change.Event{}, good[:rowsAround]...), bad[0]), good[rowsAround:2*rowsAround]...)
	h.failed = rowsAround
	for i, ev := range events {
		ev.ID = eventID(i)
		ev.Position = change.Position(fmt.Sprintf(`{"row":%d}`, i))
		h.positions = append(h.positions, ev.Position)
	}
	h.source = &listSource{events: events}
	fs, err := checkpoint.OpenFile(h.dir, "retry")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	h.store = &recordingStore{Store: fs}
	return h
}

func eventID(i int) string { return fmt.Sprintf("0/%X:%d", 0x1000+i, i) }

// pipeline returns a pipeline over the harness with the production
// producer settings plus extra.
func (h *retryHarness) pipeline(t *testing.T, extra ...kgo.Opt) *Pipeline {
	d := destination.Kafka(config.Destination{BootstrapServers: h.cluster.ListenAddrs()[0], DisableTLS: true, MaxMessageBytes: 1 << 20})
	// kgo retries a partition's failed produce once metadata has been
	// refreshed, and refreshes at most every MetadataMinAge (5 s): in
	// production that, not RetryBackoffFn, spaces these attempts 5 s apart
	// (measured), so 10 attempts take about 45 s. Shortening it keeps the
	// test fast without changing how many attempts are made.
	prod, err := kafka.NewProducer(d, append([]kgo.Opt{kgo.MetadataMinAge(10 * time.Millisecond)}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	return &Pipeline{
		Name:            "retry",
		Source:          h.source,
		Encoder:         h.enc,
		Producer:        prod,
		Store:           h.store,
		Log:             slog.New(slog.NewTextHandler(io.Discard, nil)),
		DeleteMode:      "record",
		CheckpointEvery: 20 * time.Millisecond,
	}
}

// index returns the row a position follows, or -1.
func (h *retryHarness) index(pos change.Position) int {
	for i, p := range h.positions {
		if string(p) == string(pos) {
			return i
		}
	}
	return -1
}

// reload closes the store and reads the checkpoint back from its file, as
// the next run would.
func (h *retryHarness) reload(t *testing.T) change.Position {
	h.store.Close()
	fs, err := checkpoint.OpenFile(h.dir, "retry")
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	cp, found, err := fs.Load(context.Background())
	if err != nil || !found {
		t.Fatalf("load checkpoint: found %v, err %v", found, err)
	}
	return cp.Position
}

// consumeEventIDs reads n records of retryTopic and counts their
// tributary-event-id headers.
func (h *retryHarness) consumeEventIDs(t *testing.T, n int) map[string]int {
	cl, err := kgo.NewClient(kgo.SeedBrokers(h.cluster.ListenAddrs()...), kgo.ConsumeTopics(retryTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ids := map[string]int{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for got := 0; got < n; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records", got, n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			for _, hd := range r.Headers {
				if hd.Key == "tributary-event-id" {
					ids[string(hd.Value)]++
				}
			}
		})
	}
	return ids
}

// listSource emits its events in order, then waits for the end; it
// resumes after the position it is given.
type listSource struct {
	events []*change.Event

	mu    sync.Mutex
	acked []change.Position
}

func (s *listSource) Run(ctx context.Context, from change.Position, emit func(context.Context, *change.Event) error) error {
	start := 0
	for i, ev := range s.events {
		if from != nil && string(ev.Position) == string(from) {
			start = i + 1
		}
	}
	for _, ev := range s.events[start:] {
		if err := emit(ctx, ev); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

func (s *listSource) Ack(pos change.Position) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acked = append(s.acked, pos)
}

func (s *listSource) acks() []change.Position {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]change.Position(nil), s.acked...)
}

func (s *listSource) Close() error { return nil }

// recordingStore keeps every position saved through it.
type recordingStore struct {
	checkpoint.Store

	mu    sync.Mutex
	saved []change.Position
}

func (s *recordingStore) Save(ctx context.Context, cp checkpoint.Checkpoint) error {
	s.mu.Lock()
	s.saved = append(s.saved, cp.Position)
	s.mu.Unlock()
	return s.Store.Save(ctx, cp)
}

func (s *recordingStore) saves() []change.Position {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]change.Position(nil), s.saved...)
}

// hasSaved reports whether pos has been saved.
func (s *recordingStore) hasSaved(pos change.Position) bool {
	for _, p := range s.saves() {
		if string(p) == string(pos) {
			return true
		}
	}
	return false
}
