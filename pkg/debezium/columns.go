package debezium

import (
	"strconv"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/jsonstr"
)

// colEnc says how a column's values are written; it is chosen once per
// table version from the column's Kind and Type.
type colEnc uint8

const (
	encBool colEnc = iota + 1
	encInt16
	encInt32
	encInt64
	encFloat32
	encFloat64
	encDecimal    // org.apache.kafka.connect.data.Decimal: base64 unscaled bytes
	encVarDecimal // io.debezium.data.VariableScaleDecimal: {"scale","value"}
	encString     // strings, JSON text, UUIDs
	encBytes      // base64
	encDate       // int32 days
	encTimeMillis
	encTimeMicros
	encTimeNanos
	encTimestampMillis
	encTimestampMicros
	encTimestampNanos
	encZoned     // io.debezium.time.ZonedTimestamp string
	encZonedTime // io.debezium.time.ZonedTime string
	encArray     // a JSON array of elem's values
	encPoint     // io.debezium.data.geometry.Point: {x, y, wkb, srid}
	encGeometry  // io.debezium.data.geometry.Geometry / Geography: {wkb, srid}

	// The non-default modes of format.go.
	encDecimalDouble // decimal.handling.mode=double
	encDecimalString // decimal.handling.mode=string
	encBytesBase64   // binary.handling.mode=base64: encBytes with a string schema
	encBytesHex      // binary.handling.mode=hex
)

// defaultTimePrecision is what PostgreSQL reports for time, timestamp and
// timestamptz declared without a precision (JDBC DECIMAL_DIGITS 6).
const defaultTimePrecision = 6

// colPlan is one encodable column of a table version.
type colPlan struct {
	idx      int    // index in Table.Columns and in a Row
	name     string // column name, for errors
	kind     change.Kind
	enc      colEnc
	optional bool
	scale    int      // encDecimal: the column's scale
	width    int      // encZoned: fractional digits
	key      []byte   // `"<name>":`, escaped
	elem     *colPlan // encArray: how each element is written
	inArray  bool     // an array's element: NaN decimals fail the array
	// unavailable is an array's unchanged-TOAST placeholder; nil: null.
	unavailable []byte
	// dflt is the column's schema default as JSON (columnDefault), nil
	// when it has none: a null value is written as it, as Kafka Connect's
	// JsonConverter does (replace.null.with.default, true by default).
	dflt []byte
	// zero is the JSON string of change.Type.Zero, the type's own zero
	// value; nil: the kind's.
	zero []byte
	// javaDoubles: an unknown type's text with its numbers as Java's
	// Double.toString (change.Type.JavaDoubles, javadoubles.go).
	javaDoubles bool
}

// columnSchema maps a column to the Connect schema Debezium's connectors
// give its kind in the default modes (YEAR, ENUM, SET and BIT(n>1) as
// BinlogValueConverters writes them, the others as the PostgreSQL
// connector does), and to the encoding of its values. ok is false for
// KindUnknown: Debezium drops columns of types it does not know
// (include.unknown.datatypes=false).
func columnSchema(c *change.Column) (s connectSchema, enc colEnc, ok bool) {
	s.optional = c.Optional
	t := &c.Type
	switch t.Kind {
	case change.KindBool:
		s.typ, enc = "boolean", encBool
	case change.KindInt16:
		s.typ, enc = "int16", encInt16
	case change.KindInt32:
		s.typ, enc = "int32", encInt32
	case change.KindInt64:
		s.typ, enc = "int64", encInt64
	case change.KindFloat32:
		s.typ, enc = "float", encFloat32
	case change.KindFloat64:
		s.typ, enc = "double", encFloat64
	case change.KindDecimal:
		if t.Scale < 0 {
			// numeric without a type modifier.
			s.typ, enc = "struct", encVarDecimal
			s.name, s.version, s.doc = "io.debezium.data.VariableScaleDecimal", 1, "Variable scaled decimal"
			s.fields = []connectField{
				{"scale", connectSchema{typ: "int32"}},
				{"value", connectSchema{typ: "bytes"}},
			}
			break
		}
		s.typ, enc = "bytes", encDecimal
		s.name, s.version = "org.apache.kafka.connect.data.Decimal", 1
		s.params = []param{{"scale", strconv.Itoa(t.Scale)}}
		if t.Precision >= 0 {
			// Debezium always sets it; a source that does not know the
			// precision gets no parameter rather than an invented one.
			s.params = append(s.params, param{"connect.decimal.precision", strconv.Itoa(t.Precision)})
		}
	case change.KindString:
		s.typ, enc = "string", encString
	case change.KindJSON:
		s.typ, enc = "string", encString
		s.name, s.version = "io.debezium.data.Json", 1
	case change.KindUUID:
		s.typ, enc = "string", encString
		s.name, s.version = "io.debezium.data.Uuid", 1
	case change.KindBytes:
		s.typ, enc = "bytes", encBytes
	case change.KindDate:
		s.typ, enc = "int32", encDate
		s.name, s.version = "io.debezium.time.Date", 1
	case change.KindTime:
		s.version = 1
		switch p := precision(t); {
		case p <= 3:
			s.typ, s.name, enc = "int32", "io.debezium.time.Time", encTimeMillis
		case p <= 6:
			s.typ, s.name, enc = "int64", "io.debezium.time.MicroTime", encTimeMicros
		default:
			s.typ, s.name, enc = "int64", "io.debezium.time.NanoTime", encTimeNanos
		}
	case change.KindTimestamp:
		s.version = 1
		switch p := precision(t); {
		case p <= 3:
			s.typ, s.name, enc = "int64", "io.debezium.time.Timestamp", encTimestampMillis
		case p <= 6:
			s.typ, s.name, enc = "int64", "io.debezium.time.MicroTimestamp", encTimestampMicros
		default:
			s.typ, s.name, enc = "int64", "io.debezium.time.NanoTimestamp", encTimestampNanos
		}
	case change.KindTimestampTZ:
		s.typ, enc = "string", encZoned
		s.name, s.version = "io.debezium.time.ZonedTimestamp", 1
	case change.KindTimeTZ:
		s.typ, enc = "string", encZonedTime
		s.name, s.version = "io.debezium.time.ZonedTime", 1
	case change.KindXML:
		s.typ, enc = "string", encString
		s.name, s.version = "io.debezium.data.Xml", 1
	case change.KindDuration:
		s.typ, enc = "int64", encInt64
		s.name, s.version = "io.debezium.time.MicroDuration", 1
	case change.KindTsvector:
		s.typ, enc = "string", encString
		s.name, s.version = "io.debezium.data.Tsvector", 1
	case change.KindLtree:
		s.typ, enc = "string", encString
		s.name, s.version = "io.debezium.data.Ltree", 1
	case change.KindPoint, change.KindGeometry, change.KindGeography:
		enc, _ = spatialSchema(&s, t.Kind)
	case change.KindArray:
		// Debezium has no converter for arrays of points (it drops the
		// column, as it does nested arrays).
		if t.Elem == nil || t.Elem.Kind == change.KindArray || t.Elem.Kind == change.KindPoint {
			return s, 0, false
		}
		items, _, ok := columnSchema(&change.Column{Type: *t.Elem, Optional: elemOptional(t.Elem)})
		if !ok {
			return s, 0, false
		}
		s.typ, enc = "array", encArray
		s.items = &items
	case change.KindYear:
		s.typ, enc = "int32", encInt32
		s.name, s.version = "io.debezium.time.Year", 1
	case change.KindEnum:
		s.typ, enc = "string", encString
		s.name, s.version = "io.debezium.data.Enum", 1
		s.params = []param{{"allowed", t.Values}}
	case change.KindSet:
		s.typ, enc = "string", encString
		s.name, s.version = "io.debezium.data.EnumSet", 1
		s.params = []param{{"allowed", t.Values}}
	case change.KindBits:
		s.typ, enc = "bytes", encBytes
		s.name, s.version = "io.debezium.data.Bits", 1
		s.params = []param{{"length", strconv.Itoa(t.Length)}}
	default:
		return s, 0, false
	}
	return s, enc, true
}

