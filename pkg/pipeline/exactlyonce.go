package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// Transactions configures delivery exactly_once: records are published in
// Kafka transactions, and each transaction also writes, to OffsetsTopic,
// the source position its records lead to. A read_committed consumer sees
// a transaction's records exactly when the position after them is
// committed, so resuming from the position read back (read_committed)
// neither skips nor repeats a committed record. The producer must be a
// transactional one (kafka.NewTransactionalProducer): its initialisation
// fences the previous owner at the broker.
type Transactions struct {
	OffsetsTopic string
	// MaxRecords: commit at the first source-transaction end after this
	// many records; a source transaction of more records is split every
	// MaxRecords records.
	MaxRecords int
	// MaxInterval: commit at the first source-transaction end once the
	// transaction has been open this long.
	MaxInterval time.Duration
}

// While the source drains a backlog, a transaction commits less often:
// every commit stalls the source for a flush and the EndTxn round trip
// (franz-go takes no record while a transaction ends), a large share of a
// drain's time at MaxInterval's pace (docs/exactly-once.md), and spacing
// commits costs no latency there, the records being older
// than that already. A change committed at the source more than
// backlogLag before it is handed over (beyond its commit
// time's resolution: MariaDB dates changes to the second) says the source
// is behind; until a later change says it has caught up, a transaction
// commits at the first source-transaction end after backlogRecords ×
// MaxRecords records or once open backlogInterval (MaxInterval, if
// longer). Splits within a source transaction stay at MaxRecords.
const (
	backlogLag      = time.Second
	backlogInterval = time.Second
	backlogRecords  = 40
)

// While caught up, a transaction also commits at a source-transaction end
// once the source has handed over nothing for idleQuiet: it has drained
// what it had read and waits for the database, so the commit costs it no
// throughput and the records need not wait for MaxInterval. The source
// waits for the commit (franz-go takes no record while a transaction
// ends), and what arrives meanwhile is handed over after it and commits
// together at the next pause: commits follow each other at the commit's
// own pace under a steady stream of small source transactions (a group
// commit). Such a commit waits, besides, until the last one ended as long
// ago as it took: on a loaded machine or broker, where a commit takes
// longer, the source keeps at least half its time and the commits space
// out, back to MaxInterval at most. A source that never pauses that long,
// or that is behind, commits at the limits above. idleQuiet is far longer
// than the stream takes to hand over a change it has already read, so a
// pause means an empty read.
const idleQuiet = time.Millisecond

// positionOnlyEvery spaces transactions that carry nothing but a newer
// position (the source moved past changes of no published table): they
// only keep the offsets topic close to the log the source may release.
const positionOnlyEvery = time.Second

// txnState is the open Kafka transaction. mu serialises the source
// goroutine's emits with commits: franz-go refuses records handed over
// while a transaction ends.
type txnState struct {
	mu         sync.Mutex
	cfg        Transactions
	ended      bool            // finished: no more commits
	records    int             // records in the open transaction
	atMark     int             // records when pending was marked
	opened     time.Time       // when the open transaction got its first record
	pending    change.Position // newest resumable position in the transaction
	committed  change.Position // the position of the last committed transaction
	lastCommit time.Time
	// commitTook is how long the last commit held the source (flush,
	// EndTxn, the next transaction begun): the room a commit at a pause
	// leaves the source after the last one (see idleQuiet).
	commitTook time.Duration
	// emits counts the events handed over: the committer's way to tell a
	// source that went on from one that paused (see idleQuiet).
	emits uint64
	// atEnd tells the committer that a caught-up source reached a
	// source-transaction end with records to commit (see idleQuiet).
	atEnd chan struct{}
	// changeMicros is the source commit time of the last change (c, u, d)
	// or source-transaction end emitted: how far behind the source is
	// (see backlogLag).
	changeMicros int64
}

// due reports whether the open transaction commits now that a
// source-transaction end was reached (t.records == t.atMark): once it
// holds MaxRecords records or has been open MaxInterval, or the backlog's
// larger limits while the last change is older than backlogLag.
func (t *txnState) due(now time.Time) bool {
	if t.records == 0 || t.records != t.atMark {
		return false
	}
	records, interval := t.cfg.MaxRecords, t.cfg.MaxInterval
	if t.behind(now) {
		records, interval = backlogRecords*records, max(interval, backlogInterval)
	}
	return t.records >= records || now.Sub(t.opened) >= interval
}

func (t *txnState) behind(now time.Time) bool { return behind(now, t.changeMicros) }

