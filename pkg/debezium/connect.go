package debezium

import (
	"strconv"

	"github.com/tributary-cdc/tributary/pkg/jsonstr"
)

// connectSchema is a Kafka Connect schema as JsonConverter.asJsonSchema
// writes it. It exists only while a table's schema JSON is being built.
//
// Key order, from JsonConverter.asJsonSchema (apache/kafka,
// connect/json/.../JsonConverter.java): "type"; for a struct "fields";
// "optional"; "name", "version", "doc", "parameters" and "default" when set;
// and, for a struct's field, "field" last (the parent adds it after
// converting the field's schema). Real Debezium output agrees, e.g. the
// source.snapshot field:
//
//	{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,
//	 "parameters":{"allowed":"true,first,..."},"default":"false","field":"snapshot"}
type connectSchema struct {
	typ      string // "int32", "string", "struct", ...
	fields   []connectField
	items    *connectSchema // "array" only: the element schema
	optional bool
	name     string
	version  int // 0: no version
	doc      string
	params   []param // in insertion order (Connect keeps a LinkedHashMap)
	// defaultJSON is the schema's default value, already as JSON; nil means
	// no default. For a column it is the column's default converted like a
	// value of the column (see columnDefault).
	defaultJSON []byte
}

type connectField struct {
	name   string
	schema connectSchema
}

type param struct{ key, value string }

// appendJSON appends the schema; field names it as a struct field ("field"
// key) unless it is "" (a top-level schema).
func (s *connectSchema) appendJSON(b []byte, field string) []byte {
	b = append(b, `{"type":`...)
	b = jsonstr.Append(b, s.typ)
	if s.typ == "struct" {
		b = append(b, `,"fields":[`...)
		for i := range s.fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = s.fields[i].schema.appendJSON(b, s.fields[i].name)
		}
		b = append(b, ']')
	}
	if s.typ == "array" && s.items != nil {
		b = append(b, `,"items":`...)
		b = s.items.appendJSON(b, "")
	}
	b = append(b, `,"optional":`...)
	b = appendBool(b, s.optional)
	if s.name != "" {
		b = append(b, `,"name":`...)
		b = jsonstr.Append(b, s.name)
	}
	if s.version != 0 {
		b = append(b, `,"version":`...)
		b = strconv.AppendInt(b, int64(s.version), 10)
	}
	if s.doc != "" {
		b = append(b, `,"doc":`...)
		b = jsonstr.Append(b, s.doc)
	}
	if len(s.params) > 0 {
		b = append(b, `,"parameters":{`...)
		for i, p := range s.params {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, p.key)
			b = append(b, ':')
			b = jsonstr.Append(b, p.value)
		}
		b = append(b, '}')
	}
	if s.defaultJSON != nil {
		b = append(b, `,"default":`...)
		b = append(b, s.defaultJSON...)
	}
	if field != "" {
		b = append(b, `,"field":`...)
		b = jsonstr.Append(b, field)
	}
	return append(b, '}')
}

// Primitive schemas used by the envelope and source blocks.
var (
	stringSchema         = connectSchema{typ: "string"}
	optionalStringSchema = connectSchema{typ: "string", optional: true}
	int64Schema          = connectSchema{typ: "int64"}
	optionalInt64Schema  = connectSchema{typ: "int64", optional: true}
)
