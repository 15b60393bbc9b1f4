package mongodb

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// A MongoDB Extended JSON writer that reproduces, byte for byte, what the
// MongoDB Java driver's JsonWriter produces for the settings Debezium's
// MongoDB connector uses: documents in Extended JSON v1 "strict" mode, keys
// and update descriptions in v2 "relaxed" mode. The Go driver's own
// bson.MarshalExtJSON writes another spacing, other number forms and other
// string escapes, so it cannot be used for messages that must match
// Debezium's.

// jsonMode is the Extended JSON dialect.
type jsonMode uint8

const (
	// modeStrict is Extended JSON v1 strict mode (JsonMode.STRICT).
	modeStrict jsonMode = iota
	// modeRelaxed is Extended JSON v2 relaxed mode (JsonMode.RELAXED).
	modeRelaxed
)

// jsonStyle is the writer's separators.
type jsonStyle uint8

const (
	// styleCompact is indent on with empty indent and newline strings, as
	// Debezium configures: members separated by "," alone.
	styleCompact jsonStyle = iota
	// styleDefault is the driver's default settings (BsonDocument.toJson()):
	// members separated by ", ".
	styleDefault
)

type xjsonWriter struct {
	mode  jsonMode
	style jsonStyle
}

// sep is what goes between two members or elements.
func (w xjsonWriter) sep() string {
	if w.style == styleCompact {
		return ","
	}
	return ", "
}

