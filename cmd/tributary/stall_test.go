package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/metrics"
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
