// Package avro writes what pkg/debezium encodes (with schemas) as Avro:
// the Avro schema Debezium's Avro converters derive from the same Kafka
// Connect schema, and the record encoded with it, framed for a schema
// registry and registered there once per schema (recoder.go,
// confluent.go, glue.go). Table rows go straight from the encoder's fields
// to Avro (direct.go); the other messages are rewritten from their JSON
// (recoder.go, encode.go).
//
// The schema follows Kafka Connect's AvroData (Confluent's, and Apicurio's
// port that Debezium users run), with its defaults (connect.meta.data on,
// enhanced schema support off):
//   - a struct is a record named by the Connect name, split at its last dot
//     into namespace and name (<prefix>.<schema>.<table>.Value, Key,
//     Envelope);
//   - every non-union schema carries connect.doc, connect.version,
//     connect.parameters, connect.default, connect.name and, for int8 and
//     int16, connect.type, in that order, when Connect has them;
//   - an optional schema is a union with null: null first, or last when
//     the schema has a default (an Avro union's default is of its first
//     type); a field's default is the Connect default, or null when the
//     field is optional; but a top-level struct is its record even when
//     optional, as the converter's serializer registers a record value's
//     own schema;
//   - Connect's Decimal is bytes with logicalType decimal, precision from
//     connect.decimal.precision (64 without it) and scale; Connect's Date,
//     Time and Timestamp are int date, int time-millis and long
//     timestamp-millis; Debezium's own semantic types keep their primitive
//     with connect.name.
//
// Names Avro does not allow are adjusted as Debezium's
// field.name.adjustment.mode and schema.name.adjustment.mode "avro" do:
// every character outside [A-Za-z0-9_] becomes '_', and a leading digit
// gets a '_' before it.
package avro

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// connectSchema is a Kafka Connect schema as JsonConverter writes it.
type connectSchema struct {
	Type       string          `json:"type"`
	Fields     []connectSchema `json:"fields"`
	Items      *connectSchema  `json:"items"`
	Keys       *connectSchema  `json:"keys"`
	Values     *connectSchema  `json:"values"`
	Optional   bool            `json:"optional"`
	Name       string          `json:"name"`
	Version    int             `json:"version"`
	Doc        string          `json:"doc"`
	Parameters json.RawMessage `json:"parameters"`
	Default    json.RawMessage `json:"default"`
	Field      string          `json:"field"`
}

// kinds of Avro values a node writes.
type kind uint8

const (
	kBool kind = iota + 1
	kInt
	kLong
	kFloat
	kDouble
	kString
	kBytes
	kArray
	kMap
	kRecord
)

// node is how the values of one schema are encoded.
type node struct {
	kind     kind
	nullable bool // a union with null
	nullLast bool // the union is [T, null]: T has index 0
	fields   []field
	items    *node // kArray, kMap: the elements
	name     string
}

type field struct {
	json string // the key in the JSON payload (the Connect field name)
	node *node
}

// Schema is an Avro schema derived from a Connect schema, with the plan
// that encodes the Connect JSON payloads of that schema.
type Schema struct {
	// JSON is the Avro schema as text, as registered.
	JSON string
	root *node
}

// FromConnect derives the Avro schema of a Connect schema written as
// JsonConverter's JSON.
func FromConnect(connectJSON []byte) (*Schema, error) {
	var cs connectSchema
	if err := json.Unmarshal(connectJSON, &cs); err != nil {
		return nil, fmt.Errorf("avro: reading the Connect schema: %w", err)
	}
	b := builder{defined: map[string]*connectSchema{}}
	var w jsonWriter
	// A struct value is written as an Avro record, and the converter's
	// serializer registers that record's own schema: a top-level struct
	// is the record even when optional (an expanded outbox payload), not
	// the [null, record] union AvroData derives for it. Other optional
	// values keep the union, which the serializer is handed whole.
	root, err := b.schema(&w, &cs, cs.Type == "struct", "")
	if err != nil {
		return nil, err
	}
	return &Schema{JSON: w.String(), root: root}, nil
}

type builder struct {
	// defined are the records written so far by full name, each as its
	// Connect schema made required and without a field name.
	defined map[string]*connectSchema
	// unnamed counts the structs without a name given a default one.
	unnamed int
}

// recordKey is cs as the builder keeps a record's schema: AvroData keys
// its records by the required copy of the Connect schema.
func recordKey(cs *connectSchema) *connectSchema {
	k := *cs
	k.Optional, k.Field, k.Default = false, "", nil
	return &k
}

