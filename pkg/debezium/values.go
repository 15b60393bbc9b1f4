package debezium

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"math"
	"strconv"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/jsonstr"
)

// unavailablePlaceholder is written for PostgreSQL values the server did
// not send (unchanged TOAST).
const unavailablePlaceholder = change.UnavailablePlaceholder

// unavailableBytesJSON is the placeholder for a bytes column: Debezium sends
// the placeholder's bytes, which JsonConverter base64-encodes.
var unavailableBytesJSON = `"` + base64.StdEncoding.EncodeToString([]byte(unavailablePlaceholder)) + `"`

// errNullElement: a NULL element in an array whose element schema is
// required (enum arrays); the array as a whole cannot be converted.
var errNullElement = errors.New("null element in an array of required elements")

// unavailableArrays are the unchanged-TOAST placeholders Debezium
// 3.6.1.Final writes for arrays, by element kind (verified side by side,
// integration/postgres/fidelity_test.go). Debezium substitutes a placeholder object
// before conversion: the placeholder string in a list for text-like
// elements, its bytes as numbers for int4/int8/date, and for uuid the
// name-based UUID of its bytes (UUID.nameUUIDFromBytes). For the other
// element types (int2, numeric, float, timestamptz, enum, …) that object
// does not convert and the field is null.
var unavailableArrays = map[change.Kind]string{
	change.KindString: `["` + unavailablePlaceholder + `"]`,
	change.KindJSON:   `["` + unavailablePlaceholder + `"]`,
	change.KindXML:    `["` + unavailablePlaceholder + `"]`,
	change.KindInt32:  unavailableByteList(),
	change.KindInt64:  unavailableByteList(),
	change.KindDate:   unavailableByteList(),
	change.KindUUID:   `["` + nameUUID(unavailablePlaceholder) + `"]`,
}

func unavailableByteList() string {
	b := []byte{'['}
	for i := 0; i < len(unavailablePlaceholder); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(unavailablePlaceholder[i]), 10)
	}
	return string(append(b, ']'))
}

