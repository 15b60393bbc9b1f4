package mysql

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// Columns left out or masked (pkg/source/columns.go): a table's shapes
// (describe, shapeFor, the schema history) keep every column, as the
// binlog and the catalog list them; what is published is their
// projection, which published builds once per shape. The decoders skip an
// excluded column and mask a masked one before the row is handed on; the
// snapshot does not select an excluded column.

// projected is a shape as published: its table and projection.
type projected struct {
	t    *change.Table
	proj source.Projection
}

// published returns the published form of t's shape; nil when no column
// rule applies (the shape is published as it is).
func (s *Source) published(t *table) *projected {
	full := t.t
	if !s.sel.HasColumnRules() || full == nil {
		return nil
	}
	if p, ok := s.projections.Load(full); ok {
		return p.(*projected)
	}
	names := make([]string, len(full.Columns))
	for i, c := range full.Columns {
		names[i] = c.Name
	}
	p := &projected{proj: source.Project(s.sel, full.ID.DB+"."+full.ID.Name, names)}
	p.t = &change.Table{ID: full.ID, Version: full.Version}
	for j, i := range p.proj.Kept {
		col := full.Columns[i]
		if p.proj.Masks[j] != nil {
			col = source.MaskedColumn(col)
			if i < len(t.cols) {
				col.Type.Length = declaredLength(t.cols[i].columnType)
			}
		}
		p.t.Columns = append(p.t.Columns, col)
	}
	for _, k := range full.Key {
		if j := p.proj.Out[k]; j >= 0 {
			p.t.Key = append(p.t.Key, j)
		}
	}
	actual, _ := s.projections.LoadOrStore(full, p)
	return actual.(*projected)
}

// columnProblems is source.ColumnProblems for t's current shape, as one
// error.
func (s *Source) columnProblems(t *table) error {
	if p := s.columnProblemList(t); len(p) > 0 {
		return fmt.Errorf("%s", strings.Join(p, "; "))
	}
	return nil
}

func (s *Source) columnProblemList(t *table) []string {
	if t.t == nil {
		return nil
	}
	problems := unencodableKey(t, s.opts.Config.IncludeUnknownTypes)
	if !s.sel.HasColumnRules() {
		return problems
	}
	var key []string
	for _, k := range t.key {
		key = append(key, t.cols[k].name)
	}
	return append(problems, source.ColumnProblems(s.sel, t.id(), key, t.t.Columns)...)
}

// unencodableKey names the key columns of t whose type Tributary cannot
// encode (published only as bytes, with include_unknown_types). Such a
// column is never left out of the key, as Debezium leaves it out: rows
// that differ only there would share a key, and a compacted topic or a
// sink would keep one of them. The table is refused instead.
func unencodableKey(t *table, includeUnknown bool) []string {
	if includeUnknown {
		return nil
	}
	var out []string
	for _, k := range t.key {
		if c := &t.cols[k]; c.typ.Kind == change.KindUnknown {
			out = append(out, fmt.Sprintf("%s.%s is a key column of type %s, which Tributary cannot encode, and messages keyed without it would give rows that differ only there one key; set source.include_unknown_types: true to publish it as bytes, or leave the table out of source.tables", t.id(), c.name, c.columnType))
		}
	}
	return out
}

// table is the published table of full under p.
func (p *projected) table(full *change.Table) *change.Table {
	if p == nil {
		return full
	}
	return p.t
}

// declaredLength is the length a CHAR(n) or VARCHAR(n) declares, which
// Debezium cuts a hash to; -1 for other types.
func declaredLength(columnType string) int {
	name, rest, ok := strings.Cut(columnType, "(")
	if !ok || name != "char" && name != "varchar" {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(rest, ")", 2)[0]))
	if err != nil {
		return -1
	}
	return n
}

var _ source.Lister = (*Source)(nil)

// Tables implements source.Lister.
func (s *Source) Tables(ctx context.Context) (source.Inventory, error) {
	var inv source.Inventory
	conn, err := s.connect(ctx)
	if err != nil {
		return inv, err
	}
	defer conn.Close()
	if s.flavor, err = detectFlavor(conn); err != nil {
		return inv, err
	}
	r, err := conn.Execute(`SELECT t.TABLE_SCHEMA, t.TABLE_NAME, IFNULL(t.TABLE_ROWS, -1) FROM information_schema.TABLES t WHERE t.TABLE_TYPE = 'BASE TABLE'
  AND t.TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')`)
	if err != nil {
		return inv, fmt.Errorf("list tables: %w", err)
	}
	estimate := map[string]int64{}
	for i := range r.Values {
		db, _ := r.GetString(i, 0)
		name, _ := r.GetString(i, 1)
		n, _ := r.GetInt(i, 2)
		id := db + "." + name
		inv.Existing = append(inv.Existing, id)
		estimate[id] = n
	}
	tables, err := s.selectTables(conn)
	if err != nil {
		return inv, err
	}
	var ids []string
	for _, t := range tables {
		ids = append(ids, t.id())
	}
	for _, name := range s.sel.PlainNames() {
		if _, ok := estimate[name]; !ok {
			inv.Missing = append(inv.Missing, name)
		}
	}
	inv.Unmatched = s.sel.Unmatched(ids)
	for _, t := range tables {
		pub := s.published(t)
		info := source.TableInfo{Table: pub.table(t.t), RowEstimate: -1}
		if n, ok := estimate[t.id()]; ok {
			info.RowEstimate = n
		}
		if pub != nil {
			for i, c := range t.cols {
				if j := pub.proj.Out[i]; j < 0 {
					info.Excluded = append(info.Excluded, c.name)
				} else if m := pub.proj.Masks[j]; m != nil {
					info.Masked = append(info.Masked, c.name+": "+m.Describe())
				}
			}
		}
		info.Problems = s.columnProblemList(t)
		if len(info.Problems) > 0 && !s.sel.Named(t.id()) {
			// Left out by run (Discover), not refused.
			inv.LeftOut = append(inv.LeftOut, "left out, its key cannot be published whole: "+t.id()+" ("+strings.Join(info.Problems, "; ")+")")
			continue
		}
		inv.Tables = append(inv.Tables, info)
	}
	return inv, nil
}
