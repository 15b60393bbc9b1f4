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

// Leftovers implements source.Dropper: the pipeline's replication slot,
// and its publication (kept, saying why, unless Tributary created it). A
// slot another process streams from fails it (takeSlot's wait and words).
func (s *Source) Leftovers(ctx context.Context) ([]source.Leftover, error) {
	return s.leftovers(ctx, false)
}

// Drop implements source.Dropper: it drops the slot (ending a stale
// owner's walsender when the store's lease fences it, Options.Leased) and
// the publication Tributary created.
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
	slot, err := lookupSlot(ctx, conn, s.slot)
	if err != nil {
		return nil, err
	}
	if slot.exists {
		h, err := s.lookupHolder(ctx)
		if err != nil {
			return nil, err
		}
		// Listing ends nobody's connection; a holder is only waited for
		// (and refused) unless the lease says it is stale.
		if h != nil && (drop || !s.opts.Leased) {
			if err := s.takeSlot(ctx); err != nil {
				return nil, err
			}
		}
		if drop {
			if err := retryActive(ctx, func() error {
				_, err := conn.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, s.slot)
				return err
			}); err != nil {
				return nil, fmt.Errorf("drop replication slot %s: %w", s.slot, err)
			}
		}
		out = append(out, source.Leftover{What: "replication slot", Name: s.slot})
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
