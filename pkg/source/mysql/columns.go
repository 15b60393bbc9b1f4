package mysql

import (
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

// columnProblems is source.ColumnProblems for t's current shape, one error.
func (s *Source) columnProblems(t *table) error {
	if !s.sel.HasColumnRules() || t.t == nil {
		return nil
	}
	var key []string
	for _, k := range t.key {
		key = append(key, t.cols[k].name)
	}
	if p := source.ColumnProblems(s.sel, t.id(), key, t.t.Columns); len(p) > 0 {
		return fmt.Errorf("%s", strings.Join(p, "; "))
	}
	return nil
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