// appendDocument appends doc as an Extended JSON object.
func (w xjsonWriter) appendDocument(b []byte, doc bson.Raw) ([]byte, error) {
	b = append(b, '{')
	first := true
	err := eachElement(doc, func(key []byte, v bson.RawValue) error {
		if !first {
			b = append(b, w.sep()...)
		}
		first = false
		b = appendJavaString(b, key)
		b = append(b, ':', ' ')
		var err error
		b, err = w.appendValue(b, v)
		return err
	})
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// eachElement hands f each element of doc in order, with the checks and
// errors of doc.Elements, but without making the list of them (nor a
// string of each key).
func eachElement(doc bson.Raw, f func(key []byte, v bson.RawValue) error) error {
	if len(doc) == 0 {
		return nil
	}
	length, rem, ok := bsoncore.ReadLength(doc)
	if !ok {
		return fmt.Errorf("document: %w", bsoncore.NewInsufficientBytesError(doc, rem))
	}
	for length -= 4; length > 1; {
		elem, next, ok := bsoncore.ReadElement(rem)
		length -= int32(len(elem))
		if !ok {
			return fmt.Errorf("document: %w", bsoncore.NewInsufficientBytesError(doc, next))
		}
		if err := elem.Validate(); err != nil {
			return fmt.Errorf("document: %w", err)
		}
		rem = next
		v := elem.Value()
		if err := f(elem.KeyBytes(), bson.RawValue{Type: bson.Type(v.Type), Value: v.Data}); err != nil {
			return err
		}
	}
	return nil
}

func (w xjsonWriter) appendArray(b []byte, arr bson.RawArray) ([]byte, error) {
	vals, err := arr.Values()
	if err != nil {
		return b, fmt.Errorf("array: %w", err)
	}
	b = append(b, '[')
	for i, v := range vals {
		if i > 0 {
			b = append(b, w.sep()...)
		}
		if b, err = w.appendValue(b, v); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// member appends `"name": ` preceded by the separator unless first.
func (w xjsonWriter) member(b []byte, first bool, name string) []byte {
	if !first {
		b = append(b, w.sep()...)
	}
	b = appendJavaString(b, name)
	return append(b, ':', ' ')
}

// open appends `{"name": `, an object's first member.
func (w xjsonWriter) open(b []byte, name string) []byte {
	return w.member(append(b, '{'), true, name)
}

// str appends `{"name": "value"}`.
func (w xjsonWriter) str(b []byte, name, value string) []byte {
	return append(appendJavaString(w.open(b, name), value), '}')
}

// pair appends `{"name1": "value1", "name2": "value2"}`.
func (w xjsonWriter) pair(b []byte, name1, value1, name2, value2 string) []byte {
	b = appendJavaString(w.open(b, name1), value1)
	b = w.member(b, false, name2)
	return append(appendJavaString(b, value2), '}')
}

// numberLong appends `{"$numberLong": "n"}`.
func (w xjsonWriter) numberLong(b []byte, n int64) []byte {
	b = append(w.open(b, "$numberLong"), '"')
	return append(strconv.AppendInt(b, n, 10), '"', '}')
}

// appendValue appends one BSON value.
func (w xjsonWriter) appendValue(b []byte, v bson.RawValue) ([]byte, error) {
	if err := v.Validate(); err != nil {
		return b, fmt.Errorf("bson value of type %s: %w", v.Type, err)
	}
	switch v.Type {
	case bson.TypeDouble:
		return w.appendDouble(b, v.Double()), nil
	case bson.TypeString:
		str, ok := v.StringValueOK()
		if !ok {
			return b, malformed(v)
		}
		return appendJavaString(b, str), nil
	case bson.TypeEmbeddedDocument:
		doc, ok := v.DocumentOK()
		if !ok {
			return b, malformed(v)
		}
		return w.appendDocument(b, doc)
	case bson.TypeArray:
		arr, ok := v.ArrayOK()
		if !ok {
			return b, malformed(v)
		}
		return w.appendArray(b, arr)
	case bson.TypeBinary:
		sub, data, ok := v.BinaryOK()
		if !ok {
			return b, malformed(v)
		}
		enc := base64.StdEncoding.EncodeToString(data)
		hex := fmt.Sprintf("%02X", sub)
		if w.mode == modeStrict {
			return w.pair(b, "$binary", enc, "$type", hex), nil
		}
		b = w.open(b, "$binary")
		b = w.pair(b, "base64", enc, "subType", hex)
		return append(b, '}'), nil
	case bson.TypeUndefined:
		return append(w.open(b, "$undefined"), "true}"...), nil
	case bson.TypeObjectID:
		return w.str(b, "$oid", v.ObjectID().Hex()), nil
	case bson.TypeBoolean:
		return strconv.AppendBool(b, v.Boolean()), nil
	case bson.TypeDateTime:
		return w.appendDate(b, v.DateTime()), nil
	case bson.TypeNull:
		return append(b, "null"...), nil
	case bson.TypeRegex:
		pattern, options, ok := v.RegexOK()
		if !ok {
			return b, malformed(v)
		}
		// BsonRegularExpression sorts its options.
		if w.mode == modeStrict {
			b = appendJavaString(w.open(b, "$regex"), pattern)
			b = w.member(b, false, "$options")
			return append(appendRegexOptions(b, options), '}'), nil
		}
		b = w.open(b, "$regularExpression")
		b = appendJavaString(w.open(b, "pattern"), pattern)
		b = w.member(b, false, "options")
		return append(appendRegexOptions(b, options), '}', '}'), nil
	case bson.TypeDBPointer:
		ns, oid, ok := v.DBPointerOK()
		if !ok {
			return b, malformed(v)
		}
		// {$ref, $id} in both modes: the Java driver wraps it in
		// $dbPointer in EXTENDED (canonical) mode only, which Debezium
		// does not use.
		b = appendJavaString(w.open(b, "$ref"), ns)
		b = w.member(b, false, "$id")
		return append(w.str(b, "$oid", oid.Hex()), '}'), nil
	case bson.TypeJavaScript:
		code, ok := v.JavaScriptOK()
		if !ok {
			return b, malformed(v)
		}
		return w.str(b, "$code", code), nil
	case bson.TypeSymbol:
		sym, ok := v.SymbolOK()
		if !ok {
			return b, malformed(v)
		}
		return w.str(b, "$symbol", sym), nil
	case bson.TypeCodeWithScope:
		// Validate checks a code with scope's total length only: its
		// parts are read without panicking, or the value is refused.
		code, scope, ok := v.CodeWithScopeOK()
		if !ok {
			return b, malformed(v)
		}
		b = appendJavaString(w.open(b, "$code"), code)
		b = w.member(b, false, "$scope")
		var err error
		if b, err = w.appendDocument(b, scope); err != nil {
			return b, err
		}
		return append(b, '}'), nil
	case bson.TypeInt32:
		return strconv.AppendInt(b, int64(v.Int32()), 10), nil
	case bson.TypeTimestamp:
		t, i := v.Timestamp()
		b = w.open(w.open(b, "$timestamp"), "t")
		b = strconv.AppendUint(b, uint64(t), 10)
		b = w.member(b, false, "i")
		b = strconv.AppendUint(b, uint64(i), 10)
		return append(b, '}', '}'), nil
	case bson.TypeInt64:
		n := v.Int64()
		if w.mode == modeRelaxed {
			return strconv.AppendInt(b, n, 10), nil
		}
		return w.numberLong(b, n), nil
	case bson.TypeDecimal128:
		return w.str(b, "$numberDecimal", v.Decimal128().String()), nil
	case bson.TypeMinKey:
		return append(w.open(b, "$minKey"), "1}"...), nil
	case bson.TypeMaxKey:
		return append(w.open(b, "$maxKey"), "1}"...), nil
	}
	return b, fmt.Errorf("unsupported bson type %s", v.Type)
}

// malformed is the error of a value whose bytes do not hold its type.
func malformed(v bson.RawValue) error {
	return fmt.Errorf("bson value of type %s: malformed", v.Type)
}

// appendDouble: strict mode writes Java's Double.toString, NaN and the
// infinities bare (not valid JSON, but what the Java driver writes);
// relaxed mode wraps those three in $numberDouble.
func (w xjsonWriter) appendDouble(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		s := "NaN"
		if math.IsInf(f, 1) {
			s = "Infinity"
		} else if math.IsInf(f, -1) {
			s = "-Infinity"
		}
		if w.mode == modeStrict {
			return append(b, s...)
		}
		return w.str(b, "$numberDouble", s)
	}
	return appendJavaDouble(b, f)
}

// maxISODate is 9999-12-31T23:59:59.999Z: relaxed mode writes dates from
// 1970 up to it as ISO-8601 strings, others as $numberLong.
const maxISODate = 253402300799999

func (w xjsonWriter) appendDate(b []byte, ms int64) []byte {
	b = w.open(b, "$date")
	switch {
	case w.mode == modeStrict:
		b = strconv.AppendInt(b, ms, 10)
	case ms >= 0 && ms <= maxISODate:
		t := time.UnixMilli(ms).UTC()
		s := t.Format("2006-01-02T15:04:05")
		if frac := ms % 1000; frac != 0 {
			// The Java driver's formatter prints the fewest digits (".68").
			s += strings.TrimRight(fmt.Sprintf(".%03d", frac), "0")
		}
		b = appendJavaString(b, s+"Z")
	default:
		b = w.numberLong(b, ms)
	}
	return append(b, '}')
}

// appendJavaDouble appends Double.toString(f) for a finite f: plain decimal
// with at least one fraction digit for 1e-3 <= |f| < 1e7, else
// d.dddE±n, from the shortest digits that round-trip.
func appendJavaDouble(b []byte, f float64) []byte {
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return append(b, s...)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // e.g. -1.2345e+21, 1e-05
	if len(strings.TrimPrefix(s[:strings.IndexByte(s, 'e')], "-")) == 1 && abs < 0x1p-1022 {
		// Among subnormals Java prefers the two-digit decimal closest to
		// the value over a one-digit one further away (Double.MIN_VALUE
		// is 4.9E-324, not 5.0E-324).
		if s2 := strconv.FormatFloat(f, 'e', 1, 64); s2[len(s2)-len("e-324")-1] != '0' {
			if g, err := strconv.ParseFloat(s2, 64); err == nil && g == f {
				s = s2
			}
		}
	}
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	b = append(b, mant...)
	b = append(b, 'E')
	return strconv.AppendInt(b, int64(n), 10)
}

// appendJavaString appends s quoted as the Java driver's JSON writer does:
// the short escapes for '"', '\\' and \b \f \n \r \t; letters, digits,
// punctuation, symbols and space separators raw; every other UTF-16 code
// unit (controls, format and private-use characters, unassigned code
// points, combining marks, and both halves of a surrogate pair) as \uxxxx
// with lower-case hex. Invalid UTF-8 becomes U+FFFD, as in a Java String.
func appendJavaString[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	for len(s) > 0 {
		// A run of printable ASCII but '"' and '\\' is written as it is.
		i := 0
		for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\' {
			i++
		}
		b = append(b, s[:i]...)
		if s = s[i:]; len(s) == 0 {
			break
		}
		// As ranging over s: invalid UTF-8 is U+FFFD, one byte at a time.
		r, size := decodeRune(s)
		s = s[size:]
		switch r {
		case '"':
			b = append(b, '\\', '"')
			continue
		case '\\':
			b = append(b, '\\', '\\')
			continue
		case '\b':
			b = append(b, '\\', 'b')
			continue
		case '\f':
			b = append(b, '\\', 'f')
			continue
		case '\n':
			b = append(b, '\\', 'n')
			continue
		case '\r':
			b = append(b, '\\', 'r')
			continue
		case '\t':
			b = append(b, '\\', 't')
			continue
		}
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			b = appendU(b, hi)
			b = appendU(b, lo)
			continue
		}
		if javaRaw(r) {
			b = utf8.AppendRune(b, r)
			continue
		}
		b = appendU(b, r)
	}
	return append(b, '"')
}