// idleCommits reports whether the open transaction, at a
// source-transaction end, may commit as soon as the source pauses (see
// idleQuiet): it holds records, and the source has given a change's
// commit time and is not behind. A pipeline that has seen no change yet
// (a first backfill) commits at the limits alone, as a backlog would.
func (t *txnState) idleCommits(now time.Time) bool {
	return t.records > 0 && t.records == t.atMark && t.changeMicros != 0 && !t.behind(now)
}

// behind reports whether a change committed at commitMicros (0: none
// yet) and handed over at now says the source drains a backlog. A commit
// time in whole seconds may be one dated to the second (MariaDB's binlog):
// the change was committed up to a second after it.
func behind(now time.Time, commitMicros int64) bool {
	if commitMicros == 0 {
		return false
	}
	lag := now.UnixMicro() - commitMicros
	if commitMicros%1e6 == 0 {
		lag -= 1e6
	}
	return lag > backlogLag.Microseconds()
}

// resumeFrom chooses between the offsets topic's position (committed at
// committedAt) and the checkpoint store's (cp). The offsets topic wins
// over a store written exactly once: it is written atomically with the
// records, the store only after the commit, so the store can only lag
// it. A store written at least once after that commit leads it instead:
// the pipeline ran at_least_once since (delivery switched back and forth),
// and the offsets record is stale; resuming from it would publish that
// period again, or fail where the source has released the log
// (PostgreSQL's slot). A store written before the delivery mode was
// recorded is taken as written exactly once, as before.
func resumeFrom(offsets change.Position, committedAt time.Time, cp checkpoint.Checkpoint) (pos change.Position, fromStore bool) {
	if cp.Position != nil && cp.Delivery == checkpoint.DeliveryAtLeastOnce && cp.UpdatedAt.After(committedAt) {
		return cp.Position, true
	}
	return offsets, false
}

// startTransactions fences any previous owner, reads the committed
// position back and opens the first transaction. It resumes from the
// newer of the offsets topic and the checkpoint store (resumeFrom); with
// no record in the offsets topic (a pipeline that ran at_least_once
// before, or a new one), from the store's position (stored, when found).
func (p *Pipeline) startTransactions(ctx context.Context, cp checkpoint.Checkpoint, stored bool) (change.Position, error) {
	t := &txnState{cfg: *p.Transactions, lastCommit: time.Now(), atEnd: make(chan struct{}, 1)}
	if t.cfg.MaxRecords <= 0 {
		t.cfg.MaxRecords = 5000
	}
	if t.cfg.MaxInterval <= 0 {
		t.cfg.MaxInterval = 50 * time.Millisecond
	}
	// Fencing first: once it returns, no earlier owner's transaction can
	// commit, so the position read next is final.
	if err := p.Producer.Fence(ctx); err != nil {
		return nil, err
	}
	if err := p.Producer.EnsureOffsetsTopic(ctx, t.cfg.OffsetsTopic); err != nil {
		return nil, err
	}
	raw, committedAt, found, err := p.Producer.ReadOffsets(ctx, t.cfg.OffsetsTopic, p.Name)
	if err != nil {
		return nil, err
	}
	var from change.Position
	if stored {
		from = cp.Position
	}
	if found {
		pos := change.Position(raw)
		var fromStore bool
		switch from, fromStore = resumeFrom(pos, committedAt, cp); {
		case fromStore:
			p.Log.Info("resuming from the checkpoint store: it was written at_least_once after the offsets topic's last commit, which is stale",
				"offsets_topic", t.cfg.OffsetsTopic, "offsets_position", string(pos), "offsets_committed_at", committedAt,
				"position", string(from), "checkpoint_updated_at", cp.UpdatedAt)
		case !bytes.Equal(pos, cp.Position):
			p.Log.Info("resuming from the offsets topic (it wins over a checkpoint store written exactly_once)", "offsets_topic", t.cfg.OffsetsTopic,
				"position", string(pos), "checkpoint_store_position", string(cp.Position))
		}
	} else if from != nil {
		p.Log.Info("no position in the offsets topic yet; resuming from the checkpoint store", "offsets_topic", t.cfg.OffsetsTopic)
	}
	t.committed, t.pending = from, from
	if err := p.Producer.BeginTransaction(); err != nil {
		return nil, err
	}
	p.txn = t
	return from, nil
}

