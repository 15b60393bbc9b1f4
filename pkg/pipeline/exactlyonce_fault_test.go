package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/destination"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// TestTransactionWithFailedRecordIsNotCommitted: delivery exactly_once
// must not commit a transaction in which a record failed, whatever the
// client library does with the failure: the offsets topic would then
// point past a change that never reached Kafka, and the next run would
// resume after it. The broker is kfake because the fault (produce to one
// partition failing NOT_ENOUGH_REPLICAS for good while the offsets topic
// stays healthy) is one a real broker does not produce on demand.
func TestTransactionWithFailedRecordIsNotCommitted(t *testing.T) {
	h := newRetryHarness(t)
	const offsetsTopic = "retry.offsets"
	if err := h.cluster.CreateTopic(offsetsTopic, 1, nil); err != nil {
		t.Fatal(err)
	}
	faults := h.cluster.Fault(kfake.Fault{
		Keys: []kmsg.Key{kmsg.Produce}, Topic: retryTopic, Partitions: []int32{badPart},
		Err: kerr.NotEnoughReplicas, Count: -1,
	})
	d := destination.Kafka(config.Destination{BootstrapServers: h.cluster.ListenAddrs()[0], DisableTLS: true, MaxMessageBytes: 1 << 20})
	run := func(ctx context.Context) error {
		p := h.pipeline(t)
		// See pipeline: only the waits between attempts are shortened.
		prod, err := kafka.NewTransactionalProducer(d, "retry-txn", kgo.MetadataMinAge(10*time.Millisecond),
			kgo.RetryBackoffFn(func(int) time.Duration { return 5 * time.Millisecond }))
		if err != nil {
			t.Fatal(err)
		}
		defer prod.Close()
		p.Producer = prod
		p.Transactions = &Transactions{OffsetsTopic: offsetsTopic}
		return p.Run(ctx)
	}

	ctx, cancel := context.WithTimeout(context.Background(), retryTimeout)
	err := run(ctx)
	cancel()
	if !errors.Is(err, errPublish) {
		t.Fatalf("Run with a partition failing for good: %v, want a publish failure", err)
	}
	pos, _, found, rerr := kafka.ReadOffsets(context.Background(), d, offsetsTopic, "retry")
	if rerr != nil {
		t.Fatal(rerr)
	}
	if found {
		if i := h.index(pos); i >= h.failed {
			t.Fatalf("after %v (%d failed attempts) the offsets topic commits position %s of row %d, at or past the failed row %d: the next run would skip it",
				err, faults.Hits(), pos, i, h.failed)
		}
	}

	// The fault heals; the next run resumes from what was committed and a
	// read_committed consumer sees every row exactly once.
	faults.Remove()
	ctx, cancel = context.WithTimeout(context.Background(), retryTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	ids := consumeCommitted(t, d.BootstrapServers, len(h.positions))
	cancel()
	for i := range h.positions {
		if n := ids[eventID(i)]; n != 1 {
			t.Errorf("row %d (%s) read %d times by a read_committed consumer, want 1", i, eventID(i), n)
		}
	}
	if err := <-done; err != nil {
		t.Errorf("second run: %v", err)
	}
}

// consumeCommitted reads retryTopic read_committed until n records came
// and no more follow within a moment, and counts their event ids.
func consumeCommitted(t *testing.T, seed string, n int) map[string]int {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seed), kgo.ConsumeTopics(retryTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ids := map[string]int{}
	deadline := time.Now().Add(retryTimeout)
	got := 0
	for time.Now().Before(deadline) {
		wait := 500 * time.Millisecond
		if got < n {
			wait = time.Until(deadline)
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		fs := cl.PollFetches(ctx)
		cancel()
		if got >= n && ctx.Err() != nil {
			break
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
