package pipeline

// Review tests for 80d5fcf (hurry the producer's batches when a caught-up
// source pauses at a source-transaction end). Each Hurry is a franz-go
// Flush, which logs "flushing" at info level: a counting kgo.Logger tells
// how many hurries were made, without a broker (the client dials lazily).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/destination"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// flushCounter counts the client's Flush calls (each logs "flushing").
type flushCounter struct{ n atomic.Int64 }

func (c *flushCounter) Level() kgo.LogLevel { return kgo.LogLevelInfo }
func (c *flushCounter) Log(_ kgo.LogLevel, msg string, _ ...any) {
	if msg == "flushing" {
		c.n.Add(1)
	}
}

func reviewProducer(t *testing.T, extra ...kgo.Opt) (*kafka.Producer, *flushCounter) {
	t.Helper()
	c := &flushCounter{}
	opts := append([]kgo.Opt{kgo.WithLogger(c)}, extra...)
	prod, err := kafka.NewProducer(destination.Kafka(config.Destination{BootstrapServers: "127.0.0.1:9092", DisableTLS: true,
		MaxMessageBytes: 1 << 20, CreateMissingTopics: true}), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	return prod, c
}

// runHurry runs hurryWhenIdle for d and returns how many hurries it made.
func runHurry(p *Pipeline, c *flushCounter, d time.Duration, during func()) int64 {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.hurryWhenIdle(ctx) }()
	if during != nil {
		during()
	}
	time.Sleep(d)
	cancel()
	<-done
	return c.n.Load()
}

// TestReviewHurryMidSourceTransaction: a hurry is made only while the
// source stands at a source-transaction end. A signal sent at an end B and
// taken after the next transaction's first row C (the goroutine was late,
// or in its quiet wait for an earlier end, so B's signal sat in the
// buffer) hurried the producer while the source was inside C's
// transaction: hurryWhenIdle took its emits snapshot when it received the
// signal and never checked that the source still stood at an end.
func TestReviewHurryMidSourceTransaction(t *testing.T) {
	prod, c := reviewProducer(t)
	p := &Pipeline{Producer: prod}
	p.hurry.atEnd = make(chan struct{}, 1)
	now := time.Now().UnixMicro()
	// Source transaction B: a change and its end, caught up.
	p.hurry.observe(&change.Event{Op: change.OpCreate, Source: change.Source{CommitMicros: now}})
	p.hurry.observe(&change.Event{Op: change.OpNone, Position: change.Position(`{"n":1}`)})
	// Source transaction C's first row, no position: the source is inside
	// C, and stays there (e.g. waits on its connection for C's next row).
	p.hurry.observe(&change.Event{Op: change.OpCreate, Source: change.Source{CommitMicros: now}})
	if n := runHurry(p, c, 100*time.Millisecond, nil); n != 0 {
		t.Errorf("%d hurries while the source stood inside a source transaction (its last event carried no position): a hurry is promised only at a source-transaction end", n)
	}
}

// funcSource is a source whose Run is a function.
type funcSource struct {
	run func(ctx context.Context, emit func(context.Context, *change.Event) error) error
}

func (s *funcSource) Run(ctx context.Context, _ change.Position, emit func(context.Context, *change.Event) error) error {
	return s.run(ctx, emit)
}
func (s *funcSource) Ack(change.Position) {}
func (s *funcSource) Close() error        { return nil }

// TestReviewHurryWithNothingHeld: a caught-up source that only moves past
// transactions of tables not published (position-only events; PostgreSQL
// gives them no commit time, so the last change's stays) made a hurry at
// every pause, though nothing was handed to the producer since the last
// one: each a walk over every partition the producer ever wrote to, for
// nothing. Only a pause with rows handed over since the last hurry hurries.
func TestReviewHurryWithNothingHeld(t *testing.T) {
	prod, c := reviewProducer(t)
	p := &Pipeline{Producer: prod}
	p.hurry.atEnd = make(chan struct{}, 1)
	p.hurry.observe(&change.Event{Op: change.OpCreate, Source: change.Source{CommitMicros: time.Now().UnixMicro()}})
	n := runHurry(p, c, 10*time.Millisecond, func() {
		for i := range 100 {
			p.hurry.observe(&change.Event{Op: change.OpNone, Position: change.Position(fmt.Sprintf(`{"n":%d}`, i))})
			time.Sleep(5 * time.Millisecond) // a pause at each end
		}
	})
	if n > 1 {
		t.Errorf("%d hurries though no record was handed to the producer after the first", n)
	}
}

