package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// discoverEvery is how often the stream looks for tables to start or stop
// capturing: new tables (no source.tables list) or listed tables that
// appear, and captured tables dropped or renamed.
const discoverEvery = 5 * time.Second

// setCaptured replaces the captured set: the tables whose every row is
// published and whose changes the stream publishes.
func (s *Source) setCaptured(rels []*relation) {
	s.captured = map[uint32]string{}
	for _, r := range rels {
		s.capture(r)
	}
	s.capturedChanged()
}

// capture adds r, described, to the captured set.
func (s *Source) capture(r *relation) {
	s.captured[r.oid] = r.fullName()
	t := r.table(s.connCfg.Database, s.tables[r.oid], s.sel)
	s.tables[r.oid], s.rels[r.oid] = t, r
	s.snapshotTable(r, t)
}

// capturedChanged re-encodes the captured set for the positions (by name
// and OID) and names it for on-demand snapshots (source.CapturedSet),
// which tells the loop.
func (s *Source) capturedChanged() {
	m := make(map[string]uint32, len(s.captured))
	known := make(map[string]bool, len(s.captured))
	s.dropped = nil
	for oid, name := range s.captured {
		if _, gone := s.goneAt[oid]; gone {
			// Not for Snapshot; and a new table of its name is the one
			// Tables records, so Dropped records this one.
			if m[name] == 0 {
				m[name] = oid
			}
			if s.dropped == nil {
				s.dropped = map[uint32]string{}
			}
			s.dropped[oid] = name
			continue
		}
		m[name] = oid
		known[name] = true
	}
	s.fullKeysChanged()
	s.SetCaptured(encodeTables(m), sortedNames(known))
}

// fullKeysChanged records the key columns of the captured tables under
// REPLICA IDENTITY FULL for the positions: once such a table is dropped,
// its Relation messages no longer say which columns are its key
// (dropped.go).
func (s *Source) fullKeysChanged() {
	s.fullKeys = nil
	for oid := range s.captured {
		s.fullKeyChanged(oid)
	}
}

// fullKeyChanged is fullKeysChanged for table oid alone, after its
// Relation message changed s.rels[oid]: a stream over thousands of
// tables gets a Relation message for each, and going over every captured
// table at each made the stream quadratic in the tables.
func (s *Source) fullKeyChanged(oid uint32) {
	if r := s.rels[oid]; r != nil && r.replident == "f" {
		if _, ok := s.captured[oid]; ok {
			if s.fullKeys == nil {
				s.fullKeys = map[uint32][]string{}
			}
			s.fullKeys[oid] = r.key
			return
		}
	}
	delete(s.fullKeys, oid)
	if len(s.fullKeys) == 0 {
		s.fullKeys = nil // as fullKeysChanged leaves it: the position omits it
	}
}

// cursor is the resumable position at lsn, which the capture loop seals
// with the captured set and the snapshots' progress.
func (s *Source) cursor(lsn uint64) change.Position {
	s.forgetDropped(lsn)
	s.streamLSN.Store(lsn)
	pos := position{Slot: s.slot, LSN: formatLSN(lsn), Dropped: s.dropped, FullKeys: s.fullKeys, InitialOnly: s.initialOnlySlot}
	if s.lastCommit != lsn { // 0/0 when none is known yet: null
		pos.Commit = formatLSN(s.lastCommit)
	}
	return pos.encode()
}

// capturedBefore is the set of tables a streaming checkpoint says are
// captured (recorded: the position's tables). Positions written before
// the set was recorded did not have it: then every table the publication
// covered was captured.
func capturedBefore(recorded json.RawMessage, pub publicationState, rels []*relation) map[uint32]bool {
	out := map[uint32]bool{}
	if recorded != nil {
		m, _ := decodeTables(recorded) // checked by decodePosition
		for _, r := range rels {
			if oid, ok := m[r.fullName()]; ok && oid == r.oid {
				out[r.oid] = true
			}
		}
		return out
	}
	for _, r := range rels {
		if _, ok := pub.tables[r.oid]; ok || pub.allTables || pub.schemas {
			out[r.oid] = true
		}
	}
	return out
}

// names returns the schema.table names of rels, sorted.
func names(rels []*relation) []string {
	var out []string
	for _, r := range rels {
		out = append(out, r.fullName())
	}
	slices.Sort(out)
	return out
}

// sortedNames returns the keys of a name set, sorted.
func sortedNames(set map[string]bool) []string {
	return slices.Sorted(maps.Keys(set))
}

// follows reports whether the stream publishes relation oid, which the
// server now calls schema.name. A captured table renamed out of
// source.tables stops being captured here.
//
// A relation not captured whose changes pgoutput sends was in the
// publication when they were written. When the catalog no longer has it
// and the selection wants its name, it is a table that joined the
// publication at a start that died before any checkpoint recorded it
// captured (the start's ALTER PUBLICATION done, its first checkpoint not
// yet written), dropped since: its changes are published like those of
// any captured table dropped with changes in the slot (dropped.go,
// docs/postgresql.md "Tables dropped while their changes are in the
// slot"), where they used to be skipped.
func (s *Source) follows(ctx context.Context, oid uint32, schema, name string) (bool, error) {
	now := schema + "." + name
	was, ok := s.captured[oid]
	if !ok {
		if !s.sel.Wants(now, true) {
			return false, nil
		}
		gone, err := s.tableGone(ctx, oid, now)
		if err != nil || !gone {
			return false, err
		}
		return true, s.tableDropped(ctx, oid, now)
	}
	if now != was {
		return s.renamed(ctx, oid, was, now), nil
	}
	return true, nil
}

