package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// Columns left out or masked (pkg/source/columns.go) are dealt with where
// values are read: the snapshot does not select an excluded column, and
// the stream decoder skips it and masks a masked one before a Value
// exists, so the original value never reaches the encoder.

// columnProblems names what the selection's column rules would do wrong
// to r (source.ColumnProblems): exclude or mask a column of its key (its
// primary key or replica identity), or mask a column that is not text.
func columnProblems(r *relation, sel *config.Selection) []string {
	if !sel.HasColumnRules() {
		return nil
	}
	cols := make([]change.Column, len(r.columns))
	for i := range r.columns {
		cols[i] = change.Column{Name: r.columns[i].name, Type: r.columns[i].changeType()}
	}
	return source.ColumnProblems(sel, r.fullName(), r.key, cols)
}

// project computes r's projection under sel.
func (r *relation) project(sel *config.Selection) {
	names := make([]string, len(r.columns))
	for i, c := range r.columns {
		names[i] = c.name
	}
	r.proj = source.Project(sel, r.fullName(), names)
}

var _ source.Lister = (*Source)(nil)

// Tables implements source.Lister.
func (s *Source) Tables(ctx context.Context) (source.Inventory, error) {
	var inv source.Inventory
	conn, err := pgx.ConnectConfig(ctx, s.connCfg)
	if err != nil {
		return inv, fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rels, missing, err := selectedTables(ctx, conn, s.sel)
	if err != nil {
		return inv, err
	}
	inv.Missing, inv.Unmatched = missing, s.sel.Unmatched(names(rels))
	if inv.Existing, err = existingTables(ctx, conn); err != nil {
		return inv, err
	}
	identities := map[string]string{"d": "default", "f": "full", "i": "index", "n": "nothing"}
	for _, r := range rels {
		info := source.TableInfo{Table: r.table(s.connCfg.Database, nil, s.sel), ReplicaIdentity: identities[r.replident], RowEstimate: -1}
		var n float64
		if err := conn.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = $1`, r.oid).Scan(&n); err == nil && n >= 0 {
			info.RowEstimate = int64(n)
		}
		for i, c := range r.columns {
			if j := r.proj.Out[i]; j < 0 {
				info.Excluded = append(info.Excluded, c.name)
			} else if m := r.proj.Masks[j]; m != nil {
				info.Masked = append(info.Masked, c.name+": "+m.Describe())
			}
		}
		info.Problems = columnProblems(r, s.sel)
		if len(info.Problems) > 0 && !s.sel.Named(r.fullName()) {
			// Left out by run (identified), not refused.
			inv.LeftOut = append(inv.LeftOut, "left out, the column rules leave out or mask its key: "+r.fullName()+" ("+strings.Join(info.Problems, "; ")+")")
			continue
		}
		if r.noIdentity != "" {
			if !s.sel.Named(r.fullName()) {
				inv.LeftOut = append(inv.LeftOut, "left out, no replica identity: "+r.noIdentity)
				continue
			}
			detail, fix := identityProblem([]*relation{r})
			info.Problems = append(info.Problems, detail+"; fix: "+fix)
		}
		inv.Tables = append(inv.Tables, info)
	}
	return inv, nil
}

// existingTables names every table of the database (schema.table; a
// partition under its root), for "did you mean".
func existingTables(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r','p') AND NOT c.relispartition AND n.nspname NOT IN ('pg_catalog','information_schema') AND n.nspname NOT LIKE 'pg\_%'`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	return names, nil
}
