package mongodb

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Arrays holding documents or arrays under format.unwrap. Debezium's
// MongoDataConverter (array.encoding array) is irregular here, and the
// output must match it byte for byte, so this follows its steps rather
// than a summary of them:
//
//   - Reading the document, each array becomes its unified element
//     schema: its nested arrays (each read the same way), then the
//     documents' fields merged, then its other elements. The merge keeps
//     a field where it first appears but the value of its last
//     appearance (a sub-document's fields are not merged); a field whose
//     types disagree fails, except that a non-empty sub-document replaces
//     what came before; a field of a type the transform has no schema for
//     (undefined, regex, MinKey…) fails.
//   - The array's schema is taken from the first of those parts that
//     gives one: array<array<T>> from a nested array's elements (a third
//     level of arrays fails), array<struct> from the merged fields,
//     array<T> from the other elements (all of one type); an array of
//     nothing but empty documents is array<string>, one of nothing but
//     empty arrays gets no field, and the record fails.
//   - The values are then built against that schema and validated as
//     Kafka Connect's Struct.put does: an element that does not fit
//     (a document where the schema says string, a field the struct lacks,
//     a number in a string array…) fails the record; a struct is written
//     in its schema's field order with null for a field the element
//     lacks; an empty array inside an array is dropped.

// pval is a value as the converter reads it before building a schema: a
// document's fields, an array's unified element schema, or the value.
type pval struct {
	v       bson.RawValue
	relaxed bool
	doc     []pfield
	arr     *parr
}

type pfield struct {
	name string
	v    pval
}

// parr is an array's unified element schema.
type parr struct {
	nested  []*parr
	doc     []pfield // the merged fields of the documents
	scalars []pval
}

func (a *parr) empty() bool {
	return len(a.nested) == 0 && len(a.doc) == 0 && len(a.scalars) == 0
}

var (
	// The schemas the converter compares when merging the documents of
	// an array: any array is array<string>, any document an empty struct.
	uAnyArray    = &uschema{typ: "array", optional: true, items: uString}
	uAnyDocument = &uschema{typ: "struct", optional: true}
)

// complexArray reports whether vals holds a document or an array.
func complexArray(vals []bson.RawValue) bool {
	return slices.ContainsFunc(vals, func(v bson.RawValue) bool {
		return v.Type == bson.TypeEmbeddedDocument || v.Type == bson.TypeArray
	})
}

func parseValue(v bson.RawValue, relaxed bool, path string) (pval, error) {
	p := pval{v: v, relaxed: relaxed}
	var err error
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		p.doc, err = parseDoc(v.Document(), relaxed, path)
	case bson.TypeArray:
		p.arr, err = parseArray(v.Array(), relaxed, path)
	case bson.TypeCodeWithScope, bson.TypeDBPointer:
		err = fmt.Errorf("%s: a %s: %w", path, typeName(v.Type), ErrUnwrapNotBuilt)
	}
	return p, err
}

func parseDoc(doc bson.Raw, relaxed bool, path string) ([]pfield, error) {
	es, err := elems(doc, relaxed)
	if err != nil {
		return nil, err
	}
	out := make([]pfield, 0, len(es))
	for _, e := range es {
		if slices.ContainsFunc(out, func(f pfield) bool { return f.name == e.name }) {
			continue
		}
		p, err := parseValue(e.v, relaxed, path+"."+e.name)
		if err != nil {
			return nil, err
		}
		out = append(out, pfield{e.name, p})
	}
	return out, nil
}

