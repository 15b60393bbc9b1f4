package source

import (
	"fmt"
	"slices"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
)

// Columns left out or masked (source.exclude_columns, source.mask_columns;
// docs/configuration.md, "Choosing tables and columns") are dealt with by
// each driver where it reads values: the snapshot does not select an
// excluded column, and the decoders mask a value before the row reaches
// the encoder. These are the rules they share.

// Projection maps a table's columns as the source reads them to the
// columns it publishes.
type Projection struct {
	Out   []int          // per source column: its index in the published table, -1 when excluded
	Kept  []int          // per published column: its source column
	Masks []*config.Mask // per published column; nil when not masked
}

// Project is the projection of table's columns (names in the source's
// order) under sel. The rules apply to key columns too: a table whose key
// they touch is refused before it is captured (ColumnProblems), and
// whatever happens, a value the rules leave out or mask is never
// published.
func Project(sel *config.Selection, table string, columns []string) Projection {
	p := Projection{Out: make([]int, len(columns))}
	for i, name := range columns {
		excluded, mask := sel.Column(table, name)
		if excluded {
			p.Out[i] = -1
			continue
		}
		p.Out[i] = len(p.Kept)
		p.Kept = append(p.Kept, i)
		p.Masks = append(p.Masks, mask)
	}
	return p
}

// ColumnProblems names what a driver refuses in the selection's rules for
// table (its columns in the source's order, key the names of its key
// columns): a key column excluded or masked, since the key must identify
// the row, and a masked column that is not a character column (Debezium
// masks only those and passes any other through unmasked; Tributary
// refuses rather than publish it).
func ColumnProblems(sel *config.Selection, table string, key []string, columns []change.Column) []string {
	var out []string
	for _, c := range columns {
		excluded, mask := sel.Column(table, c.Name)
		isKey := slices.Contains(key, c.Name)
		switch {
		case excluded && isKey:
			out = append(out, fmt.Sprintf("source.exclude_columns: %s.%s is a key column of %s, which every message's key carries; narrow the pattern so that it leaves the key out", table, c.Name, table))
		case mask != nil && isKey:
			out = append(out, fmt.Sprintf("source.mask_columns: %s.%s is a key column of %s, which every message's key carries unmasked; narrow the pattern so that it leaves the key out", table, c.Name, table))
		case mask != nil && c.Type.Kind != change.KindString:
			out = append(out, fmt.Sprintf("source.mask_columns: %s.%s is of type %s; only character columns can be masked (char, varchar, text); leave it out with source.exclude_columns instead", table, c.Name, c.Type.Name))
		}
	}
	return out
}

// MaskedColumn is col as a masked column publishes it: a string (its
// text hashed or replaced) without the schema default, which would show a
// value of the column. (A column of another type is refused first:
// ColumnProblems.)
func MaskedColumn(col change.Column) change.Column {
	if col.Type.Kind != change.KindString {
		col.Type = change.Type{Kind: change.KindString, Name: col.Type.Name, Precision: -1, Scale: -1, Length: -1}
	}
	col.Default, col.Masked = nil, true
	return col
}

// MaskValue is the masked value of a column (a MaskedColumn) whose text is
// text, or which is null; a fixed replacement replaces a null too.
func MaskValue(m *config.Mask, col *change.Column, text []byte, null bool) change.Value {
	if null {
		if s, fixed := m.Null(); fixed {
			return change.TextValue(s)
		}
		return change.Value{}
	}
	return change.TextValue(m.Apply(text, max(col.Type.Length, 0)))
}
