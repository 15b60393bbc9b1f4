package mongodb

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Debezium's field.exclude.list and field.renames (its FieldSelector):
// entries <database>.<collection>.<field path>, the database and
// collection with * as a wildcard, matched case-insensitively; a rename is
// <path>:<new name> and renames the path's last field. They apply to the
// documents (after, before, snapshot reads), to an update's
// updatedFields (whose keys are dotted paths), and to the names in
// removedFields and truncatedArrays, as the connector applies them; the
// key is never changed. Where a rename meets a field already named as
// the new one, the connector fails, and so does the event here.

// FieldSelector is the compiled field.exclude.list and field.renames.
type FieldSelector struct {
	paths []fieldPath
}

type fieldPath struct {
	ns      *regexp.Regexp
	nodes   []string
	field   string // nodes joined by "."
	rename  bool
	newNode string // the new name of the last node
	newPath string // field with its last node renamed
}

// ErrFieldExists is a rename onto a name the document already has.
var ErrFieldExists = errors.New("the document already has the field a rename gives")

// NewFieldSelector compiles the lists; every bad entry is reported, by
// list and index.
func NewFieldSelector(exclude, renames []string) (*FieldSelector, error) {
	var s FieldSelector
	var errs []error
	for i, e := range exclude {
		p, err := parseFieldPath(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("field.exclude.list entry %d: %w", i+1, err))
			continue
		}
		s.paths = append(s.paths, p)
	}
	for i, r := range renames {
		parts := strings.Split(strings.TrimSpace(r), ":")
		if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			errs = append(errs, fmt.Errorf("field.renames entry %d: %q: must be <database>.<collection>.<field path>:<new name>", i+1, r))
			continue
		}
		p, err := parseFieldPath(parts[0])
		if err != nil {
			errs = append(errs, fmt.Errorf("field.renames entry %d: %w", i+1, err))
			continue
		}
		p.rename, p.newNode = true, parts[1]
		newPath := slices.Clone(p.nodes)
		newPath[len(newPath)-1] = parts[1]
		p.newPath = strings.Join(newPath, ".")
		s.paths = append(s.paths, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &s, nil
}

func parseFieldPath(e string) (fieldPath, error) {
	nodes := strings.Split(strings.TrimSpace(e), ".")
	if len(nodes) < 3 || slices.Contains(nodes, "") {
		return fieldPath{}, fmt.Errorf("%q: must be <database>.<collection>.<field path>", e)
	}
	wild := func(s string) string { return strings.ReplaceAll(s, "*", ".*") }
	ns, err := regexp.Compile(`(?i)^(?:` + wild(nodes[0]) + `\.` + wild(nodes[1]) + `)$`)
	if err != nil {
		return fieldPath{}, fmt.Errorf("%q: the database and collection do not compile as a pattern: %v", e, err)
	}
	return fieldPath{ns: ns, nodes: nodes[2:], field: strings.Join(nodes[2:], ".")}, nil
}

// fieldFilter is the paths that apply to one collection.
type fieldFilter []fieldPath

// For is the filter of db.coll; nil when no path applies.
func (s *FieldSelector) For(db, coll string) fieldFilter {
	if s == nil {
		return nil
	}
	var f fieldFilter
	for _, p := range s.paths {
		if p.ns.MatchString(db + "." + coll) {
			f = append(f, p)
		}
	}
	return f
}

// Document applies the filter to a whole document.
func (f fieldFilter) Document(doc bson.Raw) (bson.Raw, error) {
	if len(f) == 0 || doc == nil {
		return doc, nil
	}
	d, err := parseMDoc(doc)
	if err != nil {
		return nil, err
	}
	for _, p := range f {
		if err := p.modifyFields(d, p.nodes, 0); err != nil {
			return nil, err
		}
	}
	return d.appendTo(nil), nil
}

// Change applies the filter to updatedFields, whose keys are dotted paths.
func (f fieldFilter) Change(doc bson.Raw) (bson.Raw, error) {
	if len(f) == 0 || doc == nil {
		return doc, nil
	}
	d, err := parseMDoc(doc)
	if err != nil {
		return nil, err
	}
	for _, p := range f {
		if err := p.modifyDotted(d); err != nil {
			return nil, err
		}
	}
	return d.appendTo(nil), nil
}

