package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// holderWait is how long a task with the file store waits for the slot's
// holder to go away before it refuses: a task that just died leaves its
// walsender behind until the server notices the closed connection.
const holderWait = 15 * time.Second

// slotHolder is the walsender that streams from a slot, as
// pg_replication_slots and pg_stat_replication show it.
type slotHolder struct {
	pid    int32
	client string // address:port, or "local socket"
	app    string
	since  string
}

func (s *Source) lookupHolder(ctx context.Context, slot string) (*slotHolder, error) {
	var h slotHolder
	var pid *int32
	err := s.conn.QueryRow(ctx, `
SELECT s.active_pid,
  COALESCE(host(r.client_addr) || ':' || r.client_port, 'local socket'),
  COALESCE(r.application_name, ''),
  COALESCE(to_char(r.backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), '')
FROM pg_replication_slots s LEFT JOIN pg_stat_replication r ON r.pid = s.active_pid
WHERE s.slot_name = $1`, slot).Scan(&pid, &h.client, &h.app, &h.since)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && pid == nil {
		return nil, nil // no slot, or nobody streams from it
	}
	if err != nil {
		return nil, fmt.Errorf("look up the reader of replication slot %s: %w", slot, err)
	}
	h.pid = *pid
	return &h, nil
}

// takeSlot makes sure no other process streams from our slot. With a
// lease (Options.Leased) this task owns the pipeline and any holder is a
// stale owner: frozen past its lease, or dead while the server has not
// noticed yet; its walsender is ended (its checkpoint writes are fenced
// by the store). Without a lease the holder may be a live task (another
// machine, or another checkpoint store or path under the same pipeline
// name), and ending it would make the two knock each other out in turn:
// this task waits a little for a dead holder to go away, then refuses,
// naming the holder.
func (s *Source) takeSlot(ctx context.Context, slot string) error {
	h, err := s.lookupHolder(ctx, slot)
	if err != nil || h == nil {
		return err
	}
	if s.opts.Leased {
		var ok bool
		if err := s.conn.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, h.pid).Scan(&ok); err != nil || !ok {
			s.opts.Log().Warn("replication slot is in use by another connection; waiting for it to end", "slot", slot, "pid", h.pid, "err", err)
			return nil
		}
		s.opts.Log().Warn("ended the stale connection that held the replication slot", "slot", slot, "pid", h.pid, "client", h.client)
		return nil
	}
	return s.awaitSlot(ctx, slot, h)
}

// awaitSlot waits up to holderWait for h, the reader of slot, to end, and
// refuses, naming it, if it does not: a reader is never ended here.
func (s *Source) awaitSlot(ctx context.Context, slot string, h *slotHolder) error {
	deadline := time.Now().Add(holderWait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		if h2, err := s.lookupHolder(ctx, slot); err != nil || h2 == nil {
			return err
		}
	}
	return fmt.Errorf("replication slot %w: replication slot %s is read by pid %d from %s (application %q, connected since %s). "+
		"Only one task may read a pipeline's slot; Tributary ends another reader's connection only when its checkpoint store's lease fences that reader, and drop never does. "+
		"Stop the other task (a second task with the same pipeline name but another checkpoint store or path?), "+
		"or, if it is stuck, end its connection with SELECT pg_terminate_backend(%d); then start again",
		source.ErrReaderInUse, slot, h.pid, h.client, h.app, h.since, h.pid)
}