// TestReviewHurryCaughtUp pins when observe calls a source caught up
// (expected to pass): MariaDB's whole-second times, PostgreSQL's commits
// without a time, backfill rows without a change.
func TestReviewHurryCaughtUp(t *testing.T) {
	now := time.Now()
	sec := now.Unix() * 1e6
	pos := change.Position(`{}`)
	for _, c := range []struct {
		name   string
		events []*change.Event
		signal bool
	}{
		{"mariadb row 1.5 s before, whole seconds", []*change.Event{
			{Op: change.OpCreate, Source: change.Source{CommitMicros: sec - 1e6}},
			{Op: change.OpNone, Position: pos, Source: change.Source{CommitMicros: sec - 1e6}}}, true},
		{"mariadb row 3 s before", []*change.Event{
			{Op: change.OpCreate, Source: change.Source{CommitMicros: sec - 3e6}},
			{Op: change.OpNone, Position: pos, Source: change.Source{CommitMicros: sec - 3e6}}}, false},
		{"mariadb long transaction: old rows, recent commit", []*change.Event{
			{Op: change.OpCreate, Source: change.Source{CommitMicros: sec - 60e6}},
			{Op: change.OpNone, Position: pos, Source: change.Source{CommitMicros: sec}}}, true},
		{"postgres commit without a time after a recent change", []*change.Event{
			{Op: change.OpCreate, Source: change.Source{CommitMicros: now.UnixMicro() - 1000}},
			{Op: change.OpNone, Position: pos}}, true},
		{"backfill rows only", []*change.Event{
			{Op: change.OpRead, Source: change.Source{CommitMicros: now.UnixMicro()}},
			{Op: change.OpNone, Position: pos}}, false},
		{"heartbeat after an old change", []*change.Event{
			{Op: change.OpCreate, Source: change.Source{CommitMicros: now.UnixMicro() - 5e6}},
			{Op: change.OpNone, Position: pos}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &idleHurry{atEnd: make(chan struct{}, 1)}
			for _, ev := range c.events {
				h.observe(ev)
			}
			got := len(h.atEnd) == 1
			if got != c.signal {
				t.Errorf("signalled %v, want %v", got, c.signal)
			}
		})
	}
}

// TestReviewHurryEndsWhenRunFails (expected to pass): a source that fails
// at once leaves no hurryWhenIdle running, and Run returns its error.
func TestReviewHurryEndsWhenRunFails(t *testing.T) {
	prod, _ := reviewProducer(t)
	fs, err := checkpoint.OpenFile(t.TempDir(), "hurryfail")
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	boom := errors.New("boom")
	p := &Pipeline{Name: "hurryfail", Source: &funcSource{run: func(context.Context, func(context.Context, *change.Event) error) error { return boom }},
		Encoder: debezium.NewEncoder(debezium.Options{TopicPrefix: "x"}), Producer: prod, Store: fs, DeleteMode: "record",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	done := make(chan error, 1)
	go func() { done <- p.Run(context.Background()) }()
	select {
	case err := <-done:
		if !errors.Is(err, boom) {
			t.Errorf("Run: %v, want boom", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	buf := make([]byte, 1<<20)
	if s := string(buf[:runtime.Stack(buf, true)]); strings.Contains(s, "hurryWhenIdle") {
		t.Errorf("hurryWhenIdle still running after Run returned")
	}
}

// TestReviewHurryConcurrentDelivery (expected to pass): hurries from
// another goroutine, every 100 µs, while records are produced and while a
// real Flush waits, on the real broker: every record is acknowledged once,
// and the partition holds them once each, in order.
func TestReviewHurryConcurrentDelivery(t *testing.T) {
	const addr, n = "127.0.0.1:9092", 3000
	topic := fmt.Sprintf("hurryrevdeliv%d", time.Now().UnixNano())
	prod, _ := reviewProducer(t)
	t.Cleanup(func() { deleteBenchTopic(addr, topic) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := prod.EnsureTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	hurried := make(chan struct{})
	go func() {
		defer close(hurried)
		for {
			select {
			case <-stop:
				return
			default:
			}
			prod.Hurry()
			time.Sleep(100 * time.Microsecond)
		}
	}()
	var acks, fails atomic.Int64
	for i := range n {
		m := kafka.Message{Topic: topic, Key: []byte("k"), Value: []byte(fmt.Sprint(i)), Partition: 0, Partitioned: true}
		if err := prod.Publish(ctx, m, func(err error) {
			if err != nil {
				fails.Add(1)
			} else {
				acks.Add(1)
			}
		}); err != nil {
			t.Fatal(err)
		}
		if i%500 == 499 {
			if err := prod.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	close(stop)
	<-hurried
	if acks.Load() != n || fails.Load() != 0 {
		t.Fatalf("acks %d, failures %d, want %d, 0", acks.Load(), fails.Load(), n)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	next := 0
	for next < n && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) != fmt.Sprint(next) {
				t.Fatalf("record %d at offset %d is %q", next, r.Offset, r.Value)
			}
			next++
		})
	}
	if next != n {
		t.Fatalf("read %d of %d", next, n)
	}
}