// emitInTransaction emits ev inside the open transaction and commits it
// when it is due: at a source-transaction end once MaxRecords or
// MaxInterval is reached, or within a source transaction every MaxRecords
// records (a split).
func (p *Pipeline) emitInTransaction(ctx context.Context, ev *change.Event) error {
	t := p.txn
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return errors.New("transactions already ended")
	}
	if err := p.emit(ctx, ev); err != nil {
		return err
	}
	t.observe(ev)
	t.emits++
	// t.due checks the source-transaction end too; checked first here, it
	// spares a clock read for each record inside a source transaction.
	var due bool
	if t.records == t.atMark {
		now := time.Now()
		if due = t.due(now); !due && t.idleCommits(now) {
			select {
			case t.atEnd <- struct{}{}:
			default: // the committer has yet to look at an earlier end
			}
		}
	} else {
		due = t.records-t.atMark >= t.cfg.MaxRecords && !inChunk(ev)
	}
	if !due {
		return nil
	}
	if err := p.commitTransaction(true); err != nil {
		p.fail(err)
		return err
	}
	return nil
}

// observe notes the source commit time ev says the source has reached
// (reachedCommit, hurry.go).
func (t *txnState) observe(ev *change.Event) { t.changeMicros = reachedCommit(t.changeMicros, ev) }

// inChunk tells a backfill row of a table with a key: one of a chunk
// (pkg/snapshot), whose rows the stream emits together, each chunk in its
// watermark's source transaction, the position that covers the chunk
// (the snapshot state with its last key) right after them. A split there
// would commit rows of the chunk with the position before it, which a
// crash then republishes to read_committed consumers; a chunk is at most
// snapshot.ChunkRows rows, so not splitting it bounds the transaction at
// MaxRecords plus one chunk. A table without a key is read in one piece
// and read again from its start after a crash whatever the transactions:
// it is split as a source transaction is.
func inChunk(ev *change.Event) bool {
	return ev.Op == change.OpRead && ev.Table != nil && len(ev.Table.Key) > 0
}

// markTransaction records a resumable position inside the transaction; it
// becomes checkpointable when the transaction commits.
func (t *txnState) mark(pos change.Position) {
	t.pending, t.atMark = pos, t.records
}

// counted notes one record handed to the producer in the transaction.
func (t *txnState) counted() {
	if t.records == 0 {
		t.opened = time.Now()
	}
	t.records++
}

// commitTransaction writes the pending position to the offsets topic and
// commits; t.mu is held. Then the position is checkpointable and, with
// reopen, the next transaction opens.
func (p *Pipeline) commitTransaction(reopen bool) error {
	t := p.txn
	moved := !bytes.Equal(t.pending, t.committed)
	if t.records == 0 && !moved {
		return nil
	}
	if moved {
		seq := p.tracker.add()
		err := p.Producer.PublishOffsets(p.produceCtx, t.cfg.OffsetsTopic, p.Name, t.pending, func(err error) {
			if err != nil {
				p.fail(fmt.Errorf("%w: offsets topic: %w", errPublish, err))
				return
			}
			p.tracker.ack(seq)
		})
		if err != nil {
			p.tracker.ack(seq)
			return err
		}
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), kafka.TransactionTimeout)
	defer cancel()
	// franz-go commits whatever part of a transaction succeeded (unlike
	// the Java producer, it does not refuse the commit after a failed
	// record: see Producer.CommitTransaction), so the commit is ours to
	// refuse: every record of the transaction, the offsets record
	// included, must be settled (acknowledged, or skipped and recorded)
	// once the flush has run their callbacks. Earlier transactions
	// committed only so, hence everything the tracker still holds belongs
	// to this one. The caller aborts it.
	if err := p.Producer.Flush(ctx); err != nil {
		return fmt.Errorf("%w: flush the transaction: %w", errPublish, err)
	}
	if _, unsettled := p.tracker.position(); unsettled > 0 {
		return fmt.Errorf("%w: %d records of the transaction were not acknowledged; not committing it", errPublish, unsettled)
	}
	if err := p.Producer.CommitTransaction(ctx); err != nil {
		return fmt.Errorf("%w: %w", errPublish, err)
	}
	crashPoint(crashAfterTxnCommit)
	if moved {
		t.committed = t.pending
		p.tracker.mark(t.pending) // every record is acknowledged: checkpointable now
	}
	t.records, t.atMark = 0, 0
	if !reopen {
		t.lastCommit = time.Now()
		return nil
	}
	err := p.Producer.BeginTransaction()
	t.lastCommit = time.Now()
	t.commitTook = t.lastCommit.Sub(start)
	return err
}

