package mongodb

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// format.unwrap for collections: what Debezium 3.6.1's
// ExtractNewDocumentState (its defaults: array.encoding array, no
// flattening, field names as they are) makes of the connector's records,
// written by the JsonConverter. The transform reads the document back
// from the envelope's JSON string and infers a Connect schema from it:
// the key becomes the struct {id: <the _id's value>} and the value the
// document as a struct named after the topic. Where the transform itself
// fails on a document (a mixed-type array, MinKey, a symbol…) the event
// fails here too, naming the field; arrays holding documents or arrays
// follow the transform's own steps (unwraparray.go); the shapes not built
// yet (code with scope, DBPointer) are refused with ErrUnwrapNotBuilt.

// UnwrapOptions are the transform's options Tributary maps
// (format.delete_handling and format.add_fields).
type UnwrapOptions struct {
	// DeleteHandling is delete.tombstone.handling.mode: "" or tombstone,
	// rewrite, rewrite-with-tombstone, drop, delete-to-tombstone.
	DeleteHandling string
	// AddFields is add.fields: "op" and "source.ts_ms" (written as __op
	// and __source_ts_ms).
	AddFields []string
}

// ErrUnwrapNotBuilt marks a document whose shape the unwrap writer does
// not cover yet, although Debezium's transform writes it.
var ErrUnwrapNotBuilt = errors.New("not built for format.unwrap yet")

func (o *UnwrapOptions) rewrites() bool {
	return o.DeleteHandling == "rewrite" || o.DeleteHandling == "rewrite-with-tombstone"
}

// uschema is a Connect schema as the JsonConverter writes it.
type uschema struct {
	typ      string
	name     string
	version  int
	optional bool
	fields   []ufield
	items    *uschema
}

type ufield struct {
	name string
	s    *uschema
}

var (
	uString    = &uschema{typ: "string", optional: true}
	uFloat64   = &uschema{typ: "double", optional: true}
	uBytes     = &uschema{typ: "bytes", optional: true}
	uInt32     = &uschema{typ: "int32", optional: true}
	uInt64     = &uschema{typ: "int64", optional: true}
	uBoolean   = &uschema{typ: "boolean", optional: true}
	uTimestamp = &uschema{typ: "int64", optional: true, name: "org.apache.kafka.connect.data.Timestamp", version: 1}
	uRegex     = &uschema{typ: "struct", optional: true, name: "io.debezium.mongodb.regex",
		fields: []ufield{{"regex", uString}, {"options", uString}}}
)

func (s *uschema) appendJSON(b []byte, field string) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, s.typ...)
	b = append(b, '"')
	switch s.typ {
	case "struct":
		b = append(b, `,"fields":[`...)
		for i, f := range s.fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = f.s.appendJSON(b, f.name)
		}
		b = append(b, ']')
	case "array":
		b = append(b, `,"items":`...)
		b = s.items.appendJSON(b, "")
	}
	b = append(b, `,"optional":`...)
	b = strconv.AppendBool(b, s.optional)
	if s.name != "" {
		b = append(b, `,"name":`...)
		b = appendJackson(b, s.name)
	}
	if s.version != 0 {
		b = append(b, `,"version":`...)
		b = strconv.AppendInt(b, int64(s.version), 10)
	}
	if field != "" {
		b = append(b, `,"field":`...)
		b = appendJackson(b, field)
	}
	return append(b, '}')
}

// uelem is one field of a document the transform converts. relaxed: the
// value went through relaxed Extended JSON on its way (the key, an
// update's updatedFields), which reads an int64 that fits back as int32.
type uelem struct {
	name    string
	v       bson.RawValue
	relaxed bool
}

func elems(doc bson.Raw, relaxed bool) ([]uelem, error) {
	vals, err := doc.Elements()
	if err != nil {
		return nil, err
	}
	out := make([]uelem, 0, len(vals))
	for _, e := range vals {
		out = append(out, uelem{name: e.Key(), v: e.Value(), relaxed: relaxed})
	}
	return out, nil
}