// appendRegexOptions appends a regex's options as a string with their
// characters sorted, as Java's BsonRegularExpression constructor sorts
// them: by UTF-16 unit, so the halves of a character outside the BMP may
// part, each then written as \uxxxx as Java writes a lone surrogate.
func appendRegexOptions(b []byte, options string) []byte {
	if !isASCII(options) {
		b = append(b, '"')
		for _, u := range sortedUnits(options) {
			if utf16.IsSurrogate(rune(u)) {
				b = appendU(b, rune(u))
				continue
			}
			q := appendJavaString(nil, string(rune(u)))
			b = append(b, q[1:len(q)-1]...)
		}
		return append(b, '"')
	}
	return appendJavaString(b, sortedOptions(options))
}

// sortedOptions is a regex's options as BsonRegularExpression keeps them,
// sorted by UTF-16 unit (the unwrap transform's regex struct): a
// character outside the BMP whose halves part is written as U+FFFD.
// Sorting the UTF-8 bytes instead would cut the other characters apart.
func sortedOptions(options string) string {
	if !isASCII(options) {
		return string(utf16.Decode(sortedUnits(options)))
	}
	for i := 1; i < len(options); i++ {
		if options[i] < options[i-1] {
			opts := []byte(options)
			slices.Sort(opts)
			return string(opts)
		}
	}
	return options
}

// sortedUnits is s in UTF-16 units, sorted, as Java sorts a string's
// chars.
func sortedUnits(s string) []uint16 {
	units := utf16.Encode([]rune(s))
	slices.Sort(units)
	return units
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// decodeRune is utf8.DecodeRune of s's first bytes, string or not.
func decodeRune[S ~string | ~[]byte](s S) (rune, int) {
	var head [utf8.UTFMax]byte
	return utf8.DecodeRune(head[:copy(head[:], s)])
}

func appendU(b []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// javaRaw reports whether the Java writer writes a BMP rune unescaped: the
// Unicode general categories Lu Ll Lt Lo Nd Nl No Zs Pc Pd Ps Pe Pi Pf Po
// Sm Sc Sk So (Lm, the marks, Zl, Zp and C* are escaped).
func javaRaw(r rune) bool {
	if r < 0x80 {
		return r >= 0x20 && r < 0x7f
	}
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Lo,
		unicode.Nd, unicode.Nl, unicode.No, unicode.Zs,
		unicode.Pc, unicode.Pd, unicode.Ps, unicode.Pe, unicode.Pi, unicode.Pf, unicode.Po,
		unicode.Sm, unicode.Sc, unicode.Sk, unicode.So)
}
