package pipeline

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/destination"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
)

// TestCaughtUpChangeIsHurried: at least once, the change of a caught-up
// source reaches the broker as soon as the source pauses at its
// transaction's end, not once the producer's linger runs out; a backlog's
// changes linger on to fill their batches. On the real broker, with the
// linger raised to a minute so that only a hurry sends a record before the
// stop: the caught-up change is acknowledged (checkpointed) within
// seconds, the backlog's is not within the same wait.
func TestCaughtUpChangeIsHurried(t *testing.T) {
	const addr = "127.0.0.1:9092"
	for _, c := range []struct {
		name    string
		lag     time.Duration // how long before its hand-over the change committed
		hurried bool
	}{
		{"caught up", 0, true},
		{"draining a backlog", time.Hour, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			prefix := fmt.Sprintf("hurry%d", time.Now().UnixNano())
			enc := debezium.NewEncoder(debezium.Options{TopicPrefix: prefix})
			table := &change.Table{
				ID:      change.TableID{DB: "shop", Schema: "public", Name: "orders"},
				Columns: []change.Column{{Name: "id", Type: change.Type{Kind: change.KindInt64, Precision: -1, Scale: -1, Length: -1}}},
				Key:     []int{0}, Version: 1,
			}
			topic := enc.Topic(table)
			prod, err := kafka.NewProducer(destination.Kafka(config.Destination{BootstrapServers: addr, DisableTLS: true,
				MaxMessageBytes: 1 << 20, CreateMissingTopics: true}), kgo.ProducerLinger(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			defer prod.Close()
			t.Cleanup(func() { deleteBenchTopic(addr, topic) })
			// The topic made and its metadata loaded, by a record a flush
			// sends: a hurry sends only records already in a partition's
			// batch.
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := prod.EnsureTopic(ctx, topic); err != nil {
				t.Fatal(err)
			}
			if err := prod.Publish(ctx, kafka.Message{Topic: topic, Key: []byte("warm"), Value: []byte("{}")}, func(error) {}); err != nil {
				t.Fatal(err)
			}
			if err := prod.Flush(ctx); err != nil {
				t.Fatal(err)
			}

			pos := change.Position(`{"n":1}`)
			src := &listSource{events: []*change.Event{{
				ID: eventID(1), Table: table, Op: change.OpCreate, After: change.Row{change.IntValue(1)}, Position: pos,
				Source: change.Source{Block: postgres.SourceBlock, Name: prefix, DB: "shop", Schema: "public", Table: "orders",
					CommitMicros: time.Now().Add(-c.lag).UnixMicro()},
			}}}
			fs, err := checkpoint.OpenFile(t.TempDir(), "hurry")
			if err != nil {
				t.Fatal(err)
			}
			defer fs.Close()
			store := &recordingStore{Store: fs}
			p := &Pipeline{Name: "hurry", Source: src, Encoder: enc, Producer: prod, Store: store, DeleteMode: "record",
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)), CheckpointEvery: 20 * time.Millisecond}
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- p.Run(runCtx) }()
			wait := 15 * time.Second
			if !c.hurried {
				wait = 3 * time.Second
			}
			deadline := time.Now().Add(wait)
			for !store.hasSaved(pos) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			acked := store.hasSaved(pos)
			stop()
			if err := <-done; err != nil {
				t.Fatalf("Run: %v", err)
			}
			switch {
			case c.hurried && !acked:
				t.Errorf("the caught-up change was not acknowledged within %s: it waits for the producer's linger", wait)
			case !c.hurried && acked:
				t.Errorf("the backlog's change was sent within %s, before its batch's linger ran out: a drain loses its batching", wait)
			}
			if !store.hasSaved(pos) {
				t.Errorf("the change was not acknowledged by the graceful stop")
			}
		})
	}
}
