package postgres

import (
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