// renamed handles a captured table that is now called to: with a
// source.tables list that does not name it, it is no longer captured (and
// leaves the publication); otherwise it is captured under its new name.
func (s *Source) renamed(ctx context.Context, oid uint32, from, to string) bool {
	if !s.sel.Wants(to, true) {
		s.opts.Log().Warn("a captured table was renamed to a name the list does not hold (source.tables does not select it, or source.exclude_tables leaves it out); its changes are no longer published",
			"table", from, "renamed_to", to)
		delete(s.captured, oid)
		s.capturedChanged()
		if _, err := s.conn.Exec(ctx, "ALTER PUBLICATION "+pgx.Identifier{s.pub}.Sanitize()+" DROP TABLE "+quoteName(to)); err != nil {
			s.opts.Log().Warn("could not drop the renamed table from the publication; its changes are filtered out", "table", to, "publication", s.pub, "err", err)
		}
		return false
	}
	s.opts.Log().Info("a captured table was renamed; its changes now go to the topic of its new name", "table", from, "renamed_to", to)
	s.captured[oid] = to
	s.capturedChanged()
	return true
}

// discover brings the captured set in line with the catalog while
// streaming: it reports captured tables that were dropped or renamed, and
// adds the tables that should now be captured (new tables when no list is
// configured, listed tables that appeared) to the publication and
// backfills them, before the stream goes on. Called between transactions.
func (s *Source) discover(ctx context.Context, st source.Stream) error {
	cur, missing, err := listTables(ctx, s.conn, s.sel)
	if err != nil {
		return err
	}
	cur, _ = s.identified(cur, false)
	now := map[uint32]*relation{}
	var added []*relation
	for _, r := range cur {
		now[r.oid] = r
		if _, ok := s.captured[r.oid]; !ok {
			added = append(added, r)
		}
	}
	for oid, was := range s.captured {
		if r, ok := now[oid]; ok {
			if r.fullName() != was {
				s.renamed(ctx, oid, was, r.fullName())
			}
			continue
		}
		var to string
		err := s.conn.QueryRow(ctx, `SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1`, oid).Scan(&to)
		switch {
		case err == pgx.ErrNoRows:
			if err := s.tableDropped(ctx, oid, was); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("look up table %s: %w", was, err)
		case to != was:
			s.renamed(ctx, oid, was, to)
		default:
			// Still there under its name, but no longer selected: it lost
			// its primary key (no list) or its replica identity, or became
			// a partition.
			s.opts.Log().Warn("a captured table is no longer selected (no primary key or replica identity, or now a partition); its changes are no longer published", "table", was)
			delete(s.captured, oid)
			s.capturedChanged()
			if _, err := s.conn.Exec(ctx, "ALTER PUBLICATION "+pgx.Identifier{s.pub}.Sanitize()+" DROP TABLE "+quoteName(was)); err != nil {
				s.opts.Log().Warn("could not drop the table from the publication", "table", was, "err", err)
			}
		}
	}
	for _, t := range missing {
		if !s.missing[t] {
			s.missing[t] = true
			s.opts.Log().Warn("source.tables: table not found (dropped or renamed?); it is captured again if it appears", "table", t)
		}
	}
	for _, r := range cur {
		delete(s.missing, r.fullName())
	}
	s.reportMissing()
	if len(added) == 0 {
		return nil
	}
	return s.addTables(ctx, added, st)
}

// addTables starts capturing rels while streaming: into the publication
// first (from then on their changes are streamed), then queued for a
// snapshot by the engine, whose watermarks come after the ALTER in the
// log: every row written before is read, and a change in a chunk's window
// wins over the chunk's copy. The queued snapshot rides on the positions,
// so an interrupted one resumes after a restart.
func (s *Source) addTables(ctx context.Context, rels []*relation, st source.Stream) error {
	var list []string
	keep := rels[:0:0]
	for _, r := range rels {
		if err := describe(ctx, s.conn, r); err != nil {
			return err
		}
		if p := columnProblems(r, s.sel); len(p) > 0 {
			if key := "columns:" + r.fullName(); !s.missing[key] {
				s.missing[key] = true
				s.opts.Log().Warn("a new table is not captured: the column rules leave out or mask its key", "table", r.fullName(), "problem", strings.Join(p, "; "))
			}
			continue
		}
		keep = append(keep, r)
		list = append(list, r.qualified())
	}
	if rels = keep; len(rels) == 0 {
		return nil
	}
	if _, err := s.conn.Exec(ctx, "ALTER PUBLICATION "+pgx.Identifier{s.pub}.Sanitize()+" ADD TABLE "+strings.Join(list, ", ")); err != nil {
		key := strings.Join(list, ", ")
		if !s.missing["add:"+key] {
			s.missing["add:"+key] = true
			s.opts.Log().Warn("a new table cannot be captured: adding it to the publication failed (the user must own the table, or its owner can run the ALTER PUBLICATION)",
				"tables", key, "publication", s.pub, "err", err)
		}
		return nil
	}
	s.opts.Log().Info("capturing new tables", "tables", strings.Join(names(rels), ", "))
	for _, r := range rels {
		s.capture(r)
	}
	s.capturedChanged()
	st.Added(names(rels))
	return st.Heartbeat(ctx, s.cursor(s.marked))
}

// quoteName quotes a schema.table name as the catalog spells it (the
// schema holds no dot: names come from pg_namespace || '.' || relname).
func quoteName(full string) string {
	schema, table, _ := strings.Cut(full, ".")
	return pgx.Identifier{schema, table}.Sanitize()
}