// nameUUID is Java's UUID.nameUUIDFromBytes: an MD5 (version 3) UUID.
func nameUUID(s string) string {
	h := md5.Sum([]byte(s))
	h[6] = h[6]&0x0f | 0x30
	h[8] = h[8]&0x3f | 0x80
	x := hex.EncodeToString(h[:])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// appendValue appends one column value. Errors are sentinels (no
// allocation); the caller wraps them with the table and column.
func (p *colPlan) appendValue(b []byte, v *change.Value) ([]byte, error) {
	switch v.Kind {
	case change.Null:
		if p.optional {
			return append(b, "null"...), nil
		}
		if p.dflt != nil {
			// JdbcValueConverters.convertValue: the schema default, else
			// the fallback.
			return append(b, p.dflt...), nil
		}
		return p.appendFallback(b), nil
	case change.Unavailable:
		return p.appendUnavailable(b)
	case change.Text:
		switch p.enc {
		case encTimestampMillis, encTimestampMicros, encTimestampNanos, encZoned:
			if p.noFarDefault(v) {
				// A default Debezium has none of, copied into a key-only
				// old image (pkg/source/postgres completeImages): what
				// it writes for a null there.
				return p.appendValue(b, &change.Value{})
			}
			return appendFarTimestamp(b, p.enc, v.Bytes, p.width)
		}
	}
	switch p.enc {
	case encBool:
		if v.Kind != change.Int {
			return b, ErrValueKind
		}
		switch v.Int {
		case 0:
			return append(b, "false"...), nil
		case 1:
			return append(b, "true"...), nil
		}
		return b, ErrValueRange
	case encInt16:
		return appendIntIn(b, v, math.MinInt16, math.MaxInt16)
	case encInt32, encDate:
		return appendIntIn(b, v, math.MinInt32, math.MaxInt32)
	case encInt64, encTimeMicros, encTimestampMicros:
		if v.Kind != change.Int {
			return b, ErrValueKind
		}
		return strconv.AppendInt(b, v.Int, 10), nil
	case encTimeMillis:
		if v.Kind != change.Int {
			return b, ErrValueKind
		}
		if v.Int < 0 || v.Int > 24*3600*1_000_000 {
			// A negative MySQL TIME, or one past a day, in time_precision
			// connect: a Connect Time cannot hold it, Debezium logs
			// "Failed to properly convert data value" and the field is
			// null (verified side by side:
			// integration/scenario/review_format_test.go). PostgreSQL's 24:00:00
			// stays.
			if p.optional && !p.inArray {
				return append(b, "null"...), nil
			}
			return b, ErrValueRange
		}
		ms := floorDiv(v.Int, 1000)
		if ms < math.MinInt32 || ms > math.MaxInt32 {
			return b, ErrValueRange
		}
		return strconv.AppendInt(b, ms, 10), nil
	case encTimestampMillis:
		if v.Kind != change.Int {
			return b, ErrValueKind
		}
		return strconv.AppendInt(b, floorDiv(v.Int, 1000), 10), nil
	case encTimeNanos, encTimestampNanos:
		// Values are µs; precisions above 6 (not PostgreSQL) lose nothing
		// more than the source already did.
		if v.Kind != change.Int {
			return b, ErrValueKind
		}
		if v.Int > math.MaxInt64/1000 || v.Int < math.MinInt64/1000 {
			return b, ErrValueRange
		}
		return strconv.AppendInt(b, v.Int*1000, 10), nil
	case encFloat32:
		if v.Kind != change.Float {
			return b, ErrValueKind
		}
		return appendJavaFloat(b, float64(float32(v.Float)), 32), nil
	case encFloat64:
		if v.Kind != change.Float {
			return b, ErrValueKind
		}
		return appendJavaFloat(b, v.Float, 64), nil
	case encDecimal:
		if v.Kind != change.Text {
			return b, ErrValueKind
		}
		out, err := appendDecimalFixed(b, v.Bytes, p.scale)
		return p.specialDecimal(b, out, err)
	case encVarDecimal:
		if v.Kind != change.Text {
			return b, ErrValueKind
		}
		out, err := appendDecimalVariable(b, v.Bytes)
		return p.specialDecimal(b, out, err)
	case encString:
		if v.Kind != change.Text {
			return b, ErrValueKind
		}
		return jsonstr.Append(b, v.Bytes), nil
	case encDecimalDouble:
		if v.Kind != change.Text {
			return b, ErrValueKind
		}
		out, err := appendDecimalDouble(b, v.Bytes)
		return p.specialDecimal(b, out, err)
	case encDecimalString:
		if v.Kind != change.Text {
			return b, ErrValueKind
		}
		out, err := appendDecimalString(b, v.Bytes)
		return p.specialDecimal(b, out, err)
	case encBytesHex:
		if v.Kind != change.Binary {
			return b, ErrValueKind
		}
		if p.javaDoubles {
			return appendHex(b, appendJavaDoublesText(nil, v.Bytes)), nil // not in v: the row stays the source's
		}
		return appendHex(b, v.Bytes), nil
	case encBytes, encBytesBase64:
		if v.Kind != change.Binary {
			return b, ErrValueKind
		}
		raw := v.Bytes
		if p.javaDoubles {
			raw = appendJavaDoublesText(nil, raw) // not in v: the row stays the source's
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, raw)
		return append(b, '"'), nil
	case encZoned:
		if v.Kind != change.Int {
			return b, ErrValueKind
		}
		return appendZonedTimestamp(b, v.Int, p.width), nil
	case encZonedTime:
		if v.Kind != change.Int {
			return b, ErrValueKind
		}
		if v.Int < 0 || v.Int >= 86400e6 {
			return b, ErrValueRange
		}
		return appendZonedTime(b, v.Int), nil
	case encPoint, encGeometry:
		return p.appendSpatial(b, v)
	case encArray:
		if v.Kind != change.Array {
			return b, ErrValueKind
		}
		start := len(b)
		b = append(b, '[')
		for i := range v.Elems {
			if i > 0 {
				b = append(b, ',')
			}
			e := &v.Elems[i]
			var err error
			if e.Kind == change.Null && !p.elem.optional {
				err = errNullElement
			} else {
				b, err = p.elem.appendValue(b, e)
			}
			if err != nil {
				// Debezium converts an array as a whole: when an element
				// fails (NaN numeric, NULL in an enum array) it logs
				// "Failed to properly convert data value" and the field
				// becomes null.
				if p.optional && (err == ErrSpecialDecimal || err == errNullElement) {
					return append(b[:start], "null"...), nil
				}
				return b[:start], err
			}
		}
		return append(b, ']'), nil
	}
	return b, ErrValueKind
}

// specialDecimal handles NaN/±Infinity in a decimal column as Debezium
// does: its converter logs "Failed to properly convert data value" and the
// field becomes null; only a NOT NULL column fails.
func (p *colPlan) specialDecimal(b, out []byte, err error) ([]byte, error) {
	if err == ErrSpecialDecimal && p.optional && !p.inArray {
		return append(b, "null"...), nil
	}
	return out, err
}

func appendIntIn(b []byte, v *change.Value, lo, hi int64) ([]byte, error) {
	if v.Kind != change.Int {
		return b, ErrValueKind
	}
	if v.Int < lo || v.Int > hi {
		return b, ErrValueRange
	}
	return strconv.AppendInt(b, v.Int, 10), nil
}

// appendFallback writes a null that arrived for a required (NOT NULL)
// column. Debezium does not write null there — JsonConverter would reject
// it — but the converter's fallback value (JdbcValueConverters.convertValue:
// the schema default, else a per-type zero). This happens for real in
// PostgreSQL deletes under REPLICA IDENTITY DEFAULT, whose old row has only
// the key columns.
func (p *colPlan) appendFallback(b []byte) []byte {
	switch p.enc {
	case encBool:
		return append(b, "false"...)
	case encFloat32, encFloat64, encDecimalDouble:
		return append(b, "0.0"...)
	case encDecimalString:
		// BigDecimal.ZERO at the column's scale, toPlainString: "0.000".
		b = append(b, `"0`...)
		if p.scale > 0 {
			b = append(b, '.')
			for range p.scale {
				b = append(b, '0')
			}
		}
		return append(b, '"')
	case encDecimal:
		return append(b, `"AA=="`...)
	case encVarDecimal:
		return append(b, `{"scale":0,"value":"AA=="}`...)
	case encString, encBytes, encBytesBase64, encBytesHex:
		if p.zero != nil {
			return append(b, p.zero...)
		}
		return append(b, `""`...)
	case encZoned:
		// Debezium's fallback instant is written without a fraction
		// whatever the column's precision (a schema default of a NOT NULL
		// column has the precision's digits: columnDefault).
		return append(b, `"1970-01-01T00:00:00Z"`...)
	case encZonedTime:
		return append(b, `"00:00:00Z"`...)
	case encArray:
		return append(b, "[]"...)
	case encPoint, encGeometry:
		return p.appendSpatialFallback(b)
	}
	return append(b, '0') // integers, dates, times, timestamps: the epoch
}

// appendUnavailable writes Debezium's placeholder for a value PostgreSQL did
// not send. Only variable-length types can be TOASTed: text-like columns get
// the placeholder string, bytea its bytes, arrays the form of
// arrayUnavailable (null where Debezium's placeholder fails to convert).
// Other kinds have no placeholder in Debezium's PostgreSQL connector and are
// an error.
func (p *colPlan) appendUnavailable(b []byte) ([]byte, error) {
	switch p.enc {
	case encString:
		return append(b, `"`+unavailablePlaceholder+`"`...), nil
	case encBytes:
		return append(b, unavailableBytesJSON...), nil
	case encBytesHex:
		// Debezium passes the placeholder string through the hex
		// converter unchanged.
		return append(b, `"`+unavailablePlaceholder+`"`...), nil
	case encBytesBase64:
		// The placeholder's bytes do not convert to the string schema
		// ("Unexpected JDBC BINARY value"): null, verified side by side
		// (integration/scenario/format_oracle_test.go).
		if p.optional {
			return append(b, "null"...), nil
		}
	case encPoint, encGeometry:
		// Debezium's placeholder is a string that fails to convert to the
		// struct: it logs a DataException and writes null (the schema is
		// optional). A point is never TOASTed (16 bytes).
		return append(b, "null"...), nil
	case encArray:
		if p.unavailable != nil {
			return append(b, p.unavailable...), nil
		}
		if p.optional {
			return append(b, "null"...), nil
		}
	}
	return b, ErrUnavailable
}