// newColPlan returns the plan of column i, col, written as enc; f (nil:
// the default modes) chooses its array elements' encoding.
func newColPlan(i int, col *change.Column, enc colEnc, f *Format) colPlan {
	p := colPlan{idx: i, name: col.Name, kind: col.Type.Kind, enc: enc, optional: col.Optional, scale: col.Type.Scale,
		javaDoubles: col.Type.Kind == change.KindUnknown && col.Type.JavaDoubles}
	if col.Type.Zero != "" {
		p.zero = jsonstr.Append(nil, col.Type.Zero)
	}
	if enc == encZoned {
		p.width = precision(&col.Type)
	}
	if enc == encArray {
		ec := change.Column{Name: col.Name, Type: *col.Type.Elem, Optional: elemOptional(col.Type.Elem)}
		es, eenc, _ := columnSchema(&ec)
		eenc = f.formatSchema(&ec.Type, &es, eenc)
		e := newColPlan(i, &ec, eenc, f)
		e.inArray = true
		p.elem = &e
		if u, ok := unavailableArrays[col.Type.Elem.Kind]; ok && !col.Type.Elem.NullUnavailableArray {
			p.unavailable = []byte(u)
		}
	}
	p.key = append(jsonstr.Append(nil, col.Name), ':')
	return p
}

// columnDefault is the schema "default" of a column as JSON, or nil: the
// column's default converted like its values; for a default the source
// could not evaluate, the type's zero value when the column is NOT NULL
// (Debezium's converter fallback) and no default otherwise.
func columnDefault(p *colPlan, col *change.Column) []byte {
	d := col.Default
	if d == nil || p.enc == encArray || p.enc == encPoint || p.enc == encGeometry || p.enc == encVarDecimal {
		// Debezium gives array and spatial columns no default (its
		// default-value converter has none for them), nor an
		// unconstrained numeric's: "Struct can't be used as default
		// value for column …, will use null instead".
		return nil
	}
	if p.noFarDefault(d) {
		return nil
	}
	if d.Kind == change.Null {
		if p.optional {
			return nil
		}
		if p.enc == encZoned {
			return appendZonedTimestamp(nil, 0, p.width)
		}
		return p.appendFallback(nil)
	}
	b, err := p.appendValue(nil, d)
	if err != nil || string(b) == "null" {
		return nil
	}
	return b
}

// elemOptional says whether an array's element schema is optional:
// Debezium's are, except an enum array's (a NULL element fails the array)
// and a tsvector array's (Debezium builds its element schema through the
// generic array path, which leaves it required).
func elemOptional(t *change.Type) bool {
	return t.Kind != change.KindEnum && t.Kind != change.KindTsvector
}

func precision(t *change.Type) int {
	if t.Precision < 0 {
		return defaultTimePrecision
	}
	return t.Precision
}
