// Package pipeline runs one pipeline: it takes events from a source,
// encodes them, hands them to the producer with bounded memory, and
// checkpoints only the contiguous acknowledged prefix before telling the
// source it may release its log. It knows no database and no Kafka wire
// detail.
package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// Pipeline wires one source to one producer and one checkpoint store.
type Pipeline struct {
	Name     string
	Source   source.Source
	Encoder  *debezium.Encoder
	Producer *kafka.Producer
	Store    checkpoint.Store
	Log      *slog.Logger

	// DeleteMode is record (default), tombstone or record_and_tombstone.
	DeleteMode string
	// MaxMessageBytes is the largest key+value published; default 1 MiB.
	MaxMessageBytes int
	// CheckpointEvery is the checkpoint cadence; default 1 s.
	CheckpointEvery time.Duration
	// FlushTimeout bounds the flush on shutdown; default 30 s.
	FlushTimeout time.Duration

	tracker    tracker
	topics     map[string]bool
	fail       func(error)
	produceCtx context.Context
	saved      change.Position

	// Counters, for logs and status.
	Published atomic.Int64 // c/u/d rows acknowledged (billable)
	Read      atomic.Int64 // r rows acknowledged (backfill, not billable)
}

// errPublish marks a failure of the producer, as opposed to a shutdown.
var errPublish = errors.New("publish failed")

// Run publishes until ctx is done (a graceful stop: flush, checkpoint,
// return nil) or something fails (checkpoint what is safe, return the
// error). It never checkpoints past a record the broker has not
// acknowledged.
func (p *Pipeline) Run(ctx context.Context) error {
	p.defaults()
	cp, found, err := p.Store.Load(ctx)
	if err != nil {
		return err
	}
	var from change.Position
	if found {
		from = cp.Position
		p.saved = cp.Position
		p.Log.Info("resuming from checkpoint", "position", string(cp.Position))
	}

	// runCtx stops the source on shutdown or failure. Records are produced
	// under produceCtx, which only a failure cancels, so that a graceful
	// stop still delivers what is in flight.
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	produceCtx, stopProduce := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopProduce(nil)
	p.produceCtx = produceCtx
	p.fail = func(err error) { stopProduce(err); stopRun(err) }

	done := make(chan struct{})
	committerDone := make(chan error, 1)
	go func() { committerDone <- p.commitLoop(runCtx, done) }()

	srcErr := p.Source.Run(runCtx, from, p.emit)
	close(done)
	commitErr := <-committerDone

	cause := context.Cause(runCtx)
	if ctx.Err() != nil && !errors.Is(cause, errPublish) && commitErr == nil {
		// Graceful stop: wait for what is in flight, then checkpoint it.
		fctx, cancel := context.WithTimeout(context.Background(), p.FlushTimeout)
		defer cancel()
		if err := p.Producer.Flush(fctx); err != nil {
			p.Log.Error("flush on shutdown", "err", err)
		}
		if err := p.commit(context.Background()); err != nil {
			return err
		}
		_, pending := p.tracker.position()
		p.Log.Info("stopped", "checkpoint", string(p.saved), "unacknowledged", pending,
			"published", p.Published.Load(), "read", p.Read.Load())
		return nil
	}
	// Failure: keep what is safely acknowledged, report the first cause.
	if err := p.commit(context.Background()); err != nil {
		p.Log.Error("checkpoint after failure", "err", err)
	}
	switch {
	case errors.Is(cause, errPublish):
		return cause
	case commitErr != nil:
		return commitErr
	case srcErr != nil:
		return srcErr
	}
	return cause
}

func (p *Pipeline) defaults() {
	if p.MaxMessageBytes <= 0 {
		p.MaxMessageBytes = 1 << 20
	}
	if p.CheckpointEvery <= 0 {
		p.CheckpointEvery = time.Second
	}
	if p.FlushTimeout <= 0 {
		p.FlushTimeout = 30 * time.Second
	}
	if p.Log == nil {
		p.Log = slog.Default()
	}
	p.topics = map[string]bool{}
}

// commitLoop checkpoints on a cadence until done closes.
func (p *Pipeline) commitLoop(ctx context.Context, done <-chan struct{}) error {
	tick := time.NewTicker(p.CheckpointEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-tick.C:
			if err := p.commit(ctx); err != nil {
				if ctx.Err() == nil {
					p.fail(err)
				}
				return err
			}
		}
	}
}

// commit saves the contiguous acknowledged position, if it moved, and only
// then lets the source release its log up to it.
func (p *Pipeline) commit(ctx context.Context) error {
	pos, _ := p.tracker.position()
	if pos == nil || bytes.Equal(pos, p.saved) {
		return nil
	}
	cp := checkpoint.Checkpoint{Pipeline: p.Name, Position: pos, UpdatedAt: time.Now().UTC()}
	if err := p.Store.Save(ctx, cp); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	p.saved = pos
	p.Source.Ack(pos)
	return nil
}

// emit encodes one event and hands its record(s) to the producer. It is
// called by the source's goroutine only.
func (p *Pipeline) emit(ctx context.Context, ev *change.Event) error {
	if ev.Op == change.OpNone {
		p.tracker.mark(ev.Position)
		return nil
	}
	topic := p.Encoder.Topic(ev.Table)
	if !p.topics[topic] {
		if err := p.Producer.EnsureTopic(ctx, topic); err != nil {
			return err
		}
		p.topics[topic] = true
	}
	key, hasKey, err := p.Encoder.AppendKey(nil, ev)
	if err != nil {
		return fmt.Errorf("encode key of %s: %w", ev.Table.ID, err)
	}
	if !hasKey {
		key = nil
	}
	var value []byte
	tombstone := ev.Op == change.OpDelete && p.DeleteMode != "record"
	if !(ev.Op == change.OpDelete && p.DeleteMode == "tombstone") {
		value, err = p.Encoder.AppendValue(make([]byte, 0, 512+len(key)*4), ev, time.Now().UnixMicro())
		if err != nil {
			return fmt.Errorf("encode value of %s: %w", ev.Table.ID, err)
		}
		if size := len(key) + len(value); size > p.MaxMessageBytes {
			// Skipping with a durable row.skipped record is not built yet;
			// stopping loses nothing, skipping silently would.
			return fmt.Errorf("row of %s (event %s) is %d bytes, over max_message_bytes %d", ev.Table.ID, ev.ID, size, p.MaxMessageBytes)
		}
		p.produce(topic, key, value, ev)
	}
	if tombstone && key != nil {
		p.produce(topic, key, nil, ev)
	}
	return nil
}

var contentType = []byte("application/json")

func (p *Pipeline) produce(topic string, key, value []byte, ev *change.Event) {
	op := ev.Op
	rec := &kgo.Record{
		Topic: topic,
		Key:   key,
		Value: value,
		Headers: []kgo.RecordHeader{
			{Key: "content-type", Value: contentType},
			{Key: "tributary-op", Value: []byte(op.String())},
			{Key: "tributary-event-id", Value: []byte(ev.ID)},
		},
	}
	seq := p.tracker.add()
	p.Producer.Produce(p.produceCtx, rec, func(r *kgo.Record, err error) {
		if err != nil {
			p.fail(fmt.Errorf("%w: %s partition %d: %w", errPublish, r.Topic, r.Partition, err))
			return
		}
		p.tracker.ack(seq)
		if r.Value == nil {
			return
		}
		if op == change.OpRead {
			p.Read.Add(1)
		} else {
			p.Published.Add(1)
		}
	})
}
