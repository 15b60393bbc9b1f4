package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// Heartbeat is Debezium's heartbeat topic (heartbeat.interval.ms): a
// record every Every on Topic, keyed by the logical server, whether or
// not the database changes, so that consumers and monitors see the
// pipeline alive on an idle database. The beats run on the pipeline's own
// clock, beside the source's keep-alives (which move the PostgreSQL slot
// and are not published).
type Heartbeat struct {
	// Every is the interval; 0: no heartbeats.
	Every time.Duration
	// Topic is <topic.heartbeat.prefix>.<logical name>.
	Topic string
	// ServerName is the logical name (Debezium's topic.prefix): the key.
	ServerName string
}

// startHeartbeats sends heartbeats until ctx ends; the returned channel
// closes when the sender has stopped. Without heartbeats it is closed
// at once.
func (p *Pipeline) startHeartbeats(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if p.Heartbeat.Every <= 0 {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		tick := time.NewTicker(p.Heartbeat.Every)
		defer tick.Stop()
		var ready, reported bool
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if !ready {
				// The heartbeat topic is created as any other topic is
				// (create_missing_topics, topic_creation); one that may
				// not be created is reported once and tried again at
				// every beat, holding nothing else up.
				if err := p.Producer.EnsureTopic(ctx, p.Heartbeat.Topic); err != nil {
					if !reported && ctx.Err() == nil {
						p.Log.Warn("heartbeat not sent: "+err.Error(), "topic", p.Heartbeat.Topic)
						reported = true
					}
					continue
				}
				ready = true
			}
			if err := p.beat(ctx, time.Now()); err != nil && ctx.Err() == nil {
				p.Log.Warn("heartbeat not sent", "topic", p.Heartbeat.Topic, "err", err)
			}
		}
	}()
	return done
}

// beat publishes one heartbeat sent at now. At least once, a heartbeat
// that fails is logged, not retried: the next one follows. Exactly once,
// it is a record of the open transaction, as a Kafka Connect source
// task's heartbeat is one of the records its transaction commits: a
// read_committed consumer sees it once its transaction commits (within
// transactions.max_interval on an idle database), and a failure aborts
// the transaction as a row's does.
func (p *Pipeline) beat(ctx context.Context, now time.Time) error {
	if err := p.Store.Owned(); err != nil {
		return nil // another task owns the pipeline: it beats
	}
	key := p.Encoder.HeartbeatKey(p.Heartbeat.ServerName)
	value := p.Encoder.AppendHeartbeatValue(nil, now.UnixMilli())
	if p.Recoder != nil {
		var err error
		if key, err = p.Recoder.RecodeKey(ctx, p.Heartbeat.Topic, key); err != nil {
			return fmt.Errorf("encode key: %w", err)
		}
		if value, err = p.Recoder.RecodeValue(ctx, p.Heartbeat.Topic, value); err != nil {
			return fmt.Errorf("encode value: %w", err)
		}
	}
	m := kafka.Message{Topic: p.Heartbeat.Topic, Key: key, Value: value, Time: now, NotRow: true}
	if p.txn == nil {
		// Under ctx, which a stop ends: a beat waiting for room in the
		// producer's buffer (backpressure, a broker away) gives up then
		// rather than hold the stop's flush up.
		return p.Producer.Publish(ctx, m, func(err error) {
			if err != nil && ctx.Err() == nil {
				p.Log.Warn("heartbeat not acknowledged", "topic", m.Topic, "err", err)
			}
		})
	}
	t := p.txn
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return nil
	}
	seq := p.tracker.add()
	err := p.Producer.Publish(p.produceCtx, m, func(err error) {
		if err != nil {
			p.fail(fmt.Errorf("%w: heartbeat: %w", errPublish, err))
			return
		}
		p.tracker.ack(seq)
	})
	if err != nil {
		p.tracker.ack(seq) // nothing was handed over
		return err
	}
	// Between source transactions, the beat ends where it is: the open
	// transaction may commit on the timer (commitDue) with it alone.
	// Within one, it commits with that source transaction.
	between := t.records == t.atMark
	t.counted()
	if between {
		t.atMark = t.records
	}
	return nil
}
