// Package postgres is the PostgreSQL source: it streams changes from a
// pgoutput logical replication slot, resuming from the slot's confirmed
// LSN, and snapshots tables while it streams (the capture engine,
// pkg/snapshot, with watermarks written by pg_logical_emit_message).
//
// Promises: the slot's confirmed flush LSN only moves to positions the
// pipeline has acknowledged (Ack); a missing or lost slot after a
// checkpoint fails with "resnapshot required" rather than silently
// starting from now.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
)

func init() { source.Register("postgres", New) }

// ErrResnapshotRequired is source.ErrResnapshotRequired: the checkpoint's
// position can no longer be resumed from.
var ErrResnapshotRequired = source.ErrResnapshotRequired

// Source reads one PostgreSQL database.
type Source struct {
	opts    source.Options
	connCfg *pgx.ConnConfig
	slot    string
	pub     string

	conn   *pgx.Conn // catalog queries
	repl   *pgconn.PgConn
	acked  atomic.Uint64 // LSN the pipeline has durably checkpointed
	marked uint64        // LSN of the last position emitted by stream
	tables map[uint32]*change.Table
	rels   map[uint32]*relation

	// captured maps each captured table's OID to its schema.table name:
	// the tables whose every row is published and whose streamed changes
	// are; tablesJSON is its encoding for positions. sel is the table
	// and column selection (source.tables, exclude_tables,
	// exclude_columns, mask_columns). missing remembers what was already
	// warned about.
	captured     map[uint32]string
	tablesJSON   []byte
	sel          *config.Selection
	missing      map[string]bool
	nextDiscover time.Time
	// goneAt holds the captured tables that were dropped, each with the
	// WAL position up to which changes to it may still stream; typeNames
	// the names pgoutput's Type messages gave type OIDs (dropped.go).
	goneAt    map[uint32]uint64
	typeNames map[uint32]string
	// dropped and fullKeys are position.Dropped and position.FullKeys of
	// the captured set; restoredKeys is FullKeys of the checkpoint Run
	// resumed from, the keys of tables dropped while stopped.
	dropped      map[uint32]string
	fullKeys     map[uint32][]string
	restoredKeys map[uint32][]string

	// engine runs the snapshots; snapTables is what its workers read of
	// the tables (see snapshotTable); streamLSN the last position the
	// stream emitted, for the lsn of read rows. known is the captured
	// set's names for Snapshot, nil before the first Run found it; all
	// says Snapshot(nil) came before that.
	engine     *snapshot.Engine
	snapMu     sync.Mutex
	snapTables map[string]snapTable
	streamLSN  atomic.Uint64
	known      map[string]bool
	all        bool
}

// New parses the connection settings; it does not connect yet.
func New(_ context.Context, opts source.Options) (source.Source, error) {
	cfg, err := pgx.ParseConfig(opts.Config.URL)
	if err != nil {
		// pgx errors may quote the URL; keep the secret out of the message.
		return nil, errors.New("source.url: not a valid PostgreSQL connection URL")
	}
	if err := applyTLS(cfg, &opts.Config); err != nil {
		return nil, err
	}
	sel, err := opts.Config.Selection()
	if err != nil {
		return nil, err
	}
	// Text output the decoders expect, whatever the server's defaults.
	// pgconn dials every host and fallback through DialFunc: with
	// keepalive and a user timeout, a connection whose packets vanish is
	// found dead (source.Dial).
	cfg.DialFunc = pgconn.DialFunc(source.Dial(opts.Dial))
	cfg.RuntimeParams["TimeZone"] = "UTC"
	cfg.RuntimeParams["DateStyle"] = "ISO, YMD"
	cfg.RuntimeParams["IntervalStyle"] = "iso_8601"
	cfg.RuntimeParams["bytea_output"] = "hex"
	cfg.RuntimeParams["extra_float_digits"] = "3"
	cfg.RuntimeParams["application_name"] = "tributary"
	s := &Source{
		opts:     opts,
		connCfg:  cfg,
		slot:     opts.Config.Slot,
		pub:      opts.Config.Publication,
		tables:   map[uint32]*change.Table{},
		rels:     map[uint32]*relation{},
		captured: map[uint32]string{},
		sel:      sel,
		missing:  map[string]bool{},

		snapTables: map[string]snapTable{},
	}
	s.engine = snapshot.New(pgSnapshots{s}, snapshot.Config{
		Parallelism: opts.Config.SnapshotParallelism,
		Backlog:     opts.SnapshotBacklog,
		IDPrefix:    "pg",
		TableName:   func(id change.TableID) string { return id.Schema + "." + id.Name },
		Log:         opts.Log(),
	})
	return s, nil
}

