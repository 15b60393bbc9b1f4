package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/destination"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// TestHeartbeatsInTransactions: exactly once, heartbeats sent every
// millisecond while rows are emitted join the open transactions without
// disturbing them: every row is read once by a read_committed consumer,
// the heartbeats are committed too (and go on while the source is idle),
// and a stop is graceful. Run with -race, it checks the heartbeat
// goroutine against the source's.
func TestHeartbeatsInTransactions(t *testing.T) {
	h := newRetryHarness(t)
	const offsetsTopic, hbTopic = "retry.offsets", "__debezium-heartbeat.retry"
	for _, topic := range []string{offsetsTopic, hbTopic} {
		if err := h.cluster.CreateTopic(topic, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	d := destination.Kafka(config.Destination{BootstrapServers: h.cluster.ListenAddrs()[0], DisableTLS: true, MaxMessageBytes: 1 << 20})
	p := h.pipeline(t)
	prod, err := kafka.NewTransactionalProducer(d, "hb-txn", kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	p.Producer = prod
	p.Transactions = &Transactions{OffsetsTopic: offsetsTopic}
	p.Heartbeat = Heartbeat{Every: time.Millisecond, Topic: hbTopic, ServerName: "retry"}
	// Every row can be delivered: the harness's bad partition is healthy here.
	ctx, cancel := context.WithTimeout(context.Background(), retryTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	ids := consumeCommitted(t, d.BootstrapServers, len(h.positions))
	for i := range h.positions {
		if n := ids[eventID(i)]; n != 1 {
			t.Errorf("row %d read %d times by a read_committed consumer, want 1", i, n)
		}
	}
	beats := countCommitted(t, d.BootstrapServers, hbTopic, 20)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if beats < 20 {
		t.Errorf("%d committed heartbeats, want 20 or more", beats)
	}
}

// countCommitted reads topic read_committed until at least n records came
// (or retryTimeout passed) and returns how many it read.
func countCommitted(t *testing.T, seed, topic string, n int) int {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seed), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), retryTimeout)
	defer cancel()
	got := 0
	for got < n && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Key) == `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"serverName"}],"optional":false,"name":"io.debezium.connector.common.ServerNameKey","version":1},"payload":{"serverName":"retry"}}` {
				got++
			}
		})
	}
	return got
}

// TestHeartbeatsAtLeastOnce: at least once, heartbeats every millisecond
// beside the rows leave the rows and the checkpoint as they were: every
// row published once, the checkpoint at the last row, heartbeats on
// their topic. With -race, the two goroutines publishing at once.
func TestHeartbeatsAtLeastOnce(t *testing.T) {
	h := newRetryHarness(t)
	const hbTopic = "__debezium-heartbeat.retry"
	if err := h.cluster.CreateTopic(hbTopic, 1, nil); err != nil {
		t.Fatal(err)
	}
	p := h.pipeline(t)
	p.Heartbeat = Heartbeat{Every: time.Millisecond, Topic: hbTopic, ServerName: "retry"}
	ctx, cancel := context.WithTimeout(context.Background(), retryTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	ids := h.consumeEventIDs(t, len(h.positions))
	for i := range h.positions {
		if n := ids[eventID(i)]; n != 1 {
			t.Errorf("row %d published %d times, want 1", i, n)
		}
	}
	beats := countCommitted(t, h.cluster.ListenAddrs()[0], hbTopic, 20)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if beats < 20 {
		t.Errorf("%d heartbeats, want 20 or more", beats)
	}
	if got, want := h.reload(t), h.positions[len(h.positions)-1]; string(got) != string(want) {
		t.Errorf("checkpoint %s, want the last row's %s", got, want)
	}
}