// scalar is the schema of a value that is neither a document, an array
// nor a regex (MongoDataConverter's getSchema); nil when the transform
// has none for its type.
func scalar(v bson.RawValue, relaxed bool) *uschema {
	switch v.Type {
	case bson.TypeNull, bson.TypeString, bson.TypeJavaScript, bson.TypeObjectID, bson.TypeDecimal128:
		return uString
	case bson.TypeDouble:
		return uFloat64
	case bson.TypeBinary:
		return uBytes
	case bson.TypeInt32:
		return uInt32
	case bson.TypeInt64:
		if n := v.Int64(); relaxed && n >= math.MinInt32 && n <= math.MaxInt32 {
			return uInt32
		}
		return uInt64
	case bson.TypeDateTime, bson.TypeTimestamp:
		return uTimestamp
	case bson.TypeBoolean:
		return uBoolean
	}
	return nil
}

// inferStruct is the struct schema of fields, named name (children are
// named name.<field>; the key's struct has no name, and its children
// "null.<field>", as Java concatenates a null name).
func inferStruct(fields []uelem, name, childPrefix, path string) (*uschema, error) {
	s := &uschema{typ: "struct", name: name}
	for _, f := range fields {
		if f.name == "" {
			return nil, fmt.Errorf("%sa field with an empty name: Debezium's ExtractNewDocumentState fails on it", path)
		}
		if slices.ContainsFunc(s.fields, func(g ufield) bool { return g.name == f.name }) {
			continue
		}
		fs, err := inferField(f, childPrefix+"."+f.name, path+f.name)
		if err != nil {
			return nil, err
		}
		if fs != nil {
			s.fields = append(s.fields, ufield{f.name, fs})
		}
	}
	return s, nil
}

func inferField(f uelem, name, path string) (*uschema, error) {
	switch f.v.Type {
	case bson.TypeUndefined:
		return nil, nil // the transform leaves undefined fields out
	case bson.TypeRegex:
		return uRegex, nil
	case bson.TypeEmbeddedDocument:
		doc := f.v.Document()
		sub, err := elems(doc, f.relaxed)
		if err != nil {
			return nil, err
		}
		if len(sub) == 0 {
			return &uschema{typ: "struct", optional: true}, nil
		}
		s, err := inferStruct(sub, name, name, path+".")
		if err != nil {
			return nil, err
		}
		s.optional = true
		return s, nil
	case bson.TypeArray:
		vals, err := f.v.Array().Values()
		if err != nil {
			return nil, err
		}
		if len(vals) == 0 {
			return &uschema{typ: "array", optional: true, items: uString}, nil
		}
		if complexArray(vals) {
			a, err := parseArray(f.v.Array(), f.relaxed, path)
			if err != nil {
				return nil, err
			}
			s, err := arraySchema(name, a, path)
			if err == nil && s == nil {
				err = fmt.Errorf("%s: Debezium's ExtractNewDocumentState fails on an array it finds no element schema for", path)
			}
			return s, err
		}
		var items *uschema
		for i, v := range vals {
			s := scalar(v, f.relaxed)
			if s == nil {
				return nil, fmt.Errorf("%s[%d]: Debezium's ExtractNewDocumentState fails on an array element of type %s", path, i, typeName(v.Type))
			}
			if items != nil && items != s {
				return nil, fmt.Errorf("%s: Debezium's ExtractNewDocumentState fails on an array whose elements mix types (%s and %s)", path, items.typ, s.typ)
			}
			items = s
		}
		return &uschema{typ: "array", optional: true, items: items}, nil
	case bson.TypeCodeWithScope, bson.TypeDBPointer:
		return nil, fmt.Errorf("%s: a %s: %w", path, typeName(f.v.Type), ErrUnwrapNotBuilt)
	}
	if s := scalar(f.v, f.relaxed); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("%s: Debezium's ExtractNewDocumentState fails on a field of type %s", path, typeName(f.v.Type))
}