// Run implements source.Source.
func (s *Source) Run(ctx context.Context, from change.Position, emit func(context.Context, *change.Event) error) error {
	s.Close() // a reconnect (source.Reconnecting) runs Run again: drop the lost connections
	conn, err := pgx.ConnectConfig(ctx, s.connCfg)
	if err != nil {
		return fmt.Errorf("connect to postgres: %w", err)
	}
	s.conn = conn
	if err := checkPrerequisites(ctx, conn); err != nil {
		return err
	}
	// Before anything changes on the server: another live reader of the
	// slot is refused here (see takeSlot).
	slot, err := lookupSlot(ctx, conn, s.slot)
	if err != nil {
		return err
	}
	if slot.exists {
		if err := s.takeSlot(ctx); err != nil {
			return err
		}
	}
	rels, missing, err := selectedTables(ctx, conn, s.sel)
	if err != nil {
		return err
	}
	for _, p := range s.sel.Unmatched(names(rels)) {
		slog.Warn("source.tables: the regular expression matches no table; tables that match it are captured when they are created", "pattern", p)
	}
	for _, t := range missing {
		// As Debezium treats include-list entries that match nothing: a
		// warning, so a dropped or renamed table does not block every
		// restart. It is captured (and backfilled) if it appears.
		s.missing[t] = true
		slog.Warn("source.tables: table not found (dropped or renamed?); it is captured if it appears", "table", t)
	}
	s.reportMissing()
	if rels, err = s.identified(rels, true); err != nil {
		return err
	}
	pub, err := reconcilePublication(ctx, conn, s.opts.Pipeline, s.pub, rels)
	if err != nil {
		return err
	}

	replCfg := s.connCfg.Config.Copy()
	replCfg.RuntimeParams["replication"] = "database"
	s.repl, err = pgconn.ConnectConfig(ctx, replCfg)
	if err != nil {
		return fmt.Errorf("open replication connection: %w", err)
	}

	var start uint64
	var pos position
	if from != nil {
		if pos, start, err = decodePosition(from); err != nil {
			return err
		}
		if pos.Slot != s.slot {
			s.dropAbandoned(ctx, pos.Slot)
			return fmt.Errorf("the checkpoint belongs to replication slot %s, the config names %s: %w", pos.Slot, s.slot, ErrResnapshotRequired)
		}
	}
	// confirmed is the slot's confirmed position once the switch below
	// chose where to stream from; fresh: a slot created just now.
	confirmed, fresh := slot.confirmedLSN, false
	state, err := snapshot.DecodeState(pos.Snapshot)
	if err != nil {
		return fmt.Errorf("postgres position: %w", err)
	}
	switch {
	case !pos.Backfilled && pos.Backfill != nil && slot.exists && !slot.lost && slot.confirmedLSN <= start:
		// A backfill of an earlier release, unfinished, whose slot still
		// starts at its consistent point: the engine reads on from its
		// last key while streaming from there.
		slog.Info("resuming the backfill", "slot", s.slot, "lsn", formatLSN(start), "table", pos.Backfill.Table, "rows", pos.Backfill.Rows)
		state = legacyState(pos.Backfill, rels)
		s.setCaptured(rels)
		s.engine.Restore(state)
	case from == nil && slot.exists && !slot.lost && slot.plugin == "pgoutput":
		// The slot outlived its checkpoint: a start killed before its
		// first save (pkg/pipeline saves the start position before any
		// record), or a checkpoint store lost or replaced. The slot's
		// confirmed position only moves once a checkpoint holds it, so no
		// change after it was acknowledged: stream from there (never from
		// now, which would lose what changed since) and backfill every
		// table again.
		start = slot.confirmedLSN
		slog.Info("no checkpoint, but the replication slot exists: streaming from its confirmed position and backfilling every table",
			"slot", s.slot, "lsn", formatLSN(start))
		s.restart(rels)
	case !pos.Backfilled:
		// No usable stream position yet: take a fresh slot and snapshot
		// every table while streaming from its consistent point. Whatever
		// an earlier, unfinished start published is published again.
		if start, err = s.freshStart(ctx, slot, rels); err != nil {
			return err
		}
		fresh = true
	default:
		switch {
		case !slot.exists:
			return fmt.Errorf("replication slot %s does not exist on this server, but the checkpoint streams from it: "+
				"the slot was dropped, or this is a new primary after a failover that did not carry the slot over "+
				"(RDS Multi-AZ, Aurora, or PostgreSQL without failover slots, which PostgreSQL 17 adds); "+
				"the changes since the checkpoint are kept nowhere this pipeline can read them: %w", s.slot, ErrResnapshotRequired)
		case slot.lost:
			return fmt.Errorf("replication slot %s lost WAL it still needed: %w", s.slot, ErrResnapshotRequired)
		case slot.confirmedLSN > start:
			return fmt.Errorf("replication slot %s confirmed %s, beyond the checkpoint %s: %w",
				s.slot, formatLSN(slot.confirmedLSN), formatLSN(start), ErrResnapshotRequired)
		}
		s.engine.Restore(state)
		s.queueAdded(pos, pub, rels)
		if err := s.followDropped(ctx, pos); err != nil {
			return err
		}
	}
	// The LSN reported as flushed starts at what is known checkpointed:
	// the slot's own confirmed position (a fresh slot's is start), and
	// what this Source was acknowledged before a reconnect. Never start
	// itself: a reconnect (source.Reconnecting) resumes from the last
	// position handed to the pipeline, which may not be checkpointed
	// yet, and a kill before its checkpoint would leave the slot
	// confirmed beyond it (resnapshot required at the next start).
	if fresh {
		s.acked.Store(start)
	} else {
		s.raiseAcked(confirmed)
	}
	s.marked = start
	s.streamLSN.Store(start)
	if err := emit(ctx, s.marker(start)); err != nil {
		return err
	}
	// The snapshot workers live as long as this stream; one that fails
	// ends it (and the reconnect loop decides).
	sctx, cancel := context.WithCancelCause(ctx)
	wait := s.engine.Start(sctx, cancel)
	err = s.stream(sctx, start, emit)
	cancel(err)
	wait()
	if cause := context.Cause(sctx); ctx.Err() == nil && cause != nil && !errors.Is(cause, context.Canceled) && (err == nil || errors.Is(err, context.Canceled)) {
		return cause
	}
	return err
}