// connectDefault is the name AvroData gives an unnamed struct: an earlier
// equal one's (it reuses the record it made of it), else the next of
// ConnectDefault, ConnectDefault2, ….
func (b *builder) connectDefault(key *connectSchema) string {
	for name, d := range b.defined {
		if strings.HasPrefix(name, "io.confluent.connect.avro.ConnectDefault") && reflect.DeepEqual(d, key) {
			return name
		}
	}
	b.unnamed++
	if b.unnamed > 1 {
		return "io.confluent.connect.avro.ConnectDefault" + strconv.Itoa(b.unnamed)
	}
	return "io.confluent.connect.avro.ConnectDefault"
}

// schema writes cs's Avro schema to w and returns its plan. ignoreOptional
// leaves out the null of an optional schema (a union's branches). space is
// the enclosing namespace, which decides whether names are written in full.
func (b *builder) schema(w *jsonWriter, cs *connectSchema, ignoreOptional bool, space string) (*node, error) {
	n := &node{name: cs.Name}
	if cs.Type == "struct" && cs.Optional && !ignoreOptional {
		// AvroData: [null, record], whatever the default.
		w.raw(`["null",`)
		inner := *cs
		inner.Optional = false
		r, err := b.schema(w, &inner, true, space)
		if err != nil {
			return nil, err
		}
		w.raw(`]`)
		rn := *r
		rn.nullable, rn.nullLast = true, false
		return &rn, nil
	}
	optional := cs.Optional && !ignoreOptional
	hasDefault := len(cs.Default) > 0 && string(cs.Default) != "null"
	if optional {
		n.nullable = true
		n.nullLast = hasDefault
		if !n.nullLast {
			w.raw(`["null",`)
		} else {
			w.raw(`[`)
		}
	}
	var connectType, logical string
	var props []func()
	switch cs.Type {
	case "int8", "int16":
		n.kind, connectType = kInt, cs.Type
	case "int32":
		n.kind = kInt
	case "int64":
		n.kind = kLong
	case "float", "float32":
		n.kind = kFloat
	case "double", "float64":
		n.kind = kDouble
	case "boolean":
		n.kind = kBool
	case "string":
		n.kind = kString
	case "bytes":
		n.kind = kBytes
	case "array":
		n.kind = kArray
	case "map":
		n.kind = kMap
	case "struct":
		n.kind = kRecord
	default:
		return nil, fmt.Errorf("avro: Connect type %q has no Avro form", cs.Type)
	}
	switch cs.Name {
	case "org.apache.kafka.connect.data.Decimal":
		if n.kind == kBytes {
			logical = "decimal"
		}
	case "org.apache.kafka.connect.data.Date":
		logical = "date"
	case "org.apache.kafka.connect.data.Time":
		logical = "time-millis"
	case "org.apache.kafka.connect.data.Timestamp":
		logical = "timestamp-millis"
	}

	// The connect.* properties, in AvroData's order.
	props = append(props, func() {
		if cs.Doc != "" {
			w.key("connect.doc")
			w.str(cs.Doc)
		}
		if cs.Version != 0 {
			w.key("connect.version")
			w.raw(strconv.Itoa(cs.Version))
		}
		if len(cs.Parameters) > 0 && string(cs.Parameters) != "{}" && string(cs.Parameters) != "null" {
			w.key("connect.parameters")
			w.raw(string(cs.Parameters))
		}
	})
	var defaultJSON string
	if hasDefault {
		d, err := avroDefault(cs, cs.Default)
		if err != nil {
			return nil, err
		}
		defaultJSON = d
		props = append(props, func() {
			w.key("connect.default")
			w.raw(defaultJSON)
		})
	}
	connectName := cs.Name
	if n.kind == kRecord && cs.Name != "" {
		// Debezium's schema.name.adjustment.mode=avro adjusts the Connect
		// name itself, so connect.name is the record's Avro name.
		if ns, name := splitName(cs.Name); ns != "" {
			connectName = ns + "." + name
		} else {
			connectName = name
		}
	}
	props = append(props, func() {
		if connectName != "" {
			w.key("connect.name")
			w.str(connectName)
		}
		if connectType != "" {
			w.key("connect.type")
			w.str(connectType)
		}
	})
	if logical == "decimal" {
		precision, scale := 64, 0
		params := parameters(cs.Parameters)
		if p, ok := params["connect.decimal.precision"]; ok {
			precision, _ = strconv.Atoi(p)
		}
		if s, ok := params["scale"]; ok {
			scale, _ = strconv.Atoi(s)
		}
		// Avro refuses such a decimal; AvroData then leaves the logical
		// type out and keeps the bytes.
		if precision > 0 && scale >= 0 && scale <= precision {
			// Avro 1.12 writes a decimal's scale and precision first and
			// its logicalType last (as the converters' registered text has
			// them).
			props = append([]func(){func() {
				w.key("scale")
				w.raw(strconv.Itoa(scale))
				w.key("precision")
				w.raw(strconv.Itoa(precision))
			}}, props...)
			props = append(props, func() {
				w.key("logicalType")
				w.str("decimal")
			})
		}
	} else if logical != "" {
		props = append(props, func() {
			w.key("logicalType")
			w.str(logical)
		})
	}
	writeProps := func() {
		for _, p := range props {
			p()
		}
	}
	bare := cs.Doc == "" && cs.Version == 0 && cs.Name == "" && connectType == "" && logical == "" && !hasDefault &&
		(len(cs.Parameters) == 0 || string(cs.Parameters) == "{}" || string(cs.Parameters) == "null")

	switch n.kind {
	case kArray:
		if cs.Items == nil {
			return nil, errors.New("avro: a Connect array without items")
		}
		w.raw(`{"type":"array","items":`)
		items, err := b.schema(w, cs.Items, false, space)
		if err != nil {
			return nil, err
		}
		n.items = items
		writeProps()
		w.raw(`}`)
	case kMap:
		if cs.Keys == nil || cs.Values == nil || cs.Keys.Type != "string" || cs.Keys.Optional {
			return nil, fmt.Errorf("avro: a Connect map whose keys are not required strings (%s) has no Avro map form", cs.Name)
		}
		w.raw(`{"type":"map","values":`)
		values, err := b.schema(w, cs.Values, false, space)
		if err != nil {
			return nil, err
		}
		n.items = values
		writeProps()
		w.raw(`}`)
	case kRecord:
		key := recordKey(cs)
		full := cs.Name
		if full == "" {
			full = b.connectDefault(key)
		}
		ns, name := splitName(full)
		fullAdjusted := name
		if ns != "" {
			fullAdjusted = ns + "." + name
		}
		if d, ok := b.defined[fullAdjusted]; ok {
			if !reflect.DeepEqual(d, key) {
				// Avro names one type once: the converter fails on it too.
				return nil, fmt.Errorf("avro: two different records are both named %s (Avro allows one type per name)", fullAdjusted)
			}
			// Avro writes a named type once; later uses are references.
			if ns == space {
				w.str(name)
			} else {
				w.str(fullAdjusted)
			}
			// The plan is the same: rebuild it without writing.
			var discard jsonWriter
			inner := *cs
			inner.Optional = false
			sub := builder{defined: map[string]*connectSchema{}}
			r, err := sub.schema(&discard, &inner, true, space)
			if err != nil {
				return nil, err
			}
			n.fields = r.fields
			break
		}
		b.defined[fullAdjusted] = key
		w.raw(`{"type":"record","name":`)
		w.str(name)
		if ns != space {
			// An empty namespace inside another is written too: Avro
			// would otherwise read the name in the enclosing one.
			w.key("namespace")
			w.str(ns)
		}
		w.key("fields")
		w.raw(`[`)
		seen := map[string]string{}
		for i := range cs.Fields {
			f := &cs.Fields[i]
			fname := adjustName(f.Field)
			if other, ok := seen[fname]; ok {
				return nil, fmt.Errorf("avro: fields %q and %q of %s are both %q in Avro, which allows only [A-Za-z0-9_] in names", other, f.Field, full, fname)
			}
			seen[fname] = f.Field
			if i > 0 {
				w.raw(`,`)
			}
			w.raw(`{"name":`)
			w.str(fname)
			w.key("type")
			fn, err := b.schema(w, f, false, ns)
			if err != nil {
				return nil, err
			}
			if len(f.Default) > 0 && string(f.Default) != "null" {
				d, err := avroDefault(f, f.Default)
				if err != nil {
					return nil, err
				}
				w.key("default")
				w.raw(d)
			} else if f.Optional {
				w.key("default")
				w.raw(`null`)
			}
			w.raw(`}`)
			n.fields = append(n.fields, field{json: f.Field, node: fn})
		}
		w.raw(`]`)
		writeProps()
		w.raw(`}`)
	default:
		if bare {
			w.str(primitiveName(n.kind))
		} else {
			w.raw(`{"type":`)
			w.str(primitiveName(n.kind))
			writeProps()
			w.raw(`}`)
		}
	}
	if optional {
		if n.nullLast {
			w.raw(`,"null"]`)
		} else {
			w.raw(`]`)
		}
	}
	return n, nil
}

