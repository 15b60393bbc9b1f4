package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// Once a table is in a publication that publishes updates and deletes,
// PostgreSQL refuses UPDATE and DELETE on it unless it has a replica
// identity: a primary key (REPLICA IDENTITY DEFAULT), a unique index
// (USING INDEX) or the whole row (FULL). Tributary never puts a table
// without one into its publication, so that it never breaks the
// application's writes: a table named in source.tables is refused (at
// start and by test-connection) with the fix, and without a list such a
// table is left out with a warning (docs/postgresql.md).

// withIdentity splits rels into the tables that have a replica identity
// and those that do not.
func withIdentity(rels []*relation) (ok, without []*relation) {
	for _, r := range rels {
		if r.noIdentity == "" {
			ok = append(ok, r)
		} else {
			without = append(without, r)
		}
	}
	return ok, without
}

// identityProblem says what is wrong with tables without a replica
// identity, and how to fix it.
func identityProblem(without []*relation) (detail, fix string) {
	var list []string
	table := "<table>"
	for _, r := range without {
		list = append(list, r.noIdentity)
	}
	if len(without) == 1 && strings.HasPrefix(without[0].noIdentity, without[0].fullName()+" (") {
		table = without[0].qualified() // not a partition of it
	}
	return "PostgreSQL refuses UPDATE and DELETE on a table in a publication unless it has a replica identity; these have none, or (a partition) one without the table's key: " +
			strings.Join(list, ", "),
		"give each a primary key, or run ALTER TABLE " + table + " REPLICA IDENTITY FULL " +
			"(or REPLICA IDENTITY USING INDEX <a unique index on NOT NULL columns>), or leave it out of source.tables"
}

// identified returns the tables of rels that may be captured. At start,
// a table source.tables names (a plain name) without a replica identity
// is an error, before anything changes on the server; otherwise (no list,
// a table a regular expression matches, or one found while streaming)
// such tables are left out with a warning, once each, and captured when
// they get one. At start, rels are
// described, and destination.key_columns an old row image may lack are
// an error too; so is a key the column rules leave out or mask, by the
// same rule as a missing replica identity.
func (s *Source) identified(rels []*relation, atStart bool) ([]*relation, error) {
	ok, without := withIdentity(rels)
	if named := s.named(without); atStart && len(named) > 0 {
		detail, fix := identityProblem(named)
		return nil, errors.New("source.tables: " + detail + "; Tributary does not add them to the publication; fix: " + fix)
	}
	if len(without) > 0 {
		_, fix := identityProblem(without)
		for _, r := range without {
			if key := "identity:" + r.noIdentity; !s.missing[key] {
				s.missing[key] = true
				s.opts.Log().Warn("a table without a replica identity is not captured: in the publication, its UPDATE and DELETE would fail in the application",
					"table", r.fullName(), "problem", r.noIdentity, "fix", fix)
			}
		}
	}
	if p := keyColumnsProblems(ok, s.opts.KeyColumns); atStart && len(p) > 0 {
		return nil, errors.New(strings.Join(p, "; "))
	}
	if atStart {
		// As for the replica identity: a named table whose key the column
		// rules leave out or mask is an error; one a pattern (or no list)
		// selects is left out with a warning, as addTables does while
		// streaming, so that a reconnect does not stop on it.
		var p []string
		kept := ok[:0:0]
		for _, r := range ok {
			cp := columnProblems(r, s.sel)
			switch {
			case len(cp) == 0:
				kept = append(kept, r)
			case s.sel.Named(r.fullName()):
				p = append(p, cp...)
			default:
				if key := "columns:" + r.fullName(); !s.missing[key] {
					s.missing[key] = true
					s.opts.Log().Warn("a table is not captured: the column rules leave out or mask its key", "table", r.fullName(), "problem", strings.Join(cp, "; "))
				}
			}
		}
		if len(p) > 0 {
			return nil, errors.New(strings.Join(p, "; "))
		}
		ok = kept
	}
	return ok, nil
}

// checkedTables are the tables the checks look at: those the selection
// picks, split into those with a replica identity (captured) and those
// without.
func (s *Source) checkedTables(ctx context.Context, conn *pgx.Conn) (ok, without []*relation, err error) {
	rels, _, err := listTables(ctx, conn, s.sel)
	if err != nil {
		return nil, nil, err
	}
	ok, without = withIdentity(rels)
	return ok, without, nil
}

// identityCheck is test-connection's "replica identity" line: failed
// when a table of source.tables has none, or destination.key_columns
// names columns its old row images lack (run refuses both); without a
// list, the tables left out for want of one are named.
func (s *Source) identityCheck(ctx context.Context, conn *pgx.Conn) source.Check {
	c := source.Check{Name: "replica identity"}
	ok, without, err := s.checkedTables(ctx, conn)
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	for _, r := range ok {
		if _, keyed := s.opts.KeyColumns[r.fullName()]; keyed {
			if err := describe(ctx, conn, r); err != nil {
				c.Detail = err.Error()
				return c
			}
		}
	}
	if p := keyColumnsProblems(ok, s.opts.KeyColumns); len(p) > 0 {
		c.Detail = strings.Join(p, "; ")
		return c
	}
	if len(without) == 0 {
		c.OK, c.Detail = true, "every captured table has a replica identity"
		return c
	}
	if named := s.named(without); len(named) > 0 {
		c.Detail, c.Fix = identityProblem(named)
		return c
	}
	c.Detail, c.Fix = identityProblem(without)
	c.OK, c.Detail = true, "left out of the capture: "+c.Detail
	return c
}

// named returns the relations of rels that source.tables names (plain
// names): those a user asked for by name, whose refusal is an error.
func (s *Source) named(rels []*relation) []*relation {
	var out []*relation
	for _, r := range rels {
		if s.sel.Named(r.fullName()) {
			out = append(out, r)
		}
	}
	return out
}

// keyColumnsProblems names the destination.key_columns entries of
// described rels that an old row image may lack: unless the replica
// identity is FULL, a delete (or a change of the identity) carries only
// the identity's columns (rel.key), and a key of other columns would be
// made up.
func keyColumnsProblems(rels []*relation, keyColumns map[string][]string) []string {
	var out []string
	for _, r := range rels {
		cols, ok := keyColumns[r.fullName()]
		if !ok || r.replident == "f" {
			continue
		}
		for _, c := range cols {
			// A column the table does not have: the encoder names it.
			known := slices.ContainsFunc(r.columns, func(col catalogColumn) bool { return col.name == c })
			if known && !slices.Contains(r.key, c) {
				out = append(out, fmt.Sprintf("destination.key_columns[%s]: column %s is not in the table's replica identity (%s), so a delete does not carry it and its key would be made up; "+
					"fix: ALTER TABLE %s REPLICA IDENTITY FULL, or key the table by its replica identity columns", r.fullName(), c, strings.Join(r.key, ", "), r.qualified()))
				break
			}
		}
	}
	return out
}