func parseArray(arr bson.RawArray, relaxed bool, path string) (*parr, error) {
	vals, err := arr.Values()
	if err != nil {
		return nil, err
	}
	a := &parr{}
	var seen map[string][]*uschema // the merge's schemas of each field
	for i, v := range vals {
		at := path + "[" + strconv.Itoa(i) + "]"
		switch v.Type {
		case bson.TypeArray:
			sub, err := parseArray(v.Array(), relaxed, at)
			if err != nil {
				return nil, err
			}
			a.nested = append(a.nested, sub)
		case bson.TypeEmbeddedDocument:
			fields, err := parseDoc(v.Document(), relaxed, at)
			if err != nil {
				return nil, err
			}
			if seen == nil {
				seen = map[string][]*uschema{}
			}
			if err := a.merge(fields, seen, at); err != nil {
				return nil, err
			}
		case bson.TypeCodeWithScope, bson.TypeDBPointer:
			return nil, fmt.Errorf("%s: a %s: %w", at, typeName(v.Type), ErrUnwrapNotBuilt)
		default:
			a.scalars = append(a.scalars, pval{v: v, relaxed: relaxed})
		}
	}
	return a, nil
}

// merge adds the fields of one element document to the merged fields.
func (a *parr) merge(fields []pfield, seen map[string][]*uschema, path string) error {
	for _, f := range fields {
		c := mergeSchema(f.v)
		if c == nil {
			return fmt.Errorf("%s.%s: Debezium's ExtractNewDocumentState fails on a field of type %s in a document in an array",
				path, f.name, typeName(f.v.v.Type))
		}
		cs := seen[f.name]
		if !slices.Contains(cs, c) {
			cs = append(cs, c)
			seen[f.name] = cs
		}
		if (f.v.v.Type != bson.TypeEmbeddedDocument || len(f.v.doc) == 0) && len(cs) > 1 {
			return fmt.Errorf("%s.%s: Debezium's ExtractNewDocumentState fails on the documents of an array whose field %q mixes types",
				path, f.name, f.name)
		}
		if i := slices.IndexFunc(a.doc, func(g pfield) bool { return g.name == f.name }); i >= 0 {
			a.doc[i].v = f.v
		} else {
			a.doc = append(a.doc, f)
		}
	}
	return nil
}

// mergeSchema is the converter's getSchema, nil where it has none.
func mergeSchema(p pval) *uschema {
	switch p.v.Type {
	case bson.TypeArray:
		return uAnyArray
	case bson.TypeEmbeddedDocument:
		return uAnyDocument
	}
	return scalar(p.v, p.relaxed)
}

func (s *uschema) has(name string) bool {
	return slices.ContainsFunc(s.fields, func(f ufield) bool { return f.name == name })
}

// addField adds the field key of the struct b, whose children are named
// prefix.<field> (prefix "null" for an unnamed struct, as Java
// concatenates a null name), unless b has it already.
func addField(b *uschema, prefix, key string, p pval, path string) error {
	if b.has(key) {
		return nil
	}
	var s *uschema
	switch p.v.Type {
	case bson.TypeRegex:
		s = uRegex
	case bson.TypeEmbeddedDocument:
		if len(p.doc) == 0 {
			s = &uschema{typ: "struct", optional: true}
			break
		}
		name := prefix + "." + key
		s = &uschema{typ: "struct", name: name, optional: true}
		for _, f := range p.doc {
			if err := addField(s, name, f.name, f.v, path+"."+f.name); err != nil {
				return err
			}
		}
	case bson.TypeArray:
		var err error
		if s, err = arraySchema(prefix+"."+key, p.arr, path); err != nil {
			return err
		}
	default:
		s = scalar(p.v, p.relaxed)
	}
	if s == nil {
		// No field: the record fails when its value is put, unless the
		// value is undefined, which the transform leaves out.
		return nil
	}
	if key == "" {
		return fmt.Errorf("%s: a field with an empty name: Debezium's ExtractNewDocumentState fails on it", path)
	}
	b.fields = append(b.fields, ufield{key, s})
	return nil
}

