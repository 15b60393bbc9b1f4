package postgres

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Type OIDs of the built-in types this source maps (pg_type.dat).
const (
	oidBool        = 16
	oidBytea       = 17
	oidName        = 19
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidOID         = 26
	oidJSON        = 114
	oidXML         = 142
	oidFloat4      = 700
	oidFloat8      = 701
	oidMoney       = 790
	oidMacaddr     = 829
	oidInet        = 869
	oidCidr        = 650
	oidBpchar      = 1042
	oidVarchar     = 1043
	oidDate        = 1082
	oidTime        = 1083
	oidTimestamp   = 1114
	oidTimestampTZ = 1184
	oidNumeric     = 1700
	oidUUID        = 2950
	oidJSONB       = 3802
	oidMacaddr8    = 774
	oidTimeTZ      = 1266
	oidInterval    = 1186
	oidBit         = 1560
	oidVarbit      = 1562
	oidChar        = 18 // "char": one byte
	oidPoint       = 600
	oidTsvector    = 3614
	oidInt4Range   = 3904
	oidNumRange    = 3906
	oidTsRange     = 3908
	oidTsTzRange   = 3910
	oidDateRange   = 3912
	oidInt8Range   = 3926
)

// columnType maps a Postgres type (OID, typmod, name) to the neutral type.
// Types without a mapping get KindUnknown: left out of messages (as
// Debezium does with include.unknown.datatypes=false) and reported, or
// published as text with source.include_unknown_types.
func columnType(oid uint32, typmod int32, name string) change.Type {
	t := change.Type{Name: name, Precision: -1, Scale: -1, Length: -1}
	switch oid {
	case oidBool:
		t.Kind = change.KindBool
	case oidInt2:
		t.Kind = change.KindInt16
	case oidInt4:
		t.Kind = change.KindInt32
	case oidInt8, oidOID:
		t.Kind = change.KindInt64
	case oidFloat4:
		t.Kind = change.KindFloat32
	case oidFloat8:
		t.Kind = change.KindFloat64
	case oidNumeric:
		t.Kind = change.KindDecimal
		if typmod >= 4 {
			t.Precision = int((typmod - 4) >> 16)
			t.Scale = int((typmod - 4) & 0xffff)
		}
	case oidText, oidName, oidMacaddr, oidMacaddr8, oidInet, oidCidr:
		t.Kind = change.KindString
	case oidXML:
		t.Kind = change.KindXML
	case oidMoney:
		// Debezium: a Decimal of scale 2 without a precision parameter.
		t.Kind = change.KindDecimal
		t.Scale = 2
	case oidTimeTZ:
		t.Kind = change.KindTimeTZ
		t.Precision = timePrecision(typmod)
	case oidInterval:
		t.Kind = change.KindDuration
	case oidBit, oidVarbit:
		// bit(1) and varbit(1) are booleans for Debezium (its
		// PostgresValueConverter goes by the length alone); longer
		// strings are Bits.
		t.Length = int(typmod)
		if typmod < 0 {
			// varbit without a length: Debezium's length is Integer.MAX_VALUE.
			t.Length = math.MaxInt32
		}
		if typmod == 1 {
			t.Kind = change.KindBool
		} else {
			t.Kind = change.KindBits
		}
	case oidVarchar, oidBpchar:
		t.Kind = change.KindString
		if typmod >= 4 {
			t.Length = int(typmod - 4)
		}
	case oidJSON, oidJSONB:
		t.Kind = change.KindJSON
	case oidUUID:
		t.Kind = change.KindUUID
	case oidBytea:
		t.Kind = change.KindBytes
	case oidDate:
		t.Kind = change.KindDate
	case oidTime:
		t.Kind = change.KindTime
		t.Precision = timePrecision(typmod)
	case oidTimestamp:
		t.Kind = change.KindTimestamp
		t.Precision = timePrecision(typmod)
	case oidTimestampTZ:
		t.Kind = change.KindTimestampTZ
		t.Precision = timePrecision(typmod)
	case oidChar, oidInt4Range, oidInt8Range, oidNumRange, oidTsRange, oidTsTzRange, oidDateRange:
		// Debezium publishes these as strings in PostgreSQL's text form.
		t.Kind = change.KindString
	case oidTsvector:
		t.Kind = change.KindTsvector
	case oidPoint:
		t.Kind = change.KindPoint
	default:
		// Extension types have no fixed OID: Debezium's type registry
		// finds them by name, and so does this.
		t.Kind = extensionKind(name)
	}
	return t
}

