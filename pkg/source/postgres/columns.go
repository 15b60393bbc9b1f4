package postgres

import (
	"fmt"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
)

// Columns left out or masked (source.exclude_columns, source.mask_columns;
// docs/configuration.md, "Choosing tables and columns") are dealt with
// where values are read: the snapshot does not select an excluded column,
// and the stream decoder skips it and masks a masked one before a Value
// exists, so the original value never reaches the encoder.

// projection maps a relation's columns (the order pgoutput sends them)
// to its table's.
type projection struct {
	out   []int          // per relation column: its index in the table, -1 when excluded
	kept  []int          // per table column: its relation column
	masks []*config.Mask // per table column; nil when not masked
}

// columnProblems names the key columns of r the selection would exclude
// or mask: a key must identify the row, so start refuses them.
func columnProblems(r *relation, sel *config.Selection) []string {
	var out []string
	for _, k := range r.key {
		switch excluded, mask := sel.Column(r.fullName(), k); {
		case excluded:
			out = append(out, fmt.Sprintf("source.exclude_columns: %s.%s is a key column of %s (its primary key or replica identity), which every message's key carries; narrow the pattern so that it leaves the key out", r.fullName(), k, r.fullName()))
		case mask != nil:
			out = append(out, fmt.Sprintf("source.mask_columns: %s.%s is a key column of %s (its primary key or replica identity), which every message's key carries unmasked; narrow the pattern so that it leaves the key out", r.fullName(), k, r.fullName()))
		}
	}
	return out
}

// maskedColumn is col as a masked column publishes it: a string (of the
// value's text, hashed or replaced) without the schema default, which
// would show a value of the column.
func maskedColumn(col change.Column) change.Column {
	length := -1
	if col.Type.Kind == change.KindString {
		length = col.Type.Length
	}
	col.Type = change.Type{Kind: change.KindString, Name: col.Type.Name, Precision: -1, Scale: -1, Length: length}
	col.Default, col.Masked = nil, true
	return col
}

// maskValue is the masked value of a column's text; null when null is
// set, which a fixed replacement replaces too.
func maskValue(m *config.Mask, col *change.Column, text []byte, null bool) change.Value {
	if null {
		if s, fixed := m.Null(); fixed {
			return change.TextValue(s)
		}
		return change.Value{}
	}
	return change.TextValue(m.Apply(text, max(col.Type.Length, 0)))
}

// project computes r's projection under sel. It applies the rules to key
// columns too: a table whose key they touch is refused before it is
// captured (columnProblems), and whatever happens, a value is never
// published that the rules leave out or mask.
func (r *relation) project(sel *config.Selection) {
	p := projection{out: make([]int, len(r.columns))}
	for i, c := range r.columns {
		excluded, mask := sel.Column(r.fullName(), c.name)
		if excluded {
			p.out[i] = -1
			continue
		}
		p.out[i] = len(p.kept)
		p.kept = append(p.kept, i)
		p.masks = append(p.masks, mask)
	}
	r.proj = p
}
