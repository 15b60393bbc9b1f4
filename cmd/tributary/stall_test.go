package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
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