// debeziumDefaults are the types whose defaults Debezium's
// PostgresDefaultValueConverter converts (createDefaultValueMappers), by
// pg_type name; enums too. A column of any other type (a domain included:
// Debezium looks its own name up) has no schema default, and a key-only old
// image keeps its null.
var debeziumDefaults = map[string]bool{
	"bit": true, "varbit": true, "bool": true, "bpchar": true, "varchar": true, "text": true, "numeric": true,
	"float4": true, "float8": true, "int2": true, "int4": true, "int8": true, "json": true, "jsonb": true,
	"xml": true, "uuid": true, "date": true, "time": true, "timestamp": true, "timestamptz": true, "interval": true,
}

// defaultConverted says whether Debezium's default-value converter knows
// t, so that a column of it gets a schema default.
func defaultConverted(t change.Type) bool {
	if t.Kind == change.KindDecimal && t.Name == "numeric" && t.Precision < 0 {
		// A VariableScaleDecimal: Debezium's BigDecimal default does not
		// fit the struct, so it has none (the differential oracle,
		// integration/scenario/differential_test.go, saw it side by side).
		return false
	}
	return t.Kind == change.KindEnum || debeziumDefaults[t.Name]
}

// extensionKind maps the extension types Debezium knows by name; other
// types are KindUnknown (left out of messages and reported, or published
// as text when source.include_unknown_types is set).
func extensionKind(name string) change.Kind {
	switch name {
	case "citext":
		return change.KindString
	case "ltree":
		return change.KindLtree
	case "geometry":
		return change.KindGeometry
	case "geography":
		return change.KindGeography
	}
	return change.KindUnknown
}

func timePrecision(typmod int32) int {
	if typmod < 0 {
		return 6
	}
	return int(typmod)
}

// decodeText turns a value in Postgres text output format (what pgoutput
// and a text-format query send) into a Value for a column of type t. The
// bytes come from the server, so every malformed input is an error, never
// a panic. The caller hands src over: the returned Value may alias it, and
// a bytea or a geometry is decoded over it (unhexInPlace).
func decodeText(t change.Type, src []byte) (change.Value, error) {
	switch t.Kind {
	case change.KindBool:
		switch string(src) {
		case "t", "1": // "1": a bit(1) column
			return change.IntValue(1), nil
		case "f", "0":
			return change.IntValue(0), nil
		case "":
			// An empty varbit(1): Debezium fails to convert it and
			// writes null (its connector stops in a NOT NULL column,
			// where the encoder writes false, the fallback).
			if t.Name == "varbit" {
				return change.Value{}, nil
			}
		}
		return change.Value{}, fmt.Errorf("bad boolean %q", trunc(src))
	case change.KindInt16, change.KindInt32, change.KindInt64:
		i, err := strconv.ParseInt(string(src), 10, 64)
		if err != nil {
			// oid is unsigned 32-bit; it fits int64.
			return change.Value{}, fmt.Errorf("bad integer %q", trunc(src))
		}
		return change.IntValue(i), nil
	case change.KindFloat32, change.KindFloat64:
		f, err := strconv.ParseFloat(string(src), 64)
		if err != nil {
			return change.Value{}, fmt.Errorf("bad float %q", trunc(src))
		}
		return change.FloatValue(f), nil
	case change.KindDecimal:
		if t.Name == "money" {
			return parseMoney(src)
		}
		if !validDecimal(src) {
			return change.Value{}, fmt.Errorf("bad numeric %q", trunc(src))
		}
		return change.Value{Kind: change.Text, Bytes: src}, nil
	case change.KindJSON:
		if t.Name == "hstore" {
			return hstoreToJSON(src)
		}
		return change.Value{Kind: change.Text, Bytes: src}, nil
	case change.KindString, change.KindUUID, change.KindXML, change.KindEnum, change.KindTsvector, change.KindLtree:
		return change.Value{Kind: change.Text, Bytes: src}, nil
	case change.KindUnknown:
		// The text form, for debezium.Options.IncludeUnknownTypes (the
		// encoder leaves the column out otherwise).
		return change.BinaryValue(src), nil
	case change.KindPoint:
		return parsePoint(src)
	case change.KindGeometry, change.KindGeography:
		return parseHexEWKB(src)
	case change.KindTimeTZ:
		us, err := parseTimeTZ(src)
		if err != nil {
			return change.Value{}, err
		}
		return change.IntValue(us), nil
	case change.KindDuration:
		us, err := parseInterval(src)
		if err != nil {
			return change.Value{}, err
		}
		return change.IntValue(us), nil
	case change.KindBits:
		b, err := parseBits(src)
		if err != nil {
			return change.Value{}, err
		}
		return change.BinaryValue(b), nil
	case change.KindArray:
		if t.Elem == nil {
			return change.Value{}, fmt.Errorf("array type %s without element type", t.Name)
		}
		return parseArray(*t.Elem, src)
	case change.KindBytes:
		if len(src) < 2 || src[0] != '\\' || src[1] != 'x' {
			return change.Value{}, fmt.Errorf("bad bytea: want hex format (bytea_output=hex)")
		}
		b, err := unhexInPlace(src, 2)
		if err != nil {
			return change.Value{}, fmt.Errorf("bad bytea: %v", err)
		}
		return change.BinaryValue(b), nil
	case change.KindDate:
		d, err := parseDate(src)
		if err != nil {
			return change.Value{}, err
		}
		return change.IntValue(d), nil
	case change.KindTime:
		us, err := parseClock(src)
		if err != nil {
			return change.Value{}, err
		}
		return change.IntValue(us), nil
	case change.KindTimestamp, change.KindTimestampTZ:
		return parseTimestamp(src, t.Kind == change.KindTimestampTZ)
	}
	return change.Value{}, fmt.Errorf("type %s has no decoder", t.Name)
}

