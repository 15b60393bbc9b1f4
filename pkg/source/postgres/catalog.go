package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// relation is what the catalog says about one table.
type relation struct {
	oid     uint32
	schema  string
	name    string
	columns []catalogColumn // in attnum order: the order pgoutput sends
	key     []string        // primary key columns in key order
}

type catalogColumn struct {
	name    string
	typOID  uint32
	typmod  int32
	typName string
	notNull bool
}

// qualified returns the quoted "schema"."name".
func (r *relation) qualified() string {
	return pgx.Identifier{r.schema, r.name}.Sanitize()
}

// selectedTables returns the tables to capture: the include list, or every
// ordinary or partitioned table with a primary key outside system schemas
// (partitions themselves are captured through their root).
func selectedTables(ctx context.Context, conn *pgx.Conn, include []string) ([]*relation, error) {
	const q = `
SELECT c.oid, n.nspname, c.relname
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r','p') AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog','information_schema') AND n.nspname NOT LIKE 'pg\_%'
  AND ($1::text[] IS NULL OR n.nspname || '.' || c.relname = ANY($1))
  AND ($1::text[] IS NOT NULL OR EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary))
ORDER BY n.nspname, c.relname`
	var arg any
	if len(include) > 0 {
		arg = include
	}
	rows, err := conn.Query(ctx, q, arg)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	var rels []*relation
	for rows.Next() {
		r := &relation{}
		if err := rows.Scan(&r.oid, &r.schema, &r.name); err != nil {
			return nil, err
		}
		rels = append(rels, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	if len(include) > 0 {
		found := map[string]bool{}
		for _, r := range rels {
			found[r.schema+"."+r.name] = true
		}
		var missing []string
		for _, t := range include {
			if !found[t] {
				missing = append(missing, t)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("source.tables: %s not found", strings.Join(missing, ", "))
		}
	}
	for _, r := range rels {
		if err := describe(ctx, conn, r); err != nil {
			return nil, err
		}
	}
	return rels, nil
}

// describe fills r's columns and primary key from the catalog.
func describe(ctx context.Context, conn *pgx.Conn, r *relation) error {
	const cols = `
SELECT a.attname, a.atttypid, a.atttypmod, t.typname, a.attnotnull
FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
ORDER BY a.attnum`
	rows, err := conn.Query(ctx, cols, r.oid)
	if err != nil {
		return fmt.Errorf("describe %s.%s: %w", r.schema, r.name, err)
	}
	r.columns = r.columns[:0]
	for rows.Next() {
		var c catalogColumn
		if err := rows.Scan(&c.name, &c.typOID, &c.typmod, &c.typName, &c.notNull); err != nil {
			return err
		}
		r.columns = append(r.columns, c)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("describe %s.%s: %w", r.schema, r.name, err)
	}
	const pk = `
SELECT a.attname
FROM pg_index i, unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attnum = k.attnum
WHERE i.indrelid = $1 AND i.indisprimary AND a.attrelid = $1
ORDER BY k.ord`
	rows, err = conn.Query(ctx, pk, r.oid)
	if err != nil {
		return fmt.Errorf("primary key of %s.%s: %w", r.schema, r.name, err)
	}
	r.key, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("primary key of %s.%s: %w", r.schema, r.name, err)
	}
	return nil
}

// table builds the neutral table for r, reusing prev when nothing changed
// so that encoders keep their cached schema.
func (r *relation) table(db string, prev *change.Table) *change.Table {
	t := &change.Table{ID: change.TableID{DB: db, Schema: r.schema, Name: r.name}}
	for _, c := range r.columns {
		t.Columns = append(t.Columns, change.Column{
			Name:     c.name,
			Type:     columnType(c.typOID, c.typmod, c.typName),
			Optional: !c.notNull,
		})
	}
	for _, k := range r.key {
		for i, c := range t.Columns {
			if c.Name == k {
				t.Key = append(t.Key, i)
			}
		}
	}
	if prev != nil {
		if sameShape(prev, t) {
			return prev
		}
		t.Version = prev.Version + 1
	}
	return t
}

func sameShape(a, b *change.Table) bool {
	if a.ID != b.ID || len(a.Columns) != len(b.Columns) || len(a.Key) != len(b.Key) {
		return false
	}
	for i := range a.Columns {
		if a.Columns[i] != b.Columns[i] {
			return false
		}
	}
	for i := range a.Key {
		if a.Key[i] != b.Key[i] {
			return false
		}
	}
	return true
}

// ensurePublication creates the publication when it is missing: for the
// listed tables, or for all tables when no include list is configured
// (so tables created later are captured too).
func ensurePublication(ctx context.Context, conn *pgx.Conn, name string, include []string, rels []*relation) error {
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("look up publication %s: %w", name, err)
	}
	if exists {
		return nil
	}
	target := "ALL TABLES"
	if len(include) > 0 {
		var names []string
		for _, r := range rels {
			names = append(names, r.qualified())
		}
		target = "TABLE " + strings.Join(names, ", ")
	}
	sql := fmt.Sprintf("CREATE PUBLICATION %s FOR %s WITH (publish_via_partition_root = true)", pgx.Identifier{name}.Sanitize(), target)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("create publication %s: %w", name, err)
	}
	return nil
}

// slotState is a replication slot as pg_replication_slots shows it.
type slotState struct {
	exists       bool
	plugin       string
	confirmedLSN uint64
	lost         bool
}

func lookupSlot(ctx context.Context, conn *pgx.Conn, name string) (slotState, error) {
	var s slotState
	var confirmed *string
	var walStatus *string
	err := conn.QueryRow(ctx, `SELECT plugin, confirmed_flush_lsn::text, wal_status FROM pg_replication_slots WHERE slot_name = $1`, name).
		Scan(&s.plugin, &confirmed, &walStatus)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("look up replication slot %s: %w", name, err)
	}
	s.exists = true
	if confirmed != nil {
		lsn, err := parseLSN(*confirmed)
		if err != nil {
			return s, err
		}
		s.confirmedLSN = lsn
	}
	s.lost = walStatus != nil && *walStatus == "lost"
	return s, nil
}

// checkPrerequisites reports every missing server setting at once.
func checkPrerequisites(ctx context.Context, conn *pgx.Conn) error {
	var walLevel string
	if err := conn.QueryRow(ctx, `SHOW wal_level`).Scan(&walLevel); err != nil {
		return fmt.Errorf("read wal_level: %w", err)
	}
	var problems []string
	if walLevel != "logical" {
		problems = append(problems, fmt.Sprintf("wal_level is %q: set wal_level = logical and restart PostgreSQL", walLevel))
	}
	var canReplicate bool
	if err := conn.QueryRow(ctx, `SELECT rolsuper OR rolreplication FROM pg_roles WHERE rolname = current_user`).Scan(&canReplicate); err != nil {
		return fmt.Errorf("read role attributes: %w", err)
	}
	if !canReplicate {
		problems = append(problems, "the user lacks the REPLICATION attribute: ALTER ROLE <user> WITH REPLICATION")
	}
	if len(problems) > 0 {
		return fmt.Errorf("postgres prerequisites:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}