func typeName(t bson.Type) string {
	switch t {
	case bson.TypeEmbeddedDocument:
		return "document"
	case bson.TypeMinKey:
		return "MinKey"
	case bson.TypeMaxKey:
		return "MaxKey"
	}
	return t.String()
}

// appendStruct writes fields as the struct payload of s (whose fields
// are theirs, in their order, as inferStruct made it).
func appendStruct(b []byte, s *uschema, fields []uelem) ([]byte, error) {
	b = append(b, '{')
	n := 0
	var seen []string
	for _, f := range fields {
		if f.v.Type == bson.TypeUndefined || slices.Contains(seen, f.name) {
			continue
		}
		seen = append(seen, f.name)
		var fs *uschema
		if s != nil && n < len(s.fields) {
			fs = s.fields[n].s
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendJackson(b, f.name)
		b = append(b, ':')
		var err error
		if b, err = appendUValue(b, f.v, f.relaxed, fs); err != nil {
			return b, fmt.Errorf("%s%w", f.name, err)
		}
	}
	return append(b, '}'), nil
}

// appendUValue writes a value of schema s that inferStruct accepted, as
// the JsonConverter writes what MongoDataConverter puts in the struct.
func appendUValue(b []byte, v bson.RawValue, relaxed bool, s *uschema) ([]byte, error) {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		sub, _ := elems(v.Document(), relaxed)
		var err error
		if b, err = appendStruct(b, s, sub); err != nil {
			return b, fmt.Errorf(".%w", err)
		}
		return b, nil
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		if complexArray(vals) {
			if s == nil {
				return b, fmt.Errorf(": no schema for the array: %w", errNoFit)
			}
			return appendArray(b, vals, relaxed, s)
		}
		b = append(b, '[')
		for i, e := range vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendScalar(b, e)
		}
		return append(b, ']'), nil
	}
	return appendScalar(b, v), nil
}

// appendScalar writes a value that is neither a document nor an array.
func appendScalar(b []byte, v bson.RawValue) []byte {
	switch v.Type {
	case bson.TypeNull:
		return append(b, "null"...)
	case bson.TypeString:
		return appendJackson(b, v.StringValue())
	case bson.TypeJavaScript:
		return appendJackson(b, v.JavaScript())
	case bson.TypeObjectID:
		return appendJackson(b, v.ObjectID().Hex())
	case bson.TypeDecimal128:
		return appendJackson(b, v.Decimal128().String())
	case bson.TypeDouble:
		f := v.Double()
		switch {
		case math.IsNaN(f):
			return append(b, `"NaN"`...)
		case math.IsInf(f, 1):
			return append(b, `"Infinity"`...)
		case math.IsInf(f, -1):
			return append(b, `"-Infinity"`...)
		}
		return appendJavaDouble(b, f)
	case bson.TypeBinary:
		_, data := v.Binary()
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, data)
		return append(b, '"')
	case bson.TypeInt32:
		return strconv.AppendInt(b, int64(v.Int32()), 10)
	case bson.TypeInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case bson.TypeDateTime:
		return strconv.AppendInt(b, v.DateTime(), 10)
	case bson.TypeTimestamp:
		// BsonTimestamp.getTime is a signed int: seconds past 2^31 go
		// negative, and the transform multiplies them by 1000.
		t, _ := v.Timestamp()
		return strconv.AppendInt(b, int64(int32(t))*1000, 10)
	case bson.TypeBoolean:
		return strconv.AppendBool(b, v.Boolean())
	case bson.TypeRegex:
		pattern, options := v.Regex()
		b = append(b, `{"regex":`...)
		b = appendJackson(b, pattern)
		b = append(b, `,"options":`...)
		b = appendJackson(b, sortedOptions(options))
		return append(b, '}')
	}
	return append(b, "null"...)
}

