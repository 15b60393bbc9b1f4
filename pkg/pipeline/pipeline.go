// Package pipeline runs one pipeline: it takes events from a source,
// encodes them, hands them to the producer with bounded memory, and
// checkpoints only the contiguous acknowledged prefix before telling the
// source it may release its log. It knows no database and no Kafka wire
// detail.
package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/metrics"
	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/webhook"
)

// Pipeline wires one source to one producer and one checkpoint store.
// Its exported fields are the settings a caller fills in before Run;
// Counters are what the run has published so far; runState (state.go) is
// the run's own bookkeeping, reset by every Run.
type Pipeline struct {
	Name     string
	Source   source.Source
	Encoder  *debezium.Encoder
	Producer *kafka.Producer
	Store    checkpoint.Store
	Log      *slog.Logger

	// SourceType names the source in messages (source.type).
	SourceType string
	// DeleteMode is record (default), tombstone or record_and_tombstone.
	DeleteMode string
	// Notifier records row.skipped events durably; the pipeline does not
	// move past a skipped row until Notify returns nil. Required for
	// skipping: without one, an oversized row stops the pipeline.
	Notifier webhook.Notifier
	// OutboxInvalidOp is what an update of an outbox table does (with
	// the encoder's Outbox): OutboxInvalidWarn (default), …Error or
	// …Fatal.
	OutboxInvalidOp string
	// TopicWaitLogEvery is how often a topic that does not exist (and may
	// not be created) is reported while the pipeline waits for it;
	// default 30 s.
	TopicWaitLogEvery time.Duration
	// PartitionColumns is destination.partition_column: per table
	// ("schema.table"), the signed integer column whose value is the
	// partition (partition.go).
	PartitionColumns map[string]string
	// CheckpointEvery is the checkpoint cadence; default 1 s.
	CheckpointEvery time.Duration
	// FlushTimeout bounds the flush on shutdown; default 20 s.
	FlushTimeout time.Duration
	// StopWhenBackfilled ends Run, as a graceful stop does (flush,
	// checkpoint, nil), at the first position the source emits once no
	// table is queued or being read by its snapshots
	// (source.snapshot_mode initial_only; see stop.go).
	StopWhenBackfilled bool
	// Transactions, when set, publishes exactly once (exactlyonce.go);
	// nil: at least once.
	Transactions *Transactions
	// Metrics, when set, counts acknowledged rows per table and op, the
	// source-to-publish latency, the source lag and publish errors; nil
	// records nothing.
	Metrics *metrics.Pipeline
	// Recoder, when set, rewrites the encoded JSON keys and values
	// (format.key, format.value: avro) before they are published.
	Recoder Recoder
	// Heartbeat, when its Every is set, publishes Debezium's heartbeat
	// records (heartbeat.go).
	Heartbeat Heartbeat

	Counters
	runState
}

