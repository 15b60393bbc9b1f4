package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/metrics"
	"github.com/tributary-cdc/tributary/pkg/pipeline"
)

// TestRideStalls: runs that fail because the cluster cannot accept
// writes are run again from the checkpoint (one log line and one counted
// retry each, the stalled gauge at 1), and the task ends only with the run
// that ends otherwise; a poison record ends it at once.
func TestRideStalls(t *testing.T) {
	stalled := &kafka.PublishError{Topic: "t", Partition: 0, Err: kerr.NotEnoughReplicas}
	poison := &kafka.PublishError{Topic: "t", Partition: 0, Err: kerr.InvalidRecord}
	for _, c := range []struct {
		name    string
		results []error // what each run returns
		want    error
		runs    int
	}{
		{"stall twice, then a clean stop", []error{stalled, stalled, nil}, nil, 3},
		{"stall, then a poison record", []error{stalled, poison}, poison, 2},
		{"a poison record at once", []error{poison}, poison, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			log := slog.New(slog.NewTextHandler(&out, nil))
			m := metrics.NewPipeline(metrics.NewRegistry(), "p")
			runs := 0
			var firsts []bool
			err := rideStallsWith(context.Background(), log, m, 0, func(first bool) error {
				firsts = append(firsts, first)
				runs++
				return c.results[runs-1]
			})
			if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if runs != c.runs || !firsts[0] || (runs > 1 && firsts[1]) {
				t.Fatalf("%d runs (first flags %v), want %d, only the first with the destination check", runs, firsts, c.runs)
			}
			if n := strings.Count(out.String(), "Kafka cannot accept writes right now"); n != runs-1 {
				t.Fatalf("%d stall lines, want one per retry (%d):\n%s", n, runs-1, out.String())
			}
			if got, want := m.KafkaStalledNow(), runs > 1; got != want {
				t.Errorf("stalled gauge %v after the runs, want %v (nothing was acknowledged after the stall)", got, want)
			}
		})
	}
}

// lockedBuffer is a log destination the watcher and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWatchAcks: records in flight with no acknowledgement for the stall
// delay set the stalled gauge and log a warning, repeated once per delay,
// not per check; an acknowledgement clears it and says so.
func TestWatchAcks(t *testing.T) {
	var out lockedBuffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	m := metrics.NewPipeline(metrics.NewRegistry(), "p")
	p := &pipeline.Pipeline{}
	m.Rows("public.t").Sent(change.OpCreate, time.Now().UnixMicro(), time.Now()) // one record in flight
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); watchAcks(ctx, p, m, log, 5*time.Millisecond, 100*time.Millisecond) }()
	defer func() { cancel(); <-done }()

	waitUntil(t, "the stall reported", func() bool { return m.KafkaStalledNow() })
	time.Sleep(150 * time.Millisecond)
	if n := strings.Count(out.String(), "Kafka has acknowledged nothing"); n < 1 || n > 3 {
		t.Fatalf("%d stall warnings within about 250 ms with a 100 ms delay, want one per delay:\n%s", n, out.String())
	}
	p.Published.Add(1)
	waitUntil(t, "the stall cleared", func() bool { return !m.KafkaStalledNow() })
	// The line follows the gauge (CI read the log between the two).
	waitUntil(t, "a line saying the stall ended:\n"+out.String(), func() bool { return strings.Contains(out.String(), "Kafka accepts writes again") })
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestWatchAcksAfterIdle: a stall is measured from when records started
// waiting, not from the last acknowledgement. After an idle period longer
// than the stall delay, a record in flight that is acknowledged quickly
// reports nothing (no warning, the gauge stays 0); one that then waits
// unacknowledged is reported only once it has waited the delay.
func TestWatchAcksAfterIdle(t *testing.T) {
	const every, after = 5 * time.Millisecond, 300 * time.Millisecond
	var out lockedBuffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	m := metrics.NewPipeline(metrics.NewRegistry(), "p")
	rows := m.Rows("public.t")
	p := &pipeline.Pipeline{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); watchAcks(ctx, p, m, log, every, after) }()
	defer func() { cancel(); <-done }()

	var sawStalled atomic.Bool
	sctx, stopSampling := context.WithCancel(context.Background())
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for sctx.Err() == nil {
			if m.KafkaStalledNow() {
				sawStalled.Store(true)
			}
			time.Sleep(time.Millisecond)
		}
	}()

	time.Sleep(2 * after) // idle: nothing in flight, nothing acknowledged

	// A burst acknowledged well within the delay.
	sent := time.Now().UnixMicro()
	rows.Sent(change.OpCreate, sent, time.Now())
	time.Sleep(after / 6)
	rows.Acked(change.OpCreate, sent, true, time.Now())
	p.Published.Add(1)
	time.Sleep(after / 2) // several checks with nothing in flight
	stopSampling()
	<-sampled
	if sawStalled.Load() || strings.Contains(out.String(), "Kafka has acknowledged nothing") || strings.Contains(out.String(), "Kafka accepts writes again") {
		t.Fatalf("a burst after an idle period, acknowledged within %v, was reported as a stall (gauge seen at 1: %v):\n%s", after/6, sawStalled.Load(), out.String())
	}

	// Idle again, then a record that waits: a stall, but only once it
	// has waited the delay.
	time.Sleep(2 * after)
	inFlightAt := time.Now()
	rows.Sent(change.OpCreate, time.Now().UnixMicro(), time.Now())
	waitUntil(t, "the stall reported", func() bool { return m.KafkaStalledNow() })
	if waited := time.Since(inFlightAt); waited < after-every {
		t.Fatalf("stall reported %v after the record went in flight, want at least the delay %v:\n%s", waited, after, out.String())
	}
	// The line follows the gauge.
	waitUntil(t, "the stall warning", func() bool { return strings.Contains(out.String(), "Kafka has acknowledged nothing") })
	if n := strings.Count(out.String(), "Kafka has acknowledged nothing"); n != 1 {
		t.Fatalf("%d stall warnings, want 1:\n%s", n, out.String())
	}
	p.Published.Add(1)
	waitUntil(t, "the stall cleared", func() bool { return !m.KafkaStalledNow() })
	waitUntil(t, "a line saying the stall ended:\n"+out.String(), func() bool { return strings.Contains(out.String(), "Kafka accepts writes again") })
}