// Name is what becomes of a field name of removedFields or
// truncatedArrays: its new name, or ok false when it is left out. The
// first path the name leads to decides: a name is taken as leading to a
// path when its nodes, array indexes aside, are the path's first nodes.
func (f fieldFilter) Name(name string) (string, bool, error) {
	// The connector parses the name as it parses the paths: trimmed of
	// spaces and control characters at both ends (Java's String.trim).
	trimmed := strings.TrimFunc(name, func(r rune) bool { return r <= ' ' })
	if len(f) > 0 && slices.Contains(javaSplit(trimmed), "") {
		// The connector splits the name with the paths' own parser,
		// which refuses empty nodes, and fails.
		return "", false, fmt.Errorf("field name %q has an empty part: Debezium's connector fails on it (Invalid format)", name)
	}
	for _, p := range f {
		nodes := excludeNumeric(javaSplit(trimmed))
		if len(nodes) <= len(p.nodes) && slices.Equal(nodes, p.nodes[:len(nodes)]) {
			if !p.rename {
				return "", false, nil
			}
			return p.renameNodes(javaSplit(trimmed)), true, nil
		}
	}
	return name, true, nil
}

// Update applies the filter to an update description (a copy).
func (f fieldFilter) Update(u *UpdateDescription) (*UpdateDescription, error) {
	if len(f) == 0 || u == nil {
		return u, nil
	}
	out := &UpdateDescription{}
	var err error
	if out.UpdatedFields, err = f.Change(u.UpdatedFields); err != nil {
		return nil, err
	}
	for _, r := range u.RemovedFields {
		n, ok, err := f.Name(r)
		if err != nil {
			return nil, err
		}
		if ok {
			out.RemovedFields = append(out.RemovedFields, n)
		}
	}
	for _, t := range u.TruncatedArrays {
		n, ok, err := f.Name(t.Field)
		if err != nil {
			return nil, err
		}
		if !ok {
			// The connector builds the truncated array with the excluded
			// name's null before leaving it out, and fails on it.
			return nil, fmt.Errorf("truncatedArrays names %s, which field.exclude.list leaves out: Debezium's connector fails on it (field can not be null)", t.Field)
		}
		out.TruncatedArrays = append(out.TruncatedArrays, TruncatedArray{Field: n, NewSize: t.NewSize})
	}
	return out, nil
}

// renameNodes renames, in a name's nodes, the node at the path's last
// place counting only the nodes that are not array indexes.
func (p fieldPath) renameNodes(nodes []string) string {
	out := make([]string, 0, len(nodes))
	i := 0
	for _, n := range nodes {
		if isNumeric(n) {
			out = append(out, n)
			continue
		}
		if i == len(p.nodes)-1 {
			n = p.newNode
		}
		out = append(out, n)
		i++
	}
	return strings.Join(out, ".")
}

func (p fieldPath) modifyField(d *mdoc, name, newName string) error {
	if !p.rename {
		d.remove(name)
		return nil
	}
	if d.index(name) < 0 {
		return nil
	}
	if d.index(newName) >= 0 {
		return fmt.Errorf("renaming %s to %s: %w", p.field, newName, ErrFieldExists)
	}
	v, _ := d.remove(name)
	d.put(newName, v)
	return nil
}

// modifyFields walks a document along nodes from begin, into
// sub-documents and through arrays of documents (not arrays of arrays),
// and removes or renames the last node.
func (p fieldPath) modifyFields(d *mdoc, nodes []string, begin int) error {
	cur := d
	for i := begin; i < len(nodes); i++ {
		if i == len(nodes)-1 {
			return p.modifyField(cur, nodes[i], p.newNode)
		}
		j := cur.index(nodes[i])
		if j >= 0 && cur.vals[j].doc != nil {
			cur = cur.vals[j].doc
			continue
		}
		if j >= 0 {
			return p.modifyList(cur.vals[j], nodes, i+1)
		}
		return nil
	}
	return nil
}

func (p fieldPath) modifyList(v mval, nodes []string, begin int) error {
	if !v.isArr {
		return nil
	}
	for _, e := range v.arr {
		if e.doc != nil {
			if err := p.modifyFields(e.doc, nodes, begin); err != nil {
				return err
			}
		}
	}
	return nil
}