// dropAbandoned drops the replication slot a checkpoint streamed from
// when the config names another one and source.snapshot_mode when_needed
// starts again from a new slot (docs/snapshots.md): nothing would ever
// read the old slot again, and it would hold its WAL for good. A slot
// still in use is left, with a warning naming it.
func (s *Source) dropAbandoned(ctx context.Context, old string) {
	if s.opts.Config.Snapshot() != config.SnapshotWhenNeeded {
		return
	}
	tag, err := s.conn.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active`, old)
	if err == nil && tag.RowsAffected() == 0 {
		var active bool
		if s.conn.QueryRow(ctx, `SELECT active FROM pg_replication_slots WHERE slot_name = $1`, old).Scan(&active) == nil {
			err = errors.New("the slot is in use")
		}
	}
	switch {
	case err != nil:
		slog.Warn("source.snapshot_mode when_needed: could not drop the replication slot the checkpoint streamed from; it holds WAL until dropped",
			"slot", old, "err", err, "fix", "SELECT pg_drop_replication_slot('"+old+"')")
	case tag.RowsAffected() > 0:
		slog.Warn("source.snapshot_mode when_needed: dropped the replication slot the checkpoint streamed from (source.slot names another)", "slot", old)
	}
}

// freshStart (re)creates the slot and returns its consistent point, where
// streaming starts; every selected table is queued for the initial
// snapshot (when source.backfill is on).
func (s *Source) freshStart(ctx context.Context, slot slotState, rels []*relation) (uint64, error) {
	if slot.exists {
		if err := retryActive(ctx, func() error {
			_, err := s.conn.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, s.slot)
			return err
		}); err != nil {
			return 0, fmt.Errorf("drop stale replication slot %s: %w", s.slot, err)
		}
	}
	res := s.repl.Exec(ctx, fmt.Sprintf("CREATE_REPLICATION_SLOT %s LOGICAL pgoutput NOEXPORT_SNAPSHOT", pgx.Identifier{s.slot}.Sanitize()))
	results, err := res.ReadAll()
	if err != nil {
		return 0, fmt.Errorf("create replication slot %s: %w", s.slot, err)
	}
	if len(results) != 1 || len(results[0].Rows) != 1 || len(results[0].Rows[0]) < 2 {
		return 0, fmt.Errorf("create replication slot %s: unexpected reply", s.slot)
	}
	start, err := parseLSN(string(results[0].Rows[0][1]))
	if err != nil {
		return 0, err
	}
	s.restart(rels)
	return start, nil
}

// restart captures rels from a new stream position on: every table is
// queued for the initial snapshot (when source.backfill is on).
func (s *Source) restart(rels []*relation) {
	s.setCaptured(rels)
	s.engine.Restore(snapshot.State{})
	if s.opts.Config.BackfillEnabled() {
		s.engine.Queue(names(rels), true)
	}
}

// queueAdded queues, for a snapshot while streaming, the selected tables
// the checkpoint does not record as captured: tables added to
// source.tables (or created, with no list) while the pipeline was down.
// reconcilePublication has already added them to the publication, so
// their changes stream from then on.
func (s *Source) queueAdded(pos position, pub publicationState, rels []*relation) {
	before := capturedBefore(pos, pub, rels)
	var added []*relation
	for _, r := range rels {
		if !before[r.oid] {
			added = append(added, r)
		}
	}
	s.setCaptured(rels)
	if len(added) > 0 && s.opts.Config.BackfillEnabled() {
		slog.Info("snapshotting tables added since the last run", "tables", strings.Join(names(added), ", "))
		s.engine.Queue(names(added), false)
	}
}

// Ack implements source.Source: the slot may release WAL up to pos.
func (s *Source) Ack(pos change.Position) {
	if _, lsn, err := decodePosition(pos); err == nil {
		s.raiseAcked(lsn)
	}
}

// raiseAcked moves the acknowledged LSN up to lsn; it never moves back.
func (s *Source) raiseAcked(lsn uint64) {
	for {
		cur := s.acked.Load()
		if lsn <= cur || s.acked.CompareAndSwap(cur, lsn) {
			return
		}
	}
}

// Close implements source.Source: it closes the connections. The slot
// keeps the last position the stream reported (sendStatus), a
// checkpointed one.
func (s *Source) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	if s.repl != nil && !s.repl.IsClosed() {
		errs = append(errs, s.repl.Close(ctx))
	}
	if s.conn != nil {
		errs = append(errs, s.conn.Close(ctx))
	}
	return errors.Join(errs...)
}

// retryActive retries f while the slot is still held by a walsender of a
// process that just died (SQLSTATE 55006, object_in_use); the server
// notices the closed connection within seconds.
func retryActive(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := f()
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