// appendUnwrapKey writes the key the transform makes: {id: <the _id>},
// the _id read back from the envelope key's relaxed Extended JSON.
func appendUnwrapKey(b []byte, id bson.RawValue, schemas bool) ([]byte, error) {
	fields := []uelem{{name: "id", v: id, relaxed: true}}
	s, err := inferStruct(fields, "", "null", "_id ")
	if err != nil {
		return b, err
	}
	return appendUnwrapped(b, s, fields, schemas)
}

func appendUnwrapped(b []byte, s *uschema, fields []uelem, schemas bool) ([]byte, error) {
	n := len(b)
	if schemas {
		b = append(b, `{"schema":`...)
		b = s.appendJSON(b, "")
		b = append(b, `,"payload":`...)
	}
	b, err := appendStruct(b, s, fields)
	if err != nil {
		return b[:n], err
	}
	if schemas {
		b = append(b, '}')
	}
	return b, nil
}

// appendUnwrapValue writes the value the transform makes of p; ok false: the
// record has a null value (a delete under delete handling tombstone or
// delete-to-tombstone; drop publishes nothing).
func appendUnwrapValue(b []byte, topic string, id bson.RawValue, p payload, o *UnwrapOptions, schemas bool) (_ []byte, ok bool, err error) {
	var fields []uelem
	switch {
	case p.after != nil:
		if fields, err = elems(p.after, false); err != nil {
			return b, false, err
		}
	case p.update != nil:
		// No post-image: updatedFields (dotted paths as they are), less
		// removedFields, and the _id from the key.
		if p.update.UpdatedFields != nil {
			if fields, err = elems(p.update.UpdatedFields, true); err != nil {
				return b, false, err
			}
		}
		fields = slices.DeleteFunc(fields, func(e uelem) bool { return slices.Contains(p.update.RemovedFields, e.name) })
		if !slices.ContainsFunc(fields, func(e uelem) bool { return e.name == "_id" }) {
			fields = append(fields, uelem{name: "_id", v: id, relaxed: true})
		}
	default: // a delete
		switch o.DeleteHandling {
		case "drop":
			return b, false, nil
		case "rewrite", "rewrite-with-tombstone":
			if p.before != nil {
				if fields, err = elems(p.before, false); err != nil {
					return b, false, err
				}
			}
		default:
			return b, false, nil
		}
	}
	if o.rewrites() {
		deleted := []byte{0}
		if p.after == nil && p.update == nil {
			deleted[0] = 1
		}
		fields = slices.DeleteFunc(fields, func(e uelem) bool { return e.name == "__deleted" })
		fields = append(fields, uelem{name: "__deleted", v: bson.RawValue{Type: bson.TypeBoolean, Value: deleted}})
	}
	if len(fields) == 0 {
		return b, false, nil
	}
	s, err := inferStruct(fields, topic, topic, "")
	if err != nil {
		return b, false, err
	}
	for _, a := range o.AddFields {
		switch a {
		case "op":
			s.fields = append(s.fields, ufield{"__op", uString})
			fields = append(fields, uelem{name: "__op", v: bson.RawValue{Type: bson.TypeString, Value: bsoncoreString(string(p.op))}})
		case "source.ts_ms":
			s.fields = append(s.fields, ufield{"__source_ts_ms", uInt64})
			fields = append(fields, uelem{name: "__source_ts_ms", v: bson.RawValue{Type: bson.TypeInt64, Value: le64(p.src.tsMS)}})
		default:
			return b, false, fmt.Errorf("format.add_fields %q: the MongoDB envelope has no such field", a)
		}
	}
	if b, err = appendUnwrapped(b, s, fields, schemas); err != nil {
		return b, false, err
	}
	return b, true, nil
}

func bsoncoreString(s string) []byte {
	b := make([]byte, 4, 5+len(s))
	n := len(s) + 1
	b[0], b[1], b[2], b[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	b = append(b, s...)
	return append(b, 0)
}

func le64(n int64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(n >> (8 * i))
	}
	return b
}
