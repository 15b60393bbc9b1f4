package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/metrics"
	"github.com/tributary-cdc/tributary/pkg/pipeline"
)

// Waits between runs while the cluster cannot accept writes: each run
// already spent the producer's attempts (kafka.MaxAttempts), so the wait
// only spaces the retries from the checkpoint.
const (
	stallFirstWait = time.Second
	stallMaxWait   = 30 * time.Second
)

// rideStalls runs run until it returns something other than a stall. A
// publish failure that means the cluster cannot accept writes right now
// (kafka.IsStall: too few in-sync replicas, no reachable leader, the
// publish timeout) does not end the task: the pipeline has kept its
// checkpoint at the acknowledged prefix, so run starts again from it
// after a backoff, as a restarted task would, without the exit. Writes
// stall meanwhile (nothing past the checkpoint is acknowledged), one line
// per retry says so, and tributary_kafka_stalled reads 1 until a record is
// acknowledged again (watchAcks). Any other error (a poison record, a
// lost lease) still ends the task (docs/delivery.md, stalls).
func rideStalls(ctx context.Context, log *slog.Logger, m *metrics.Pipeline, run func(first bool) error) error {
	return rideStallsWith(ctx, log, m, stallFirstWait, run)
}

// rideStallsWith is rideStalls with the first wait (tests shorten it).
func rideStallsWith(ctx context.Context, log *slog.Logger, m *metrics.Pipeline, firstWait time.Duration, run func(first bool) error) error {
	wait := firstWait
	var since time.Time
	for first := true; ; first = false {
		err := run(first)
		if err == nil || ctx.Err() != nil || !kafka.IsStall(err) {
			return err
		}
		if since.IsZero() || !m.KafkaStalledNow() { // a new stall, not the same one going on
			since, wait = time.Now(), firstWait
		}
		m.KafkaStallRetry()
		log.Error("Kafka cannot accept writes right now; retrying from the checkpoint, nothing is lost",
			"err", err, "stalled_for", time.Since(since).Round(time.Second).String(), "retry_in", wait.String())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil // a stop while stalled is a graceful stop: the checkpoint is saved
		case <-t.C:
		}
		wait = min(2*wait, stallMaxWait)
	}
}

// stallAfter is how long records may wait without any acknowledgement
// before the pipeline reports a stall, and then how often it says so.
const stallAfter = 30 * time.Second

// watchAcks reports a stall while the producer is still retrying: records
// are in flight and nothing was acknowledged for stallAfter (the producer
// retries a write the broker may have taken without limit, so its attempts
// may not run out for minutes). The wait counts from the later of the last
// acknowledgement and the moment records went in flight (the first check
// that saw any in flight after one that saw none), so records sent after
// an idle period are not counted as waiting for the idle time. It sets
// tributary_kafka_stalled and logs once per stallAfter while that lasts,
// and clears the gauge (saying so) as soon as a record is acknowledged,
// also after a retry from the checkpoint. It ends with ctx (the run).
func watchAcks(ctx context.Context, p *pipeline.Pipeline, m *metrics.Pipeline, log *slog.Logger, every, after time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	acked := func() int64 { return p.Published.Load() + p.Read.Load() }
	last, lastAt, logged := acked(), time.Now(), time.Time{}
	var waitingSince time.Time // when records were first seen in flight; zero: none in flight
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			inFlight := m.InFlight()
			switch {
			case inFlight == 0:
				waitingSince = time.Time{}
			case waitingSince.IsZero():
				waitingSince = now
			}
			if n := acked(); n != last {
				last, lastAt = n, now
				if m.KafkaStalledNow() {
					m.KafkaStalled(false)
					log.Info("Kafka accepts writes again; publishing")
				}
				logged = time.Time{}
				continue
			}
			if inFlight == 0 {
				continue
			}
			from := lastAt
			if waitingSince.After(from) {
				from = waitingSince
			}
			if now.Sub(from) < after || now.Sub(logged) < after {
				continue
			}
			m.KafkaStalled(true)
			log.Warn("Kafka has acknowledged nothing for a while; the producer keeps retrying, nothing advances meanwhile",
				"waiting", now.Sub(from).Round(time.Second).String(), "records_in_flight", inFlight)
			logged = now
		}
	}
}
