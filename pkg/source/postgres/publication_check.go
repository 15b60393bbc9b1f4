package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// publicationCheck is test-connection's publication line: what run would
// change in the publication (planPublication), and whether the user may.
// Creating a publication FOR TABLE, or adding a table to one, needs the
// table's ownership besides CREATE on the database; altering one needs
// the publication's. A user without them gets the statements that make
// the publication right, to be run by the tables' owner: run then finds
// nothing to change.
func (s *Source) publicationCheck(ctx context.Context, conn *pgx.Conn) source.Check {
	c := source.Check{Name: "publication"}
	rels, _, err := s.checkedTables(ctx, conn) // those without are refused by the replica identity line
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	before, err := readPublication(ctx, conn, s.pub)
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	plan := planPublication(before, rels)
	if plan.none() {
		c.OK, c.Detail = true, "publication "+s.pub+" exists and lists the captured tables"
		return c
	}
	if err := othersPublication(ctx, conn, s.opts.Pipeline, s.pub); err != nil {
		c.Detail, c.Fix = err.Error(), "name in source.publication a publication of this pipeline's own"
		return c
	}
	var canCreate, ownsPub bool
	if err := conn.QueryRow(ctx, `SELECT has_database_privilege(current_database(), 'CREATE'),
		COALESCE((SELECT pg_has_role(pubowner, 'USAGE') FROM pg_publication WHERE pubname = $1), false)`, s.pub).Scan(&canCreate, &ownsPub); err != nil {
		c.Detail = "cannot read the user's privileges: " + err.Error()
		return c
	}
	owned := rels
	if !plan.create && !plan.replace {
		owned = plan.addRels
	}
	var oids []uint32
	for _, r := range owned {
		oids = append(oids, r.oid)
	}
	rows, err := conn.Query(ctx, `SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = ANY($1) AND NOT pg_has_role(c.relowner, 'USAGE') ORDER BY 1`, oids)
	if err != nil {
		c.Detail = "cannot read the tables' owners: " + err.Error()
		return c
	}
	notOwned, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		c.Detail = "cannot read the tables' owners: " + err.Error()
		return c
	}

	ident := pgx.Identifier{s.pub}.Sanitize()
	var stmts, lacks []string
	needPub := !plan.create
	switch {
	case plan.create:
		stmts = append(stmts, createStatement(s.pub, rels))
		c.Detail = "publication " + s.pub + " does not exist yet; run creates it"
	case plan.replace:
		stmts = append(stmts, "DROP PUBLICATION "+ident, createStatement(s.pub, rels))
		c.Detail = "publication " + s.pub + " covers more than the captured tables; run replaces it with one that lists them"
	default:
		var what []string
		if plan.viaRoot {
			stmts = append(stmts, "ALTER PUBLICATION "+ident+" SET (publish_via_partition_root = true)")
			what = append(what, "sets publish_via_partition_root")
		}
		if len(plan.add) > 0 {
			stmts = append(stmts, "ALTER PUBLICATION "+ident+" ADD TABLE "+strings.Join(plan.add, ", "))
			what = append(what, "adds "+strings.Join(plan.add, ", "))
		}
		if len(plan.drop) > 0 {
			stmts = append(stmts, "ALTER PUBLICATION "+ident+" DROP TABLE "+strings.Join(plan.drop, ", "))
			what = append(what, "drops "+strings.Join(plan.drop, ", "))
		}
		c.Detail = "publication " + s.pub + " exists; run " + strings.Join(what, ", ")
	}
	if (plan.create || plan.replace) && !canCreate {
		lacks = append(lacks, "CREATE on the database")
	}
	if needPub && !ownsPub {
		lacks = append(lacks, "ownership of publication "+s.pub)
	}
	if len(notOwned) > 0 {
		lacks = append(lacks, "ownership of "+strings.Join(notOwned, ", "))
	}
	if len(lacks) == 0 {
		c.OK = true
		return c
	}
	c.Detail += fmt.Sprintf(", which the user %s may not do: it needs %s", s.connCfg.User, strings.Join(lacks, " and "))
	c.Fix = "have the owner of the tables run " + strings.Join(stmts, "; ") +
		" (run then finds it as it should be and changes nothing); or name in source.publication a publication that lists exactly the captured tables"
	return c
}
