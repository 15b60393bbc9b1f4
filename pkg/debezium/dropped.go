package debezium

import "github.com/tributary-cdc/tributary/pkg/change"

// columnSchema is the package's columnSchema in the encoder's Format, with
// its handling of unknown types: with IncludeUnknownTypes, a column of a type it cannot
// encode is published as Debezium's include.unknown.datatypes publishes
// it, as bytes (the source's text form, which the source hands over as a
// Binary value), in binary.handling.mode's form.
func (e *Encoder) columnSchema(col *change.Column) (connectSchema, colEnc, bool) {
	s, enc, ok := columnSchema(col)
	if ok {
		enc = e.format.formatSchema(&col.Type, &s, enc)
		if enc == encArray {
			// The elements' schema; newColPlan picks their encoding.
			e.format.formatSchema(col.Type.Elem, s.items, 0)
		}
		return s, enc, ok
	}
	if !e.includeUnknown || col.Type.Kind != change.KindUnknown {
		return s, enc, ok
	}
	// Bytes as a bytea column's, in the binary mode's schema and encoding
	// as well (verified side by side: integration/scenario/review_format_test.go).
	s = connectSchema{typ: "bytes", optional: col.Optional}
	return s, e.format.formatSchema(&change.Type{Kind: change.KindBytes}, &s, encBytes), true
}

// Dropped returns the columns of t that the encoder leaves out of every
// message: types it cannot encode (unless IncludeUnknownTypes) and the
// ones Debezium itself drops (arrays of points, multi-dimensional
// arrays). The pipeline reports them, so that no column goes missing
// silently.
func (e *Encoder) Dropped(t *change.Table) []change.Column {
	var out []change.Column
	for i := range t.Columns {
		if _, _, ok := e.columnSchema(&t.Columns[i]); !ok {
			out = append(out, t.Columns[i])
		}
	}
	return out
}