// Counters are the rows a run has had acknowledged, for logs and status;
// safe to read from any goroutine.
type Counters struct {
	Published atomic.Int64 // c/u/d rows acknowledged (billable)
	Read      atomic.Int64 // r rows acknowledged (backfill, not billable)
	Skipped   atomic.Int64 // rows over max_message_bytes, recorded as row.skipped
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
	if p.Transactions != nil {
		if from, err = p.startTransactions(ctx, cp, found); err != nil {
			return err
		}
	}
	p.restoreReceipts(cp.Receipts)
	p.startSaved = false
	p.gateWrites()

	// runCtx stops the source on shutdown or failure. Records are produced
	// under produceCtx, which only a failure cancels, so that a graceful
	// stop still delivers what is in flight.
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	produceCtx, stopProduce := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopProduce(nil)
	p.produceCtx = produceCtx
	p.fail = func(err error) { stopProduce(err); stopRun(err) }
	p.finish = func() { stopRun(errBackfilled) }

	done := make(chan struct{})
	committerDone := make(chan error, 1)
	go func() { committerDone <- p.commitLoop(runCtx, done) }()
	leaseDone := make(chan struct{})
	go func() { defer close(leaseDone); p.watchLease(runCtx) }()
	hurryDone := make(chan struct{})
	if p.txn != nil {
		close(hurryDone)
		go p.commitDue(runCtx)
	} else {
		p.hurry.atEnd = make(chan struct{}, 1)
		go func() { defer close(hurryDone); p.hurryWhenIdle(runCtx) }()
	}
	heartbeatsDone := p.startHeartbeats(runCtx)

	if w, ok := p.Source.(source.Reconnecting); ok {
		p.Metrics.WatchSource(w.Connected, w.Reconnects) // a reconnecting source (pkg/capture)
	}
	if w, ok := p.Source.(source.Resnapshotting); ok {
		p.Metrics.WatchResnapshots(w.Resnapshots)
	}
	stopBackfills := p.startBackfills(runCtx) // hands a pending request over first
	srcErr := p.Source.Run(runCtx, from, p.emitOwned)
	stopBackfills()
	close(done)
	commitErr := <-committerDone
	cause := context.Cause(runCtx)
	stopRun(nil) // ends watchLease, the heartbeats and hurryWhenIdle
	<-leaseDone
	<-heartbeatsDone
	<-hurryDone
	if (ctx.Err() != nil || errors.Is(cause, errBackfilled)) && !errors.Is(cause, errPublish) && !errors.Is(cause, checkpoint.ErrLeaseLost) && commitErr == nil {
		// Graceful stop: wait for what is in flight, then checkpoint it.
		if p.txn != nil {
			if err := p.endTransactions(true); err != nil {
				return err
			}
		}
		fctx, cancel := context.WithTimeout(context.Background(), p.FlushTimeout)
		defer cancel()
		if err := p.Producer.Flush(fctx); err != nil {
			p.Log.Error("flush on shutdown", "err", err)
		}
		if err := p.commit(context.Background()); err != nil {
			return err
		}
		p.clearBackfills(context.Background()) // what the last checkpoint carries
		_, pending := p.tracker.position()
		// published counts every row acknowledged: changes (c/u/d, the
		// billable ones) and backfilled rows (r).
		p.Log.Info("stopped", "checkpoint", string(p.saved), "unacknowledged", pending,
			"published", p.Published.Load()+p.Read.Load(), "changes", p.Published.Load(), "backfilled", p.Read.Load())
		return nil
	}
	// Failure: keep what is safely acknowledged, report the first cause.
	if p.txn != nil {
		if err := p.endTransactions(false); err != nil {
			p.Log.Warn("abort the open transaction", "err", err)
		}
	}
	if err := p.commit(context.Background()); err != nil {
		p.Log.Error("checkpoint after failure", "err", err)
	}
	switch {
	case errors.Is(cause, checkpoint.ErrLeaseLost):
		return fmt.Errorf("stopped publishing: %w", cause)
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
	if p.CheckpointEvery <= 0 {
		p.CheckpointEvery = time.Second
	}
	if p.FlushTimeout <= 0 {
		// Leaves room, within ECS's default 30 s stop timeout, for the
		// last checkpoint and the lease release after the flush.
		p.FlushTimeout = 20 * time.Second
	}
	if p.TopicWaitLogEvery <= 0 {
		p.TopicWaitLogEvery = 30 * time.Second
	}
	if p.Log == nil {
		p.Log = slog.Default()
	}
	p.topics = map[string]bool{}
	p.sizeHint = map[*change.Table]int{}
}

// checkpointRetryWindow is how long checkpoint saves may keep failing
// before the pipeline stops.
const checkpointRetryWindow = time.Minute

// commitLoop checkpoints on a cadence until done closes.
func (p *Pipeline) commitLoop(ctx context.Context, done <-chan struct{}) error {
	tick := time.NewTicker(p.CheckpointEvery)
	defer tick.Stop()
	var failingSince time.Time
	for {
		select {
		case <-done:
			return nil
		case <-tick.C:
			err := p.commit(ctx)
			if err == nil {
				if !failingSince.IsZero() {
					p.Log.Info("checkpoint store reachable again", "after", time.Since(failingSince).Round(time.Millisecond).String())
					failingSince = time.Time{}
				}
				continue
			}
			// A store outage shorter than the lease (or than
			// checkpointRetryWindow, for a store without one) is ridden
			// out: the checkpoint waits, publishing goes on while the
			// lease holds, and a lost lease still stops everything.
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if ctx.Err() == nil && !errors.Is(err, checkpoint.ErrLeaseLost) && time.Since(failingSince) < checkpointRetryWindow {
				p.Log.Warn("checkpoint save failed; retrying", "err", err, "failing_for", time.Since(failingSince).Round(time.Millisecond).String())
				continue
			}
			if ctx.Err() != nil {
				// Stopping (SIGTERM, or a failure elsewhere): the save
				// was cut short by the stop itself; Run takes the last
				// checkpoint after the flush, with a context of its own.
				return nil
			}
			p.fail(err)
			return err
		}
	}
}

// commit saves the contiguous acknowledged position, if it moved, and only
// then lets the source release its log up to it.
func (p *Pipeline) commit(ctx context.Context) error { return p.commitWith(ctx, crashPoint) }

// saveStart checkpoints the first position of a run before any record is
// handed to the producer (both sources emit their start position first:
// the slot's LSN or the binlog's GTID set, with the snapshot queued and
// not begun). A task killed before its first checkpoint on the cadence
// then restarts from where it started, and publishes what changed while
// it was down; without it the restart began as a new pipeline at the
// log's end, and a row deleted meanwhile was never deleted downstream.
// Exactly once needs none: the first transaction commits its records
// and its position together (exactlyonce.go). Source goroutine only.
func (p *Pipeline) saveStart(ctx context.Context) error {
	if p.startSaved || p.txn != nil {
		return nil
	}
	p.startSaved = true
	// Not a crash point: the crash tests count the saves with progress.
	return p.commitWith(ctx, func(string) {})
}

// commitWith is commit with the test crash points handed to crash.
func (p *Pipeline) commitWith(ctx context.Context, crash func(point string)) error {
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	pos, mark := p.tracker.committed()
	if pos == nil {
		return nil
	}
	if bytes.Equal(pos, p.saved) {
		// The store holds this position already: what it carries is
		// saved up to mark (a backfill asked for and finished between
		// two saves on an idle source leaves the position as it was,
		// and its request is cleared all the same).
		p.savedMark.Store(mark)
		return nil
	}
	crash(crashAfterAck)
	cp := checkpoint.Checkpoint{Pipeline: p.Name, Position: pos, UpdatedAt: time.Now().UTC(), Receipts: p.receipts(),
		Delivery: checkpoint.DeliveryAtLeastOnce}
	if p.Transactions != nil {
		cp.Delivery = checkpoint.DeliveryExactlyOnce
	}
	if err := p.Store.Save(ctx, cp); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	p.Metrics.Receipts(cp.Receipts)
	crash(crashAfterCheckpoint)
	p.saved = pos
	p.savedMark.Store(mark)
	p.Source.Ack(pos)
	return nil
}

// emit encodes one event and hands its record(s) to the producer. It is
// called by the source's goroutine only.
func (p *Pipeline) emit(ctx context.Context, ev *change.Event) error {
	if ev.Op == change.OpNone {
		if ev.Mark != nil {
			return p.emitTxMark(ctx, ev.Mark)
		}
		p.mark(ev.Position)
		return p.saveStart(ctx)
	}
	if err := p.emitRow(ctx, ev); err != nil {
		return err
	}
	if ev.Position != nil {
		p.mark(ev.Position)
	}
	return nil
}

func (p *Pipeline) emitRow(ctx context.Context, ev *change.Event) error {
	if len(ev.Table.Columns) == 0 {
		p.reportNoColumns(ev.Table)
		return nil
	}
	p.reportDropped(ev.Table)
	if p.Encoder.OutboxOn() {
		return p.emitOutbox(ctx, ev) // outbox.go
	}
	topic, err := p.Encoder.TableTopic(ev.Table)
	if err != nil {
		// Refused before its topic is created or anything of it is sent.
		return err
	}
	if err := p.ensureTopic(ctx, topic); err != nil {
		return err
	}
	// Key and value share one buffer, from recordBufs, grown to the
	// table's last message so that appending rarely has to grow it.
	rb := newRecordBuf()
	buf := slices.Grow(rb.b[:0], p.sizeHint[ev.Table]+256)
	defer func() { rb.b = buf; rb.release() }() // the buffer as grown goes back
	direct, _ := p.Recoder.(EventRecoder)
	var hasKey bool
	if direct != nil {
		buf, hasKey, err = direct.AppendKey(ctx, buf, p.Encoder, topic, ev)
	} else {
		buf, hasKey, err = p.Encoder.AppendKey(buf, ev)
	}
	if reason := unencodable(err); reason != "" {
		return p.skip(ctx, skippedRow{topic: topic, table: ev.Table.ID.String(), op: ev.Op, eventID: ev.ID}, "its key: "+reason)
	}
	if err != nil {
		return fmt.Errorf("encode key of %s: %w", ev.Table.ID, err)
	}
	var key []byte
	if hasKey {
		key = buf[:len(buf):len(buf)]
	}
	vstart := len(buf) // the value follows the key in buf
	if p.Recoder != nil && direct == nil && key != nil {
		if key, err = p.Recoder.RecodeKey(ctx, topic, key); err != nil {
			return fmt.Errorf("encode key of %s: %w", ev.Table.ID, err)
		}
	}
	if reason, err := p.choosePartition(ev); err != nil {
		return err
	} else if reason != "" {
		return p.skip(ctx, skippedRow{topic: topic, key: key, table: ev.Table.ID.String(), op: ev.Op, eventID: ev.ID}, reason)
	}
	// A delete's records: delete_mode's, or what format.unwrap's
	// ExtractNewRecordState makes of them (debezium.Encoder.DeleteRecords).
	sendValue, tombstone := true, false
	if ev.Op == change.OpDelete {
		sendValue, tombstone = p.Encoder.DeleteRecords(p.DeleteMode)
	}
	// A tombstone whose key alone is over the limit can never be
	// published: known before the delete record is, so that the delete's
	// row.skipped event says truthfully whether a tombstone follows, and
	// skipped like an oversized row rather than failed on every retry.
	var tombBig *kafka.MessageTooLargeError
	if tombstone {
		if err := p.Producer.TombstoneTooLarge(kafka.Message{Topic: topic, Key: key, Op: opNames[ev.Op], EventID: ev.ID}); err != nil {
			errors.As(err, &tombBig)
			tombstone = false
		}
	}
	fate := tombNone
	switch {
	case tombstone:
		fate = tombPublished
	case tombBig != nil:
		fate = tombRefused
	}
	now := time.Now() // the envelope's ts_ms and the record's timestamp
	var head debezium.Head
	var nullValue bool // the encoding's value is null (direct only)
	if sendValue {
		buf, head, nullValue, err = p.appendValue(ctx, direct, buf, topic, ev, now.UnixMicro())
		if unencodable(err) != "" && ev.Before != nil {
			// The old row alone (REPLICA IDENTITY FULL) may hold what the
			// format cannot write: the change goes out with the old row
			// the default replica identity gives (none for an update,
			// the key for a delete), rather than keep the row's latest
			// state off the topic.
			if bare := oldRowAsKey(ev); bare != nil {
				if buf, head, nullValue, err = p.appendValue(ctx, direct, buf, topic, bare, now.UnixMicro()); err == nil {
					p.reportBareUpdate(ev.Table)
				}
			}
		}
		if reason := unencodable(err); reason != "" {
			// Recorded, not published; a delete's tombstone still is
			// (its key is fine), or a compacted topic would keep the row.
			row := skippedRow{topic: topic, key: key, table: ev.Table.ID.String(), op: ev.Op, eventID: ev.ID, tombstone: fate}
			if err := p.skip(ctx, row, reason); err != nil || !tombstone {
				return err
			}
			sendValue, err = false, nil
		}
		if err != nil {
			return fmt.Errorf("encode value of %s: %w", ev.Table.ID, err)
		}
	}
	if sendValue {
		p.sizeHint[ev.Table] = len(buf)
		value := buf[vstart:]
		if nullValue {
			value = nil
		}
		if p.Recoder != nil && direct == nil {
			if value, err = p.Recoder.RecodeValue(ctx, topic, value); err != nil {
				return fmt.Errorf("encode value of %s: %w", ev.Table.ID, err)
			}
			head = debezium.Head{} // the receipt hashes the whole value
		}
		refused, err := p.produce(topic, key, value, head, ev, rb, now, fate, tombBig)
		if err != nil {
			return err
		}
		if refused != nil {
			// The row is not published; it is recorded before anything
			// moves past it. Its tombstone still is (below) when it is
			// only too large: without it a compacted topic would keep
			// the deleted row for ever.
			row := skippedRow{topic: topic, key: key, table: ev.Table.ID.String(), op: ev.Op, eventID: ev.ID}
			var big *kafka.MessageTooLargeError
			if errors.As(refused, &big) {
				row.size, row.limit, row.tombstone = big.Size, big.Limit, fate
			} else {
				tombstone = false
			}
			reason := p.refusedReason(refused)
			if big != nil && fate == tombRefused {
				reason += fmt.Sprintf("; its tombstone (the key alone, %d bytes) is over the limit too and is not published", tombBig.Size)
			}
			if err := p.skip(ctx, row, reason); err != nil || !tombstone {
				return err
			}
		}
		// With tombBig, the delete record was handed over: its promise
		// reports the one row.skipped event, the record's refusal by the
		// topic with the tombstone's, or the tombstone's alone once the
		// record is acknowledged.
	} else if tombBig != nil {
		return p.skip(ctx, skippedRow{topic: topic, key: key, table: ev.Table.ID.String(), op: ev.Op, eventID: ev.ID,
			size: tombBig.Size, limit: tombBig.Limit, tombstone: tombRefused}, tombBig.Error())
	}
	if tombstone {
		// Debezium sends the tombstone for a table without a primary key
		// too (null key and value); consumers may count on it.
		refused, err := p.produce(topic, key, nil, debezium.Head{}, ev, rb, now, tombNone, nil)
		if err != nil {
			return err
		}
		if refused != nil {
			return p.skip(ctx, skippedRow{topic: topic, key: key, table: ev.Table.ID.String(), op: ev.Op, eventID: ev.ID}, p.refusedReason(refused))
		}
	}
	return nil
}

// ensureTopic makes sure topic exists before its first record. A topic
// that does not exist and may not be created is waited for: the source is
// held (nothing after this row is read, so nothing advances) and the wait
// is reported every TopicWaitLogEvery, until someone creates the topic or
// the pipeline stops.
func (p *Pipeline) ensureTopic(ctx context.Context, topic string) error {
	if p.topics[topic] {
		return nil
	}
	var since, logged time.Time
	wait := 250 * time.Millisecond
	for {
		err := p.Producer.EnsureTopic(ctx, topic)
		if err == nil {
			if !since.IsZero() {
				p.Log.Info("topic exists now; continuing", "topic", topic, "waited", time.Since(since).Round(time.Second).String())
				p.Metrics.TopicMissing(topic, false)
			}
			p.topics[topic] = true
			return nil
		}
		if !errors.Is(err, kafka.ErrTopicMissing) || ctx.Err() != nil {
			return err
		}
		now := time.Now()
		if since.IsZero() {
			since = now
			p.Metrics.TopicMissing(topic, true) // the alarm, not only the log line
			if p.txn != nil {
				// Nothing may stay open while we wait (exactlyonce.go).
				if err := p.commitBeforeWait(); err != nil {
					return err
				}
			}
		}
		if now.Sub(logged) >= p.TopicWaitLogEvery {
			p.Log.Error(err.Error()+"; waiting for it to be created (or set destination.create_missing_topics); nothing advances meanwhile",
				"topic", topic, "waiting", now.Sub(since).Round(time.Second).String())
			logged = now
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// keyPayload returns the payload of a Debezium key message: the primary
// key columns (nil for a table without one). Numbers keep their digits.
// A key without schemas (format.schemas: false) is the payload itself.
func keyPayload(key []byte, schemas bool) map[string]any {
	if key == nil {
		return nil
	}
	var msg struct {
		Payload map[string]any `json:"payload"`
	}
	dec := json.NewDecoder(bytes.NewReader(key))
	dec.UseNumber()
	if !schemas {
		if err := dec.Decode(&msg.Payload); err != nil {
			return nil
		}
		return msg.Payload
	}
	if err := dec.Decode(&msg); err != nil {
		return nil
	}
	return msg.Payload
}

// opNames are the ops' letters as constants: Op.String allocates one for
// every record.
var opNames = [256]string{change.OpCreate: "c", change.OpUpdate: "u", change.OpDelete: "d", change.OpRead: "r"}

// produce hands one record of ev to the producer. refused is the reason
// the producer refused it before handing it over (kafka.Publish: too
// large, or a partition the topic does not have), to be skipped; err is
// any other failure.
//
// key and value lie in rb, which the record holds until its promise ran;
// head is value's (debezium.Head), for its receipt; now is the record's
// timestamp.
// fate is what becomes of a delete's tombstone after this record, for
// the row.skipped event should the broker refuse the record; tombBig is
// the tombstone's refusal when it is too large (fate tombRefused), which
// the promise reports: with the record's refusal, or alone once the
// record is acknowledged.
func (p *Pipeline) produce(topic string, key, value []byte, head debezium.Head, ev *change.Event, rb *recordBuf, now time.Time, fate tombstoneFate, tombBig *kafka.MessageTooLargeError) (refused, err error) {
	op := ev.Op
	// The source may reuse ev once emit returns: take what the promise
	// needs now.
	rows, commit, tombstone, table, eventID := p.rowMetrics(ev.Table), ev.Source.CommitMicros, value == nil, ev.Table, ev.ID
	seq := p.tracker.add()
	m := kafka.Message{Topic: topic, Key: key, Value: value, Op: opNames[op], EventID: ev.ID,
		Partition: p.partition.value, Partitioned: p.partition.set, Time: now, HeadLen: head.Len, HeadCRC: head.CRC, Headers: rb.headers}
	rb.hold()
	err = p.Producer.Publish(p.produceCtx, m, func(err error) {
		defer rb.release() // after the producer's last use of the bytes, and skip's of the key
		if tooLarge := recordTooLarge(err); tooLarge != nil && !tombstone && p.Notifier != nil {
			// It alone is over the topic's max.message.bytes (below
			// max_message_bytes): an oversized row, skipped and reported
			// like one, not a delivery failure. A batch refused while its
			// records fit is a kafka.TopicLimitError: none of them is
			// skipped, the pipeline stalls (below) and its retry sends
			// batches that fit.
			// A delete's tombstone, sent after it (emitRow), is still
			// published unless it is too large itself (fate).
			row := skippedRow{topic: topic, key: key, table: table.ID.String(), op: op, eventID: eventID, size: tooLarge.Size, limit: tooLarge.Limit,
				tombstone: fate}
			reason := tooLarge.Error()
			if tombBig != nil {
				reason += fmt.Sprintf("; its tombstone (the key alone, %d bytes) is over the limit too and is not published", tombBig.Size)
			}
			if err := p.skip(p.produceCtx, row, reason); err != nil {
				rows.Failed(op)
				p.fail(fmt.Errorf("%w: %w", errPublish, err))
				return
			}
			p.tracker.ack(seq)
			rows.Acked(op, commit, false, time.Now()) // settled, not published
			return
		}
		if err == nil && tombBig != nil {
			// The delete record went out, its tombstone cannot.
			row := skippedRow{topic: topic, key: key, table: table.ID.String(), op: op, eventID: eventID,
				size: tombBig.Size, limit: tombBig.Limit, tombstone: tombRefused}
			err = p.skip(p.produceCtx, row, "its tombstone: "+tombBig.Error())
		}
		if err != nil {
			rows.Failed(op)
			p.fail(fmt.Errorf("%w: %w", errPublish, err))
			return
		}
		p.tracker.ack(seq)
		rows.Acked(op, commit, !tombstone, time.Now())
		if tombstone {
			return
		}
		if op == change.OpRead {
			p.Read.Add(1)
		} else {
			p.Published.Add(1)
		}
	})
	if err != nil {
		// Nothing was handed over: settled at once, so the tracker sees
		// no record.
		rb.release()
		p.tracker.ack(seq)
		var big *kafka.MessageTooLargeError
		var part *kafka.PartitionRangeError
		if errors.As(err, &big) || errors.As(err, &part) {
			return err, nil
		}
		return nil, err
	}
	// After the hand-over, which may refuse the record: a refused one is
	// not sent. Its acknowledgement comes a network round trip later.
	rows.Sent(op, commit, now)
	if p.txn != nil {
		p.txn.counted()
	}
	crashPoint(crashAfterProduce)
	return nil, nil
}

// recordTooLarge is err's *kafka.RecordTooLargeError, if it has one. A
// nil err allocates nothing (errors.As's target escapes).
func recordTooLarge(err error) *kafka.RecordTooLargeError {
	if err == nil {
		return nil
	}
	var e *kafka.RecordTooLargeError
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// rowMetrics returns table's counters, resolved once per table; nil
// without Metrics.
func (p *Pipeline) rowMetrics(t *change.Table) *metrics.Rows {
	if p.Metrics == nil {
		return nil
	}
	if r, ok := p.tableMetrics[t]; ok {
		return r
	}
	if p.tableMetrics == nil {
		p.tableMetrics = map[*change.Table]*metrics.Rows{}
	}
	r := p.Metrics.Rows(t.ID.String())
	p.tableMetrics[t] = r
	return r
}