// commitBeforeWait commits the open transaction before the source is held
// for a topic that does not exist (ensureTopic, called within
// emitInTransaction: t.mu is held). Left open, the transaction would
// outlive kafka.TransactionTimeout while the topic is missing, and the
// coordinator would abort it and fence the producer: the task exited
// instead of waiting. Within a source transaction this is a split (see
// Transactions.MaxRecords): its records so far commit with the position
// before it, so only a crash or takeover during the wait shows them
// twice to read_committed consumers.
func (p *Pipeline) commitBeforeWait() error {
	err := p.commitTransaction(true)
	if err != nil {
		p.fail(err)
	}
	return err
}

// commitTick is how often commitDue looks: a tenth of the interval, so a
// quiet source's last records wait at most 1.1 × MaxInterval for their
// commit. A look is a mutex and a clock read.
func commitTick(interval time.Duration) time.Duration {
	return max(interval/10, time.Millisecond)
}

// commitDue commits while the source is quiet: a caught-up transaction
// at a source-transaction end once the source paused (commitWhenIdle), and
// on a timer a transaction whose records all belong to ended source
// transactions once MaxInterval passed, and a newer position alone every
// positionOnlyEvery.
func (p *Pipeline) commitDue(ctx context.Context) {
	t := p.txn
	tick := time.NewTicker(commitTick(t.cfg.MaxInterval))
	defer tick.Stop()
	quiet := time.NewTimer(idleQuiet)
	quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.atEnd:
			if err := p.commitWhenIdle(ctx, quiet); err != nil {
				p.fail(err)
				return
			}
			continue
		case <-tick.C:
		}
		t.mu.Lock()
		now := time.Now()
		due := !t.ended && (t.due(now) ||
			(t.records == 0 && !bytes.Equal(t.pending, t.committed) && now.Sub(t.lastCommit) >= positionOnlyEvery))
		var err error
		if due {
			err = p.commitTransaction(true)
		}
		t.mu.Unlock()
		if err != nil {
			p.fail(err)
			return
		}
	}
}

// commitWhenIdle commits the open transaction once the source has handed
// over nothing for idleQuiet while it stands at a source-transaction end,
// caught up, and the last commit ended at least as long ago as it took
// (see idleQuiet). A source that goes on is looked at again
// after each idleQuiet while it stands at an end; one inside a source
// transaction signals again at its end. quiet is the caller's timer,
// stopped and drained.
func (p *Pipeline) commitWhenIdle(ctx context.Context, quiet *time.Timer) error {
	t := p.txn
	t.mu.Lock()
	seen := t.emits
	t.mu.Unlock()
	for {
		quiet.Reset(idleQuiet)
		select {
		case <-ctx.Done():
			quiet.Stop()
			return nil
		case <-quiet.C:
		}
		t.mu.Lock()
		now := time.Now()
		if t.ended || !t.idleCommits(now) {
			t.mu.Unlock()
			return nil // committed meanwhile, inside a source transaction, or behind
		}
		if t.emits != seen {
			seen = t.emits
			t.mu.Unlock()
			continue
		}
		// The wait never takes the open transaction past max_interval,
		// the bound the records are promised.
		if wait := min(t.commitTook-now.Sub(t.lastCommit), t.cfg.MaxInterval-now.Sub(t.opened)); wait > 0 {
			// Too soon after the last commit: look again once the source
			// has had as long as that commit took.
			t.mu.Unlock()
			quiet.Reset(wait)
			select {
			case <-ctx.Done():
				quiet.Stop()
				return nil
			case <-quiet.C:
			}
			t.mu.Lock()
			seen = t.emits
			t.mu.Unlock()
			continue
		}
		err := p.commitTransaction(true)
		t.mu.Unlock()
		return err
	}
}

// endTransactions commits the open transaction (a graceful stop) or aborts
// it (a failure, a lost lease); no transaction opens after it.
func (p *Pipeline) endTransactions(commit bool) error {
	t := p.txn
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return nil
	}
	t.ended = true
	// A stop within a source transaction aborts: the committed position
	// is before that source transaction, which is published again (whole)
	// from there, so committing its first records would repeat them.
	if commit && t.records == t.atMark {
		err := p.commitTransaction(false)
		if err == nil {
			return nil
		}
		p.Log.Error("commit on shutdown failed; aborting", "err", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.FlushTimeout)
	defer cancel()
	return p.Producer.AbortTransaction(ctx)
}