// arraySchema is the schema of an array field whose struct child is
// named name; nil when the converter gives the field none.
func arraySchema(name string, a *parr, path string) (*uschema, error) {
	if a.empty() {
		return &uschema{typ: "array", optional: true, items: uString}, nil
	}
	var got *uschema
	for _, n := range a.nested {
		if err := nestedSchema(n, &got, path); err != nil {
			return nil, err
		}
	}
	if len(a.doc) > 0 {
		s, err := mergedStruct(name, name, a.doc, path)
		if err != nil {
			return nil, err
		}
		if len(s.fields) > 0 && got == nil {
			got = &uschema{typ: "array", optional: true, items: s}
		}
	}
	if len(a.scalars) > 0 && got == nil {
		items, err := scalarItems(a.scalars, path)
		if err != nil {
			return nil, err
		}
		got = &uschema{typ: "array", optional: true, items: items}
	}
	return got, nil
}

// nestedSchema sets *got, unless set, from an array inside the array:
// array<array<T>>. Its structs are unnamed.
func nestedSchema(a *parr, got **uschema, path string) error {
	if len(a.nested) > 0 && *got == nil {
		return fmt.Errorf("%s: Debezium's ExtractNewDocumentState fails on arrays nested three deep", path)
	}
	nest := func(items *uschema) *uschema {
		return &uschema{typ: "array", optional: true, items: &uschema{typ: "array", optional: true, items: items}}
	}
	if len(a.doc) > 0 {
		s, err := mergedStruct("", "null", a.doc, path)
		if err != nil {
			return err
		}
		if len(s.fields) > 0 && *got == nil {
			*got = nest(s)
		}
	}
	if len(a.scalars) > 0 && *got == nil {
		items, err := scalarItems(a.scalars, path)
		if err != nil {
			return err
		}
		*got = nest(items)
	}
	return nil
}

