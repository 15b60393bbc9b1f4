package source

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// events returns n events, numbered by their ID, a position event (the end
// of a transaction) after a random run of changes.
func handoffEvents(rng *rand.Rand, n int) []*change.Event {
	evs := make([]*change.Event, n)
	for i := range evs {
		ev := &change.Event{ID: string(rune('a' + i%26)), Op: change.OpCreate}
		if rng.IntN(8) == 0 {
			ev = &change.Event{Position: []byte{byte(i)}}
		}
		ev.Source.CommitMicros = int64(i)
		evs[i] = ev
	}
	return evs
}

// Every event is emitted once, in the order handed over, never by two
// goroutines at once, whether Emit hands it over or emits it itself; once
// sync reported true at a position, that position and everything before
// it were emitted when Emit returns.
func TestHandoffOrder(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	for round := range 50 {
		evs := handoffEvents(rng, 1+rng.IntN(2000))
		var got []int64
		var emitted atomic.Int64
		var inside atomic.Int32
		emit := func(ctx context.Context, ev *change.Event) error {
			if inside.Add(1) != 1 {
				t.Error("emit called on two goroutines at once")
			}
			got = append(got, ev.Source.CommitMicros)
			emitted.Add(1)
			if ev.Source.CommitMicros%97 == 0 {
				time.Sleep(50 * time.Microsecond) // a slow produce now and then
			}
			inside.Add(-1)
			return nil
		}
		// By round: never direct, always, or switching at random positions.
		mode := round % 3
		var said bool
		syncFn := func() bool {
			switch mode {
			case 0:
				said = false
			case 1:
				said = true
			default:
				said = rng.IntN(4) == 0
			}
			return said
		}
		h := NewHandoff(context.Background(), emit, syncFn)
		for i, ev := range evs {
			if err := h.Emit(h.Context(), ev); err != nil {
				t.Fatal(err)
			}
			if said && ev.Op == change.OpNone && emitted.Load() != int64(i+1) {
				t.Fatalf("round %d: Emit of the position at %d returned with %d events emitted", round, i, emitted.Load())
			}
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(evs) {
			t.Fatalf("round %d: %d events emitted of %d", round, len(got), len(evs))
		}
		for i, p := range got {
			if p != int64(i) {
				t.Fatalf("round %d: event %d emitted as the %dth", round, p, i)
			}
		}
		if h.Context().Err() == nil {
			t.Error("the stream's context is still live after Close")
		}
	}
}

// A failed emit stops the handoff: nothing after the failed event is
// emitted, the stream's context is canceled with the error as its cause
// (a stream waiting for the server stops at once), and Emit and Close
// return it.
func TestHandoffEmitFails(t *testing.T) {
	boom := errors.New("record refused")
	var last atomic.Int64
	last.Store(-1)
	emit := func(ctx context.Context, ev *change.Event) error {
		if ev.Source.CommitMicros == 40 {
			return boom
		}
		if ev.Source.CommitMicros > 40 {
			t.Errorf("event %d emitted after the failure", ev.Source.CommitMicros)
		}
		last.Store(ev.Source.CommitMicros)
		return nil
	}
	h := NewHandoff(context.Background(), emit, nil)
	var err error
	for i := 0; err == nil && i < 100000; i++ {
		ev := &change.Event{Op: change.OpCreate}
		ev.Source.CommitMicros = int64(i)
		err = h.Emit(h.Context(), ev)
	}
	if !errors.Is(err, boom) {
		t.Fatalf("Emit = %v, want %v", err, boom)
	}
	select {
	case <-h.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the stream's context was not canceled")
	}
	if c := context.Cause(h.Context()); !errors.Is(c, boom) {
		t.Errorf("cause = %v, want %v", c, boom)
	}
	if err := h.Close(); !errors.Is(err, boom) {
		t.Errorf("Close = %v, want %v", err, boom)
	}
	if last.Load() != 39 {
		t.Errorf("last emitted %d, want 39", last.Load())
	}
}

// Events handed over without a position after them (a stream that ended
// inside a transaction, or with an error) are still emitted by Close, as
// they were emitted before the stream returned without a handoff.
func TestHandoffCloseEmitsTheRest(t *testing.T) {
	var n atomic.Int32
	h := NewHandoff(context.Background(), func(context.Context, *change.Event) error { n.Add(1); return nil }, nil)
	for range 5 {
		if err := h.Emit(h.Context(), &change.Event{Op: change.OpUpdate}); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 5 {
		t.Fatalf("%d of 5 events emitted", n.Load())
	}
}

// Barrier returns once the positions handed over before it were emitted:
// a pipeline that queued a snapshot then knows that every position marked
// later was encoded after the queue, and carries the snapshot.
func TestHandoffBarrier(t *testing.T) {
	gate := make(chan struct{})
	var positions atomic.Int64
	emit := func(ctx context.Context, ev *change.Event) error {
		if ev.Op == change.OpNone {
			<-gate // a producer stalled on its buffer
			positions.Add(1)
		}
		return nil
	}
	h := NewHandoff(context.Background(), emit, nil)
	for i := range 10 {
		h.Emit(h.Context(), &change.Event{Op: change.OpCreate})
		h.Emit(h.Context(), &change.Event{Position: []byte{byte(i)}})
	}
	returned := make(chan int64, 1)
	go func() {
		if err := h.Barrier(context.Background()); err != nil {
			t.Error(err)
		}
		returned <- positions.Load()
	}()
	select {
	case n := <-returned:
		t.Fatalf("Barrier returned with %d of 10 positions emitted", n)
	case <-time.After(100 * time.Millisecond):
	}
	close(gate)
	if n := <-returned; n != 10 {
		t.Fatalf("Barrier returned with %d of 10 positions emitted", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Barrier(ctx); err != nil {
		t.Errorf("Barrier with nothing to wait for = %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Barrier(context.Background()); err != nil {
		t.Errorf("Barrier after Close = %v", err)
	}
}

// Once the stream's parent context is canceled (a stop, or a snapshot
// worker's failure), nothing more is emitted: the next stream streams it
// again, and emit with a canceled context fails in ways that are not
// retried.
func TestHandoffStopsEmittingWhenCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	gate, started := make(chan struct{}), make(chan struct{})
	var n atomic.Int32
	emit := func(ctx context.Context, ev *change.Event) error {
		if n.Add(1) == 1 {
			close(started)
			<-gate
		}
		return nil
	}
	h := NewHandoff(ctx, emit, nil)
	for i := range 20 { // fewer than the handoff holds: none waits
		h.Emit(h.Context(), &change.Event{Position: []byte{byte(i)}})
	}
	<-started
	cancel()
	close(gate)
	h.Close()
	if got := n.Load(); got != 1 {
		t.Fatalf("%d events emitted after the cancel, want only the one under way", got-1)
	}
}