// unhexInPlace decodes the hex digits of src[from:], two a byte (a
// bytea's after its `\x`, a geometry's EWKB), over src itself: byte i is
// written where digit 2i+from was, after every digit before it is read,
// so a value costs no allocation. The error quotes the first pair that is
// not hex, which is still as the server sent it.
func unhexInPlace(src []byte, from int) ([]byte, error) {
	digits := src[from:]
	if len(digits)%2 != 0 {
		return nil, fmt.Errorf("odd number of hex digits")
	}
	for i := 0; i < len(digits)/2; i++ {
		hi, ok1 := unhex(digits[2*i])
		lo, ok2 := unhex(digits[2*i+1])
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%q is not hex", digits[2*i:2*i+2])
		}
		src[i] = hi<<4 | lo
	}
	return src[:len(digits)/2], nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func trunc(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// validDecimal accepts Postgres numeric output: [-]digits[.digits], NaN,
// Infinity, -Infinity.
func validDecimal(b []byte) bool {
	switch string(b) {
	case "NaN", "Infinity", "-Infinity":
		return true
	}
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits, dot := 0, false
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// Sentinels for ±infinity dates and timestamps, as Debezium writes them.
const (
	infinityMicros    = int64(9223372036825200000)
	negInfinityMicros = int64(-9223372036832400000)
)

// parseDate parses YYYY-MM-DD (optionally " BC") to days since the epoch.
func parseDate(b []byte) (int64, error) {
	switch string(b) {
	case "infinity":
		return infinityMicros / 86400e6, nil
	case "-infinity":
		return negInfinityMicros / 86400e6, nil
	}
	y, m, d, rest, err := splitDate(b)
	if err != nil || len(rest) != 0 {
		return 0, fmt.Errorf("bad date %q", trunc(b))
	}
	return daysFromCivil(y, m, d), nil
}

// parseClock parses HH:MM:SS[.ffffff] to µs since midnight (24:00:00 allowed).
func parseClock(b []byte) (int64, error) {
	us, rest, err := splitClock(b)
	if err != nil || len(rest) != 0 {
		return 0, fmt.Errorf("bad time %q", trunc(b))
	}
	return us, nil
}

// parseTimestamp parses "YYYY-MM-DD HH:MM:SS[.ffffff][±HH[:MM[:SS]]][ BC]"
// (DateStyle ISO) to µs since the epoch, or to a change.FarTimestamp past
// what an int64 of µs holds (PostgreSQL's last 30 years, to 294276 AD);
// with tz the offset is required and applied.
func parseTimestamp(b []byte, tz bool) (change.Value, error) {
	switch string(b) {
	case "infinity":
		if tz {
			return change.IntValue(math.MaxInt64), nil // the encoder writes "infinity"
		}
		return change.IntValue(infinityMicros), nil
	case "-infinity":
		if tz {
			return change.IntValue(math.MinInt64), nil
		}
		return change.IntValue(negInfinityMicros), nil
	}
	// The error is built only on failure: every streamed and backfilled
	// timestamp passes here, and formatting it eagerly is a measurable
	// share of a backfill's CPU (docs/hot-path.md).
	bad := func() error { return fmt.Errorf("bad timestamp %q", trunc(b)) }
	y, m, d, rest, err := splitDate(b)
	if err != nil || len(rest) < 1 || rest[0] != ' ' {
		return change.Value{}, bad()
	}
	clock, rest, err := splitClock(rest[1:])
	if err != nil {
		return change.Value{}, bad()
	}
	var offset int64
	if tz {
		if len(rest) < 3 || (rest[0] != '+' && rest[0] != '-') {
			return change.Value{}, bad()
		}
		sign := int64(1)
		if rest[0] == '-' {
			sign = -1
		}
		rest = rest[1:]
		secs := int64(0)
		for part := 0; part < 3 && len(rest) >= 2; part++ {
			n, ok := atoi2(rest)
			if !ok {
				return change.Value{}, bad()
			}
			secs = secs*60 + int64(n)
			rest = rest[2:]
			if len(rest) > 0 && rest[0] == ':' {
				rest = rest[1:]
				continue
			}
			for p := part + 1; p < 3; p++ {
				secs *= 60
			}
			break
		}
		offset = sign * secs * 1e6
	}
	if string(rest) == " BC" {
		y = 1 - y
		rest = nil
	}
	if len(rest) != 0 {
		return change.Value{}, bad()
	}
	// Seconds and µs apart first: the µs of the last 30 years overflow.
	rem := clock - offset // within two days either way
	sec := daysFromCivil(y, m, d)*86400 + rem/1e6
	us := rem % 1e6
	if us < 0 {
		sec, us = sec-1, us+1e6
	}
	const maxSec, maxFrac = math.MaxInt64 / 1_000_000, math.MaxInt64 % 1_000_000
	if sec > maxSec || sec == maxSec && us > maxFrac || sec < -maxSec {
		return change.FarTimestamp(sec, us), nil
	}
	return change.IntValue(sec*1e6 + us), nil
}

func splitDate(b []byte) (y, m, d int64, rest []byte, err error) {
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i < 4 || len(b) < i+6 || b[i] != '-' || b[i+3] != '-' {
		return 0, 0, 0, nil, fmt.Errorf("bad date")
	}
	y, _ = strconv.ParseInt(string(b[:i]), 10, 64)
	mm, ok1 := atoi2(b[i+1:])
	dd, ok2 := atoi2(b[i+4:])
	if !ok1 || !ok2 || mm < 1 || mm > 12 || dd < 1 || dd > 31 {
		return 0, 0, 0, nil, fmt.Errorf("bad date")
	}
	rest = b[i+6:]
	if len(rest) >= 3 && string(rest[:3]) == " BC" && (len(rest) == 3) {
		y = 1 - y
		rest = rest[3:]
	}
	return y, int64(mm), int64(dd), rest, nil
}

func splitClock(b []byte) (us int64, rest []byte, err error) {
	if len(b) < 8 || b[2] != ':' || b[5] != ':' {
		return 0, nil, fmt.Errorf("bad time")
	}
	h, ok1 := atoi2(b)
	mi, ok2 := atoi2(b[3:])
	s, ok3 := atoi2(b[6:])
	if !ok1 || !ok2 || !ok3 || h > 24 || mi > 59 || s > 60 {
		return 0, nil, fmt.Errorf("bad time")
	}
	us = (int64(h)*3600 + int64(mi)*60 + int64(s)) * 1e6
	rest = b[8:]
	if len(rest) > 0 && rest[0] == '.' {
		rest = rest[1:]
		scale := int64(100000)
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			if n < 6 {
				us += int64(rest[n]-'0') * scale
				scale /= 10
			}
			n++
		}
		if n == 0 {
			return 0, nil, fmt.Errorf("bad time")
		}
		rest = rest[n:]
	}
	return us, rest, nil
}

func atoi2(b []byte) (int, bool) {
	if len(b) < 2 || b[0] < '0' || b[0] > '9' || b[1] < '0' || b[1] > '9' {
		return 0, false
	}
	return int(b[0]-'0')*10 + int(b[1]-'0'), true
}

// daysFromCivil converts a proleptic Gregorian date to days since
// 1970-01-01 (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// completeImages fills in what pgoutput leaves out of row images, as
// Debezium does: an unchanged TOASTed value missing from the new image is
// taken from the old image when that holds it (REPLICA IDENTITY FULL, or a
// FULL partition under a DEFAULT root, whose old rows pgoutput marks as old
// keys); in a key-only old image the non-key columns come as nulls, and
// Debezium writes each column's default there.
func completeImages(t *change.Table, keyOnly bool, before, after change.Row) {
	if before == nil {
		return
	}
	for i := range after {
		if after[i].Kind == change.Unavailable && i < len(before) && before[i].Kind != change.Unavailable && before[i].Kind != change.Null {
			after[i] = before[i]
		}
	}
	if keyOnly {
		for i := range before {
			if d := t.Columns[i].Default; before[i].Kind == change.Null && d != nil && d.Kind != change.Null && !isKey(t, i) {
				before[i] = *d
			}
		}
	}
}

func isKey(t *change.Table, col int) bool {
	for _, k := range t.Key {
		if k == col {
			return true
		}
	}
	return false
}