func primitiveName(k kind) string {
	switch k {
	case kBool:
		return "boolean"
	case kInt:
		return "int"
	case kLong:
		return "long"
	case kFloat:
		return "float"
	case kDouble:
		return "double"
	case kString:
		return "string"
	}
	return "bytes"
}

// splitName splits a full name at its last dot, adjusting each part.
func splitName(full string) (namespace, name string) {
	i := strings.LastIndexByte(full, '.')
	if i < 0 {
		return "", adjustName(full)
	}
	parts := strings.Split(full[:i], ".")
	for j := range parts {
		parts[j] = adjustName(parts[j])
	}
	return strings.Join(parts, "."), adjustName(full[i+1:])
}

// adjustName makes s a valid Avro name as Debezium's "avro" adjustment
// mode does.
func adjustName(s string) string {
	ok := s != ""
	for i := 0; i < len(s) && ok; i++ {
		ok = validNameByte(s[i], i == 0)
	}
	if ok {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if i == 0 && r >= '0' && r <= '9' {
			b.WriteByte('_')
		}
		if r < utf8.RuneSelf && validNameByte(byte(r), false) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

func validNameByte(c byte, first bool) bool {
	switch {
	case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == '_':
		return true
	case c >= '0' && c <= '9':
		return !first
	}
	return false
}

// parameters reads a Connect schema's parameters.
func parameters(raw json.RawMessage) map[string]string {
	var m map[string]string
	_ = json.Unmarshal(raw, &m)
	return m
}

// avroDefault converts a Connect default, as JsonConverter writes it, to
// the default Avro and AvroData give it: bytes (Decimal included, whose
// JSON is the unscaled bytes in base64) as a string of ISO-8859-1
// characters, structs as objects of their fields' defaults.
func avroDefault(cs *connectSchema, d json.RawMessage) (string, error) {
	if string(d) == "null" {
		return "null", nil
	}
	switch cs.Type {
	case "bytes":
		var s string
		if err := json.Unmarshal(d, &s); err != nil {
			return "", fmt.Errorf("avro: default %s of a bytes schema: %w", d, err)
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return "", fmt.Errorf("avro: default of a bytes schema is not base64: %w", err)
		}
		var w jsonWriter
		w.latin1(raw)
		return w.String(), nil
	case "struct":
		var m map[string]json.RawMessage
		if err := json.Unmarshal(d, &m); err != nil {
			return "", fmt.Errorf("avro: default of a struct: %w", err)
		}
		var w jsonWriter
		w.raw(`{`)
		for i := range cs.Fields {
			f := &cs.Fields[i]
			v, ok := m[f.Field]
			if !ok {
				v = json.RawMessage("null")
			}
			fd, err := avroDefault(f, v)
			if err != nil {
				return "", err
			}
			if i > 0 {
				w.raw(`,`)
			}
			w.str(adjustName(f.Field))
			w.raw(`:`)
			w.raw(fd)
		}
		w.raw(`}`)
		return w.String(), nil
	case "array":
		var items []json.RawMessage
		if err := json.Unmarshal(d, &items); err != nil || cs.Items == nil {
			return "", fmt.Errorf("avro: default of an array: %v", err)
		}
		var w jsonWriter
		w.raw(`[`)
		for i, it := range items {
			v, err := avroDefault(cs.Items, it)
			if err != nil {
				return "", err
			}
			if i > 0 {
				w.raw(`,`)
			}
			w.raw(v)
		}
		w.raw(`]`)
		return w.String(), nil
	}
	// Numbers, strings and booleans are the same JSON. A compact form
	// keeps the schema text stable.
	var buf bytes.Buffer
	if err := json.Compact(&buf, d); err != nil {
		return "", fmt.Errorf("avro: default %s: %w", d, err)
	}
	return buf.String(), nil
}

// jsonWriter builds the schema's text.
type jsonWriter struct {
	b []byte
}

func (w *jsonWriter) raw(s string) { w.b = append(w.b, s...) }

// key writes ,"k": (every key this package writes follows another).
func (w *jsonWriter) key(k string) {
	w.b = append(w.b, ',')
	w.str(k)
	w.b = append(w.b, ':')
}

func (w *jsonWriter) str(s string) {
	b, _ := json.Marshal(s)
	// encoding/json escapes <, > and & for HTML; a schema is not HTML, and
	// Avro's own writer keeps them.
	b = bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<"))
	b = bytes.ReplaceAll(b, []byte(`\u003e`), []byte(">"))
	b = bytes.ReplaceAll(b, []byte(`\u0026`), []byte("&"))
	w.b = append(w.b, b...)
}

// latin1 writes raw as a JSON string of the characters U+0000–U+00FF,
// one per byte: Avro's JSON form of bytes.
func (w *jsonWriter) latin1(raw []byte) {
	var sb strings.Builder
	for _, c := range raw {
		sb.WriteRune(rune(c))
	}
	w.str(sb.String())
}

func (w *jsonWriter) String() string { return string(w.b) }