// modifyDotted applies the path to a document whose keys are dotted
// paths (updatedFields): the key equal to the path, else the keys under
// it (renamed in place, appended at the end), else the first key above
// it, walked into.
func (p fieldPath) modifyDotted(d *mdoc) error {
	if d.index(p.field) >= 0 {
		return p.modifyField(d, p.field, p.newPath)
	}
	type moved struct {
		name string
		v    mval
	}
	var add []moved
	for i := 0; i < len(d.keys); i++ {
		orig := javaSplit(d.keys[i])
		nodes := excludeNumeric(orig)
		switch {
		case len(nodes) > len(p.nodes) && slices.Equal(p.nodes, nodes[:len(p.nodes)]),
			len(nodes) == len(p.nodes) && slices.Equal(nodes, p.nodes):
			if p.rename {
				add = append(add, moved{p.renameNodes(orig), d.vals[i]})
			}
			d.keys = slices.Delete(d.keys, i, i+1)
			d.vals = slices.Delete(d.vals, i, i+1)
			i--
		case len(nodes) < len(p.nodes) && slices.Equal(nodes, p.nodes[:len(nodes)]):
			v := d.vals[i]
			var err error
			if v.doc != nil {
				err = p.modifyFields(v.doc, p.nodes, len(nodes))
			} else {
				err = p.modifyList(v, p.nodes, len(nodes))
			}
			if err != nil {
				return err
			}
			i = len(d.keys) // the first key above the path ends the walk
		}
	}
	for _, m := range add {
		if d.index(m.name) >= 0 {
			return fmt.Errorf("renaming %s to %s: %w", p.field, m.name, ErrFieldExists)
		}
		d.put(m.name, m.v)
	}
	return nil
}

// javaSplit is Java's String.split("\\."): trailing empty strings dropped.
func javaSplit(s string) []string {
	if s == "" {
		return []string{""}
	}
	parts := strings.Split(s, ".")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// excludeNumeric drops array indexes from a path's nodes, unless two
// come in a row (an array of arrays: the nodes are kept as they are).
func excludeNumeric(nodes []string) []string {
	if len(nodes) <= 1 {
		return nodes
	}
	var out []string
	prev := false
	for _, n := range nodes {
		if isNumeric(n) {
			if prev {
				return nodes
			}
			prev = true
			continue
		}
		prev = false
		out = append(out, n)
	}
	return out
}

func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// mdoc is a document the filter edits: its fields in order, as Java's
// LinkedHashMap keeps them (a put of a new key appends it).
type mdoc struct {
	keys []string
	vals []mval
}

// mval is a value: a sub-document, an array, or any other value as it is.
type mval struct {
	raw   bson.RawValue
	doc   *mdoc
	arr   []mval
	isArr bool
}

func parseMDoc(raw bson.Raw) (*mdoc, error) {
	elems, err := raw.Elements()
	if err != nil {
		return nil, err
	}
	d := &mdoc{}
	for _, e := range elems {
		v, err := parseMVal(e.Value())
		if err != nil {
			return nil, err
		}
		d.keys = append(d.keys, e.Key())
		d.vals = append(d.vals, v)
	}
	return d, nil
}

func parseMVal(v bson.RawValue) (mval, error) {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		d, err := parseMDoc(v.Document())
		return mval{doc: d}, err
	case bson.TypeArray:
		vals, err := v.Array().Values()
		if err != nil {
			return mval{}, err
		}
		out := mval{isArr: true}
		for _, e := range vals {
			m, err := parseMVal(e)
			if err != nil {
				return mval{}, err
			}
			out.arr = append(out.arr, m)
		}
		return out, nil
	}
	return mval{raw: v}, nil
}

func (d *mdoc) index(k string) int { return slices.Index(d.keys, k) }

func (d *mdoc) remove(k string) (mval, bool) {
	i := d.index(k)
	if i < 0 {
		return mval{}, false
	}
	v := d.vals[i]
	d.keys = slices.Delete(d.keys, i, i+1)
	d.vals = slices.Delete(d.vals, i, i+1)
	return v, true
}

func (d *mdoc) put(k string, v mval) {
	if i := d.index(k); i >= 0 {
		d.vals[i] = v
		return
	}
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
}

func (d *mdoc) appendTo(dst []byte) []byte {
	idx, dst := bsoncore.AppendDocumentStart(dst)
	for i, k := range d.keys {
		dst = d.vals[i].appendElem(dst, k)
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst
}

func (v mval) appendElem(dst []byte, key string) []byte {
	switch {
	case v.doc != nil:
		dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, key)
		return v.doc.appendTo(dst)
	case v.isArr:
		dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, key)
		idx, out := bsoncore.AppendArrayStart(dst)
		for i, e := range v.arr {
			out = e.appendElem(out, strconv.Itoa(i))
		}
		out, _ = bsoncore.AppendArrayEnd(out, idx)
		return out
	}
	dst = bsoncore.AppendHeader(dst, bsoncore.Type(v.raw.Type), key)
	return append(dst, v.raw.Value...)
}

// Event applies the filter to a change event's documents and update
// description, as the connector does before writing its envelope.
func (f fieldFilter) Event(e *Event) error {
	if len(f) == 0 {
		return nil
	}
	var err error
	if e.After, err = f.Document(e.After); err != nil {
		return err
	}
	if e.Before, err = f.Document(e.Before); err != nil {
		return err
	}
	e.Update, err = f.Update(e.Update)
	return err
}
