package debezium

import (
	"strconv"

	"github.com/tributary-cdc/tributary/pkg/change"
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
	encZoned // io.debezium.time.ZonedTimestamp string
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
	scale    int    // encDecimal: the column's scale
	width    int    // encZoned: fractional digits
	key      []byte // `"<name>":`, escaped
}

// columnSchema maps a column to the Connect schema Debezium's PostgreSQL
// connector gives it in the default modes, and to the encoding of its
// values. ok is false for KindUnknown: Debezium drops columns of types it
// does not know (include.unknown.datatypes=false).
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
	default:
		return s, 0, false
	}
	return s, enc, true
}

func precision(t *change.Type) int {
	if t.Precision < 0 {
		return defaultTimePrecision
	}
	return t.Precision
}