func mergedStruct(name, prefix string, fields []pfield, path string) (*uschema, error) {
	s := &uschema{typ: "struct", name: name, optional: true}
	for _, f := range fields {
		if err := addField(s, prefix, f.name, f.v, path+"[]."+f.name); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// scalarItems is the element schema of an array's other elements, which
// must all have one.
func scalarItems(vals []pval, path string) (*uschema, error) {
	var items *uschema
	for _, v := range vals {
		s := scalar(v.v, v.relaxed)
		if s == nil {
			return nil, fmt.Errorf("%s: Debezium's ExtractNewDocumentState fails on an array element of type %s", path, typeName(v.v.Type))
		}
		if items != nil && items != s {
			return nil, fmt.Errorf("%s: Debezium's ExtractNewDocumentState fails on an array whose elements mix types (%s and %s)", path, items.typ, s.typ)
		}
		items = s
	}
	return items, nil
}

// A Connect value as the converter builds it: nil, jscalar, jstr,
// *jstruct or jlist.
type jval any

type jscalar struct {
	v       bson.RawValue
	relaxed bool
}

type jstr string

type jstruct struct {
	s    *uschema
	vals []jval
}

type jlist []jval

// errNoFit is a value Kafka Connect refuses for its schema.
var errNoFit = errors.New("Debezium's ExtractNewDocumentState fails on it")

// appendArray writes a non-empty array holding documents or arrays, the
// value of a field of schema s.
func appendArray(b []byte, vals []bson.RawValue, relaxed bool, s *uschema) ([]byte, error) {
	as := s
	if s.typ == "array" {
		as = s.items
	}
	l, err := buildArray(vals, relaxed, as, "")
	if err == nil {
		err = fits(s, l, "")
	}
	if err != nil {
		return b, err
	}
	return appendJVal(b, s, l), nil
}

func buildArray(vals []bson.RawValue, relaxed bool, as *uschema, path string) (jlist, error) {
	out := jlist{}
	for i, v := range vals {
		at := path + "[" + strconv.Itoa(i) + "]"
		switch v.Type {
		case bson.TypeArray:
			inner, err := v.Array().Values()
			if err != nil {
				return nil, err
			}
			sub := jlist{}
			for j, e := range inner {
				at := at + "[" + strconv.Itoa(j) + "]"
				switch e.Type {
				case bson.TypeArray:
					// The element schema is passed down as it is.
					vs, err := e.Array().Values()
					if err != nil {
						return nil, err
					}
					x, err := buildArray(vs, relaxed, as, at)
					if err != nil {
						return nil, err
					}
					sub = append(sub, x)
				case bson.TypeEmbeddedDocument:
					if as.typ != "array" {
						return nil, fmt.Errorf("%s: a document where the schema has %s: %w", at, as.typ, errNoFit)
					}
					st, err := buildStruct(e.Document(), relaxed, as.items, at)
					if err != nil {
						return nil, err
					}
					sub = append(sub, st)
				default:
					sub = append(sub, object(e, relaxed))
				}
			}
			if len(sub) > 0 {
				out = append(out, sub)
			}
		case bson.TypeEmbeddedDocument:
			st, err := buildStruct(v.Document(), relaxed, as, at)
			if err != nil {
				return nil, err
			}
			out = append(out, st)
		default:
			out = append(out, object(v, relaxed))
		}
	}
	return out, nil
}

// buildStruct is a document as a struct of schema s.
func buildStruct(doc bson.Raw, relaxed bool, s *uschema, path string) (*jstruct, error) {
	if s.typ != "struct" {
		return nil, fmt.Errorf("%s: a document where the schema has %s: %w", path, s.typ, errNoFit)
	}
	fields, err := elems(doc, relaxed)
	if err != nil {
		return nil, err
	}
	st := &jstruct{s: s, vals: make([]jval, len(s.fields))}
	var seen []string
	for _, f := range fields {
		if slices.Contains(seen, f.name) {
			continue
		}
		seen = append(seen, f.name)
		at := path + "." + f.name
		var v jval
		switch f.v.Type {
		case bson.TypeUndefined:
			continue
		case bson.TypeRegex:
			fs := s.field(f.name)
			if fs == nil || fs.typ != "struct" {
				return nil, fmt.Errorf("%s: a regex the schema has no struct for: %w", at, errNoFit)
			}
			pattern, options := f.v.Regex()
			rs := &jstruct{s: fs, vals: make([]jval, len(fs.fields))}
			if err := rs.put("regex", jstr(pattern), at); err != nil {
				return nil, err
			}
			if err := rs.put("options", jstr(sortedOptions(options)), at); err != nil {
				return nil, err
			}
			v = rs
		case bson.TypeArray:
			vals, err := f.v.Array().Values()
			if err != nil {
				return nil, err
			}
			if len(vals) == 0 {
				v = jlist{}
				break
			}
			fs := s.field(f.name)
			if fs == nil {
				return nil, fmt.Errorf("%s: an array the schema has no field for: %w", at, errNoFit)
			}
			as := fs
			if fs.typ == "array" {
				as = fs.items
			}
			if v, err = buildArray(vals, f.relaxed, as, at); err != nil {
				return nil, err
			}
		case bson.TypeEmbeddedDocument:
			fs := s.field(f.name)
			if fs == nil {
				return nil, fmt.Errorf("%s: a document the schema has no field for: %w", at, errNoFit)
			}
			if v, err = buildStruct(f.v.Document(), f.relaxed, fs, at); err != nil {
				return nil, err
			}
		default:
			v = object(f.v, f.relaxed)
		}
		if err := st.put(f.name, v, at); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (s *uschema) field(name string) *uschema {
	for _, f := range s.fields {
		if f.name == name {
			return f.s
		}
	}
	return nil
}

// put is Struct.put: the field must exist and take the value.
func (st *jstruct) put(name string, v jval, path string) error {
	i := slices.IndexFunc(st.s.fields, func(f ufield) bool { return f.name == name })
	if i < 0 {
		return fmt.Errorf("%s: a field the array's merged schema lacks: %w", path, errNoFit)
	}
	if err := fits(st.s.fields[i].s, v, path); err != nil {
		return err
	}
	st.vals[i] = v
	return nil
}

// object is the converter's value for a scalar; nil for the types it
// has none for.
func object(v bson.RawValue, relaxed bool) jval {
	switch v.Type {
	case bson.TypeString, bson.TypeObjectID, bson.TypeDecimal128, bson.TypeDouble, bson.TypeBinary, bson.TypeInt32,
		bson.TypeInt64, bson.TypeBoolean, bson.TypeDateTime, bson.TypeTimestamp, bson.TypeJavaScript:
		return jscalar{v, relaxed}
	}
	return nil
}

// javaClass is the class of the Java object the converter holds for v.
func javaClass(v jval) string {
	switch v := v.(type) {
	case jstr:
		return "String"
	case *jstruct:
		return "Struct"
	case jlist:
		return "List"
	case jscalar:
		switch v.v.Type {
		case bson.TypeString, bson.TypeObjectID, bson.TypeDecimal128, bson.TypeJavaScript:
			return "String"
		case bson.TypeDouble:
			return "Double"
		case bson.TypeBinary:
			return "byte[]"
		case bson.TypeInt32:
			return "Integer"
		case bson.TypeInt64:
			if n := v.v.Int64(); v.relaxed && n >= math.MinInt32 && n <= math.MaxInt32 {
				return "Integer"
			}
			return "Long"
		case bson.TypeBoolean:
			return "Boolean"
		case bson.TypeDateTime, bson.TypeTimestamp:
			return "Date"
		}
	}
	return ""
}

// schemaClass is the class Kafka Connect expects for a value of s.
func schemaClass(s *uschema) string {
	if s.name == uTimestamp.name {
		return "Date"
	}
	switch s.typ {
	case "int32":
		return "Integer"
	case "int64":
		return "Long"
	case "double":
		return "Double"
	case "boolean":
		return "Boolean"
	case "string":
		return "String"
	case "bytes":
		return "byte[]"
	case "array":
		return "List"
	case "struct":
		return "Struct"
	}
	return s.typ
}

// fits is ConnectSchema.validateValue.
func fits(s *uschema, v jval, path string) error {
	if v == nil {
		if !s.optional {
			return fmt.Errorf("%s: a null where the schema is required: %w", path, errNoFit)
		}
		return nil
	}
	if got, want := javaClass(v), schemaClass(s); got != want {
		return fmt.Errorf("%s: a %s where the schema has %s: %w", path, got, want, errNoFit)
	}
	switch v := v.(type) {
	case *jstruct:
		if !sameSchema(v.s, s) {
			return fmt.Errorf("%s: a struct of another schema: %w", path, errNoFit)
		}
	case jlist:
		for i, e := range v {
			if err := fits(s.items, e, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	}
	return nil
}

func sameSchema(a, b *uschema) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.typ != b.typ || a.name != b.name || a.version != b.version || a.optional != b.optional ||
		len(a.fields) != len(b.fields) || !sameSchema(a.items, b.items) {
		return false
	}
	for i, f := range a.fields {
		if f.name != b.fields[i].name || !sameSchema(f.s, b.fields[i].s) {
			return false
		}
	}
	return true
}

// appendJVal writes v as the JsonConverter does for schema s: a struct
// in its schema's field order, null for a field not set.
func appendJVal(b []byte, s *uschema, v jval) []byte {
	switch v := v.(type) {
	case jscalar:
		return appendScalar(b, v.v)
	case jstr:
		return appendJackson(b, string(v))
	case *jstruct:
		b = append(b, '{')
		for i, f := range v.s.fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJackson(b, f.name)
			b = append(b, ':')
			b = appendJVal(b, f.s, v.vals[i])
		}
		return append(b, '}')
	case jlist:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJVal(b, s.items, e)
		}
		return append(b, ']')
	}
	return append(b, "null"...)
}
