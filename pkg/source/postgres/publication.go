package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/config"
)

// The publication lists exactly the captured tables, never FOR ALL
// TABLES: once a table is in a publication, PostgreSQL refuses UPDATE and
// DELETE on it unless it has a replica identity, so a publication that
// covers tables Tributary does not capture (those without a primary key)
// would break the application's writes to them. Tables are added and
// dropped with ALTER PUBLICATION, which needs no new slot; a table added
// is backfilled from a snapshot taken after the ALTER committed, and its
// changes stream from the ALTER on, so nothing written to it is missed.

// listTables returns the tables to capture, without their columns: those
// source.tables names or matches (sel), or, without a list, every
// ordinary or partitioned table with a primary key outside system schemas
// (partitions are captured through their root) that no extension owns
// (PostGIS's spatial_ref_sys is the extension's data, not the
// application's; listing it captures it all the same); never one
// source.exclude_tables matches. missing names the plain names listed
// that do not exist. Each relation's noIdentity says why PostgreSQL would
// refuse UPDATE and DELETE on it (or on one of its partitions) once it is
// in a publication, or why the deletes of one of its partitions could not
// be keyed: its replica identity (USING INDEX of its own) lacks columns of
// the table's key, which its old images then do not carry (see
// identity.go).
func listTables(ctx context.Context, conn *pgx.Conn, sel *config.Selection) (rels []*relation, missing []string, err error) {
	const q = `
SELECT c.oid, n.nspname, c.relname, c.relreplident::text,
  COALESCE((SELECT string_agg(pn.nspname || '.' || pc.relname || ' (' || CASE
        WHEN pc.relreplident = 'n' THEN 'REPLICA IDENTITY NOTHING'
        WHEN NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = pc.oid
            AND CASE WHEN pc.relreplident = 'i' THEN i.indisreplident ELSE i.indisprimary END) THEN
          CASE WHEN pc.relreplident = 'i' THEN 'REPLICA IDENTITY USING INDEX of an index that was dropped'
          ELSE 'no primary key, REPLICA IDENTITY DEFAULT' END
        ELSE 'a partition whose replica identity lacks key columns of ' || n.nspname || '.' || c.relname ||
          ', so its deletes could not be keyed; ALTER TABLE ' || pn.nspname || '.' || pc.relname || ' REPLICA IDENTITY DEFAULT fixes it' END ||
        ')', ', ' ORDER BY pn.nspname, pc.relname)
    -- The table and its leaf partitions, looked up by OID: a filter on
    -- every pg_class row made the listing quadratic in the tables.
    FROM (SELECT c.oid AS relid UNION SELECT relid FROM pg_partition_tree(c.oid) WHERE isleaf) pt
      JOIN pg_class pc ON pc.oid = pt.relid JOIN pg_namespace pn ON pn.oid = pc.relnamespace
    WHERE pc.relkind <> 'p'
      AND NOT (pc.relreplident = 'f'
        OR pc.relreplident IN ('d', 'i') AND EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = pc.oid
          AND CASE WHEN pc.relreplident = 'i' THEN i.indisreplident ELSE i.indisprimary END
          -- A partition's old images carry its own identity, the table's
          -- key comes from the root (describe): it must hold the root's.
          AND (pc.oid = c.oid OR NOT EXISTS (SELECT 1 FROM pg_index ri JOIN pg_attribute ra ON ra.attrelid = c.oid AND ra.attnum = ANY (ri.indkey::int2[])
            WHERE ri.indrelid = c.oid AND CASE WHEN c.relreplident = 'i' THEN ri.indisreplident ELSE ri.indisprimary END
              AND ra.attname NOT IN (SELECT la.attname FROM pg_attribute la WHERE la.attrelid = pc.oid AND la.attnum = ANY (i.indkey::int2[]))))))), '')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r','p') AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog','information_schema') AND n.nspname NOT LIKE 'pg\_%'
  AND ($1::text[] IS NULL OR n.nspname || '.' || c.relname = ANY($1))
  AND ($2 OR EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary))
  AND ($2 OR NOT EXISTS (SELECT 1 FROM pg_depend d
    WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'))
ORDER BY n.nspname, c.relname`
	// Plain names alone are looked up by name; a regular expression is
	// matched here, against every table.
	var plain any
	if sel.Listed() && len(sel.Patterns()) == 0 {
		plain = sel.PlainNames()
	}
	rows, err := conn.Query(ctx, q, plain, sel.Listed())
	if err != nil {
		return nil, nil, fmt.Errorf("list tables: %w", err)
	}
	found := map[string]bool{}
	for rows.Next() {
		r := &relation{}
		if err := rows.Scan(&r.oid, &r.schema, &r.name, &r.replident, &r.noIdentity); err != nil {
			return nil, nil, err
		}
		found[r.fullName()] = true
		if sel.Wants(r.fullName(), true) {
			rels = append(rels, r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("list tables: %w", err)
	}
	for _, t := range sel.PlainNames() {
		if !found[t] {
			missing = append(missing, t)
		}
	}
	return rels, missing, nil
}

// selectedTables is listTables with every table described.
func selectedTables(ctx context.Context, conn *pgx.Conn, sel *config.Selection) ([]*relation, []string, error) {
	rels, missing, err := listTables(ctx, conn, sel)
	if err != nil {
		return nil, nil, err
	}
	if err := describeAll(ctx, conn, rels); err != nil {
		return nil, nil, fmt.Errorf("describe %d tables: %w", len(rels), err)
	}
	return rels, missing, nil
}

// fullName is schema.table, as source.tables and checkpoints name tables.
func (r *relation) fullName() string { return r.schema + "." + r.name }

// publicationState is what pg_publication says about a publication.
type publicationState struct {
	exists    bool
	allTables bool // FOR ALL TABLES
	viaRoot   bool // publish_via_partition_root
	schemas   bool // FOR TABLES IN SCHEMA …: covers tables not captured
	tables    map[uint32]string
}

func readPublication(ctx context.Context, conn *pgx.Conn, name string) (publicationState, error) {
	var p publicationState
	err := conn.QueryRow(ctx, `
SELECT puballtables, pubviaroot,
  EXISTS (SELECT 1 FROM pg_publication_namespace pn WHERE pn.pnpubid = p.oid)
FROM pg_publication p WHERE pubname = $1`, name).Scan(&p.allTables, &p.viaRoot, &p.schemas)
	if err == pgx.ErrNoRows {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("look up publication %s: %w", name, err)
	}
	p.exists = true
	rows, err := conn.Query(ctx, `
SELECT c.oid, n.nspname || '.' || c.relname
FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid
JOIN pg_class c ON c.oid = pr.prrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE p.pubname = $1`, name)
	if err != nil {
		return p, fmt.Errorf("tables of publication %s: %w", name, err)
	}
	p.tables = map[uint32]string{}
	for rows.Next() {
		var oid uint32
		var t string
		if err := rows.Scan(&oid, &t); err != nil {
			return p, err
		}
		p.tables[oid] = t
	}
	if err := rows.Err(); err != nil {
		return p, fmt.Errorf("tables of publication %s: %w", name, err)
	}
	return p, nil
}

// publicationPlan is what reconcilePublication changes to make a
// publication list exactly the captured tables, with
// publish_via_partition_root; test-connection's publication line checks
// the user may make the same changes (publicationCheck).
type publicationPlan struct {
	create  bool // it does not exist
	replace bool // FOR ALL TABLES or FOR TABLES IN SCHEMA: dropped and made again
	viaRoot bool // publish_via_partition_root to set
	// add and drop are the tables to add (qualified names, and their
	// relations) and to drop (qualified).
	add     []string
	addRels []*relation
	drop    []string
}

func planPublication(before publicationState, rels []*relation) publicationPlan {
	var p publicationPlan
	switch {
	case !before.exists:
		p.create = true
		return p
	case before.allTables || before.schemas:
		p.replace = true
		return p
	}
	p.viaRoot = !before.viaRoot
	want := map[uint32]bool{}
	for _, r := range rels {
		want[r.oid] = true
		if _, ok := before.tables[r.oid]; !ok {
			p.add = append(p.add, r.qualified())
			p.addRels = append(p.addRels, r)
		}
	}
	for oid, t := range before.tables {
		if !want[oid] {
			p.drop = append(p.drop, quoteName(t))
		}
	}
	slices.Sort(p.drop)
	return p
}

// none says the publication is as it should be.
func (p publicationPlan) none() bool {
	return !p.create && !p.replace && !p.viaRoot && len(p.add) == 0 && len(p.drop) == 0
}

// createStatement is the CREATE PUBLICATION that lists exactly rels.
func createStatement(name string, rels []*relation) string {
	var list []string
	for _, r := range rels {
		list = append(list, r.qualified())
	}
	create := "CREATE PUBLICATION " + pgx.Identifier{name}.Sanitize()
	if len(list) > 0 {
		create += " FOR TABLE " + strings.Join(list, ", ")
	}
	return create + " WITH (publish_via_partition_root = true)"
}

// reconcilePublication makes publication name list exactly rels, with
// publish_via_partition_root: it creates it, replaces one that covers
// more than the captured tables (FOR ALL TABLES or FOR TABLES IN SCHEMA),
// and adds and drops tables (planPublication). Each change is logged. A
// publication it creates carries pipeline's marker (publicationMarker).
// It returns the publication as it was before.
func reconcilePublication(ctx context.Context, conn *pgx.Conn, log *slog.Logger, pipeline, name string, rels []*relation) (publicationState, error) {
	before, err := readPublication(ctx, conn, name)
	if err != nil {
		return before, err
	}
	ident := pgx.Identifier{name}.Sanitize()
	create := createStatement(name, rels)
	plan := planPublication(before, rels)
	if !plan.none() {
		if err := othersPublication(ctx, conn, pipeline, name); err != nil {
			return before, err
		}
	}
	switch {
	case plan.create:
		// The comment is how `tributary drop` knows the publication is
		// Tributary's to remove (drop.go); one transaction, so that no
		// publication it made goes without it.
		if err := inTx(ctx, conn, create, "COMMENT ON PUBLICATION "+ident+" IS "+quoteLiteral(publicationMarker(pipeline))); err != nil {
			return before, publicationError(name, "create it", err)
		}
		log.Info("created the publication", "publication", name, "tables", len(rels))
		return before, nil
	case plan.replace:
		// One transaction: logical decoding looks the publication up by
		// name as of each change, and must never find it missing.
		log.Warn("the publication covers more than the captured tables: UPDATE and DELETE fail on tables without a primary key or replica identity; replacing it with one that lists the captured tables",
			"publication", name, "all_tables", before.allTables)
		if err := inTx(ctx, conn, "DROP PUBLICATION "+ident, create); err != nil {
			return before, publicationError(name, "replace it", err)
		}
		return before, nil
	}
	if plan.viaRoot {
		log.Warn("the publication lacks publish_via_partition_root; setting it, so that partitioned tables publish under their own name", "publication", name)
		if _, err := conn.Exec(ctx, "ALTER PUBLICATION "+ident+" SET (publish_via_partition_root = true)"); err != nil {
			return before, publicationError(name, "set publish_via_partition_root = true", err)
		}
	}
	if len(plan.add) > 0 {
		if _, err := conn.Exec(ctx, "ALTER PUBLICATION "+ident+" ADD TABLE "+strings.Join(plan.add, ", ")); err != nil {
			return before, publicationError(name, "add "+strings.Join(plan.add, ", "), err)
		}
		log.Info("added tables to the publication", "publication", name, "tables", strings.Join(plan.add, ", "))
	}
	if len(plan.drop) > 0 {
		if _, err := conn.Exec(ctx, "ALTER PUBLICATION "+ident+" DROP TABLE "+strings.Join(plan.drop, ", ")); err != nil {
			return before, publicationError(name, "drop "+strings.Join(plan.drop, ", "), err)
		}
		log.Info("dropped tables that are no longer captured from the publication", "publication", name, "tables", strings.Join(plan.drop, ", "))
	}
	return before, nil
}

// publicationError says what could not be done and who can do it: only
// the publication's owner may alter it, and adding a table also needs
// ownership of the table.
func publicationError(pub, what string, err error) error {
	return fmt.Errorf("publication %s: %s: %w (the user must own the publication and the captured tables; "+
		"or have their owner run the change, or name a publication that lists the tables in source.publication)", pub, what, err)
}

func inTx(ctx context.Context, conn *pgx.Conn, stmts ...string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// othersPublication refuses to change a publication Tributary created for
// another pipeline (its comment says which): bringing it in line with
// this pipeline's tables would take the other's tables out of it, and
// their changes, decoded against the publication as it is when they are
// written, would never reach the other pipeline. A pipeline may stream
// from another's publication that already lists exactly its tables.
func othersPublication(ctx context.Context, conn *pgx.Conn, pipeline, name string) error {
	var comment *string
	err := conn.QueryRow(ctx, `SELECT obj_description(oid, 'pg_publication') FROM pg_publication WHERE pubname = $1`, name).Scan(&comment)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up publication %s: %w", name, err)
	}
	other, ok := strings.CutPrefix(derefOr(comment, ""), publicationMarker(""))
	if !ok || other == pipeline {
		return nil
	}
	return fmt.Errorf("publication %s was created by Tributary for pipeline %s (its comment says so): another pipeline's, whose tables it lists; "+
		"give this pipeline a publication of its own in source.publication (the default is tributary_<name>)", name, other)
}

func derefOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}
