// Package postgres is the PostgreSQL source: it backfills tables from an
// exported snapshot and streams changes from a pgoutput logical
// replication slot, resuming from the slot's confirmed LSN.
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
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source"
)

func init() { source.Register("postgres", New) }

// ErrResnapshotRequired reports that the source position can no longer be
// resumed from; the pipeline must backfill again.
var ErrResnapshotRequired = errors.New("resnapshot required")

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
}

// New parses the connection settings; it does not connect yet.
func New(_ context.Context, opts source.Options) (source.Source, error) {
	cfg, err := pgx.ParseConfig(opts.Config.URL)
	if err != nil {
		// pgx errors may quote the URL; keep the secret out of the message.
		return nil, errors.New("source.url: not a valid PostgreSQL connection URL")
	}
	// Text output the decoders expect, whatever the server's defaults.
	cfg.RuntimeParams["TimeZone"] = "UTC"
	cfg.RuntimeParams["DateStyle"] = "ISO, YMD"
	cfg.RuntimeParams["IntervalStyle"] = "iso_8601"
	cfg.RuntimeParams["bytea_output"] = "hex"
	cfg.RuntimeParams["extra_float_digits"] = "3"
	cfg.RuntimeParams["application_name"] = "tributary"
	return &Source{
		opts:    opts,
		connCfg: cfg,
		slot:    opts.Config.Slot,
		pub:     opts.Config.Publication,
		tables:  map[uint32]*change.Table{},
		rels:    map[uint32]*relation{},
	}, nil
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
	rels, err := selectedTables(ctx, conn, s.opts.Config.Tables)
	if err != nil {
		return err
	}
	if err := ensurePublication(ctx, conn, s.pub, s.opts.Config.Tables, rels); err != nil {
		return err
	}
	slot, err := lookupSlot(ctx, conn, s.slot)
	if err != nil {
		return err
	}
	if slot.exists {
		s.evictStaleHolder(ctx)
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
			return fmt.Errorf("the checkpoint belongs to replication slot %s, the config names %s: %w", pos.Slot, s.slot, ErrResnapshotRequired)
		}
	}
	switch {
	case !pos.Backfilled && pos.Backfill != nil && slot.exists && !slot.lost && slot.confirmedLSN <= start:
		// An unfinished backfill whose slot still starts at its consistent
		// point: read on from the last acknowledged key (see backfill).
		slog.Info("resuming the backfill", "slot", s.slot, "lsn", formatLSN(start), "table", pos.Backfill.Table, "rows", pos.Backfill.Rows)
		if err := s.backfill(ctx, "", start, rels, pos.Backfill, emit); err != nil {
			return err
		}
		done := &change.Event{Position: position{Slot: s.slot, LSN: formatLSN(start), Backfilled: true}.encode()}
		if err := emit(ctx, done); err != nil {
			return err
		}
	case !pos.Backfilled:
		// No usable stream position yet: take a fresh slot and its snapshot.
		// Whatever an earlier, unfinished start published is published again.
		if start, err = s.freshStart(ctx, slot, rels, emit); err != nil {
			return err
		}
	default:
		switch {
		case !slot.exists:
			return fmt.Errorf("replication slot %s does not exist: %w", s.slot, ErrResnapshotRequired)
		case slot.lost:
			return fmt.Errorf("replication slot %s lost WAL it still needed: %w", s.slot, ErrResnapshotRequired)
		case slot.confirmedLSN > start:
			return fmt.Errorf("replication slot %s confirmed %s, beyond the checkpoint %s: %w",
				s.slot, formatLSN(slot.confirmedLSN), formatLSN(start), ErrResnapshotRequired)
		}
	}
	s.acked.Store(start)
	s.marked = start
	return s.stream(ctx, start, emit)
}

// freshStart (re)creates the slot with an exported snapshot, backfills from
// that snapshot when configured, and returns the slot's consistent point,
// where streaming continues.
func (s *Source) freshStart(ctx context.Context, slot slotState, rels []*relation, emit func(context.Context, *change.Event) error) (uint64, error) {
	if slot.exists {
		if err := retryActive(ctx, func() error {
			_, err := s.conn.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, s.slot)
			return err
		}); err != nil {
			return 0, fmt.Errorf("drop stale replication slot %s: %w", s.slot, err)
		}
	}
	res := s.repl.Exec(ctx, fmt.Sprintf("CREATE_REPLICATION_SLOT %s LOGICAL pgoutput EXPORT_SNAPSHOT", pgx.Identifier{s.slot}.Sanitize()))
	results, err := res.ReadAll()
	if err != nil {
		return 0, fmt.Errorf("create replication slot %s: %w", s.slot, err)
	}
	if len(results) != 1 || len(results[0].Rows) != 1 || len(results[0].Rows[0]) < 3 {
		return 0, fmt.Errorf("create replication slot %s: unexpected reply", s.slot)
	}
	row := results[0].Rows[0]
	start, err := parseLSN(string(row[1]))
	if err != nil {
		return 0, err
	}
	snapshot := string(row[2])
	if s.opts.Config.BackfillEnabled() {
		if err := s.backfill(ctx, snapshot, start, rels, nil, emit); err != nil {
			return 0, err
		}
	}
	done := &change.Event{Position: position{Slot: s.slot, LSN: formatLSN(start), Backfilled: true}.encode()}
	return start, emit(ctx, done)
}

// Ack implements source.Source: the slot may release WAL up to pos.
func (s *Source) Ack(pos change.Position) {
	if _, lsn, err := decodePosition(pos); err == nil {
		for {
			cur := s.acked.Load()
			if lsn <= cur || s.acked.CompareAndSwap(cur, lsn) {
				return
			}
		}
	}
}

// Close implements source.Source. It tells the server the last
// acknowledged position before closing.
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

// evictStaleHolder ends the walsender of whoever still streams from our
// slot. Run is only called once this task owns the pipeline (the
// checkpoint store's lock or lease), so that holder is a stale owner: one
// frozen past its lease, or one that died while the server has not yet
// noticed its connection is gone (which can take wal_sender_timeout).
// Without the slot it can publish nothing more, and its checkpoint writes
// are fenced by the store. When we may not signal it, retryActive waits.
func (s *Source) evictStaleHolder(ctx context.Context) {
	var pid *int32
	err := s.conn.QueryRow(ctx, `SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1`, s.slot).Scan(&pid)
	if err != nil || pid == nil {
		return
	}
	var ok bool
	if err := s.conn.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, *pid).Scan(&ok); err != nil || !ok {
		slog.Warn("replication slot is in use by another connection; waiting for it to end", "slot", s.slot, "pid", *pid, "err", err)
		return
	}
	slog.Warn("ended the stale connection that held the replication slot", "slot", s.slot, "pid", *pid)
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
