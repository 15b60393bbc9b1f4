package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/source"
)

var _ source.Dropper = (*Source)(nil)

// publicationMarker is the comment on a publication Tributary created for
// pipeline: `tributary drop` removes a publication only when it carries
// it, since a publication made by hand (source.publication naming one the
// tables' owner created) may serve other subscribers.
func publicationMarker(pipeline string) string {
	return "created by Tributary for pipeline " + pipeline
}

// Leftovers implements source.Dropper: the pipeline's replication slot
// (kept, saying why, unless it is of this database and the checkpoint
// streams from it: slot names are server-wide, so a name alone may be
// another pipeline's), and its publication (kept, saying why, unless Tributary created it). A
// slot another process streams from fails it (takeSlot's wait and words).
func (s *Source) Leftovers(ctx context.Context) ([]source.Leftover, error) {
	return s.leftovers(ctx, false)
}

// Drop implements source.Dropper: it drops the slot (once nobody reads
// it: a reader is waited for, then refused, never ended) and the
// publication Tributary created.
func (s *Source) Drop(ctx context.Context) ([]source.Leftover, error) {
	return s.leftovers(ctx, true)
}

func (s *Source) leftovers(ctx context.Context, drop bool) ([]source.Leftover, error) {
	defer s.Close()
	conn, err := pgx.ConnectConfig(ctx, s.connCfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	s.conn = conn
	var out []source.Leftover
	recorded := s.checkpointedSlot()
	names := []string{s.slot}
	if recorded != "" && recorded != s.slot {
		names = append(names, recorded)
	}
	for _, name := range names {
		l, err := s.slotLeftover(ctx, name, recorded == name, drop)
		if err != nil {
			return nil, err
		}
		if l != nil {
			out = append(out, *l)
		}
	}
	var comment *string
	err = conn.QueryRow(ctx, `SELECT obj_description(oid, 'pg_publication') FROM pg_publication WHERE pubname = $1`, s.pub).Scan(&comment)
	if errors.Is(err, pgx.ErrNoRows) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up publication %s: %w", s.pub, err)
	}
	pub := source.Leftover{What: "publication", Name: s.pub}
	// PostgreSQL does not record which publication a slot's reader names,
	// so another pgoutput slot of this database may stream from this one
	// (a second pipeline whose source.publication names it): then it stays.
	var others []string
	rows, err := conn.Query(ctx, `SELECT slot_name FROM pg_replication_slots
		WHERE database = current_database() AND plugin = 'pgoutput' AND slot_name <> $1 ORDER BY slot_name`, s.slot)
	if err != nil {
		return nil, fmt.Errorf("list the other replication slots: %w", err)
	}
	if others, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return nil, fmt.Errorf("list the other replication slots: %w", err)
	}
	switch {
	case comment == nil || *comment != publicationMarker(s.opts.Pipeline):
		pub.Kept = fmt.Sprintf("Tributary did not create it for this pipeline (its comment is not %q); if nothing else uses it: DROP PUBLICATION %s",
			publicationMarker(s.opts.Pipeline), pgx.Identifier{s.pub}.Sanitize())
	case len(others) > 0:
		pub.Kept = fmt.Sprintf("other pgoutput replication slots of this database may stream from it (%s); once none does: DROP PUBLICATION %s",
			strings.Join(others, ", "), pgx.Identifier{s.pub}.Sanitize())
	case drop:
		if _, err := conn.Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{s.pub}.Sanitize()); err != nil {
			return nil, publicationError(s.pub, "drop it", err)
		}
	}
	return append(out, pub), nil
}

// checkpointedSlot is the slot the pipeline's checkpoint streams from
// ("" when there is no checkpoint, or it cannot be read).
func (s *Source) checkpointedSlot() string {
	if s.opts.Checkpointed == nil {
		return ""
	}
	pos, _, err := decodePosition(s.opts.Checkpointed)
	if err != nil {
		return ""
	}
	return pos.Slot
}

// slotLeftover looks at replication slot name (nil when there is none)
// and, when drop and the slot is the pipeline's own, drops it. Only a
// slot of this database that the checkpoint streams from is the
// pipeline's: another is kept, and never has its reader ended. One of
// this database that someone reads is refused all the same, as it may be
// this pipeline running with another checkpoint store: the rest of drop
// (the offsets record) would fence it.
func (s *Source) slotLeftover(ctx context.Context, name string, recorded, drop bool) (*source.Leftover, error) {
	var db *string
	var current string
	var active bool
	err := s.conn.QueryRow(ctx, `SELECT database, active, current_database() FROM pg_replication_slots WHERE slot_name = $1`, name).
		Scan(&db, &active, &current)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up replication slot %s: %w", name, err)
	}
	l := &source.Leftover{What: "replication slot", Name: name}
	fix := fmt.Sprintf("SELECT pg_drop_replication_slot('%s')", name)
	switch {
	case db == nil:
		l.Kept = "a physical replication slot, not this pipeline's"
		return l, nil
	case *db != current:
		l.Kept = fmt.Sprintf("it is a slot of database %s, not of %s (slot names are server-wide): another pipeline's, which its own drop removes", *db, current)
		return l, nil
	case !recorded && active:
		return nil, fmt.Errorf("replication slot %w: replication slot %s of this database is read, and this pipeline's checkpoint does not stream from it: "+
			"it may be this pipeline running with another checkpoint store or path (stop it, then drop with its config), or another pipeline, whose slot source.slot names",
			source.ErrReaderInUse, name)
	case !recorded:
		l.Kept = fmt.Sprintf("this pipeline's checkpoint does not stream from it (another pipeline's, whose slot source.slot names, or one this pipeline's lost checkpoint streamed from); if nothing reads it: %s", fix)
		return l, nil
	}
	h, err := s.lookupHolder(ctx, name)
	if err != nil {
		return nil, err
	}
	// Neither listing nor drop ends anybody's connection: a holder is
	// waited for, then refused. A lease fences only the tasks of the same
	// store, table and region; a config copy naming another store would
	// take a lease of its own and end the running task's walsender.
	if h != nil {
		if err := s.awaitSlot(ctx, name, h); err != nil {
			return nil, err
		}
	}
	if drop {
		if err := retryActive(ctx, func() error {
			_, err := s.conn.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, name)
			return err
		}); err != nil {
			return nil, fmt.Errorf("drop replication slot %s: %w", name, err)
		}
	}
	return l, nil
}
