package mysql

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unsafe"

	"github.com/shopspring/decimal"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
)

// errZeroDate marks MySQL's zero dates ("0000-00-00", "2024-00-10"), which
// Debezium publishes as null.
var errZeroDate = errors.New("zero date")

// plainDecimal reports whether v is a decimal as the server writes one:
// an optional minus, digits, and optionally a point and more digits.
// Anything else is checked the slow way.
func plainDecimal(v []byte) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
	}
	digits, point := 0, false
	for _, ch := range v {
		switch {
		case ch >= '0' && ch <= '9':
			digits++
		case ch == '.' && !point && digits > 0:
			point = true
		default:
			return false
		}
	}
	return digits > 0 && v[len(v)-1] != '.'
}

// decodeText converts one value of the text protocol (backfill queries) to
// the column's neutral value. nil is NULL.
func decodeText(c *column, v []byte) (change.Value, error) {
	if v == nil {
		return change.Value{}, nil
	}
	t := &c.typ
	if fixedBinaryWidth(c.dataType) > 0 {
		return change.Value{Kind: change.Text, Bytes: v}, nil // the server's text form
	}
	switch t.Kind {
	case change.KindUnknown:
		// The raw value, for debezium.Options.IncludeUnknownTypes (the
		// encoder leaves the column out otherwise).
		return change.BinaryValue(v), nil
	case change.KindPoint, change.KindGeometry:
		return decodeGeometry(v)
	case change.KindBool:
		// BIT(1) arrives as one raw byte.
		if len(v) == 0 {
			return change.IntValue(0), nil
		}
		if v[len(v)-1]&1 != 0 {
			return change.IntValue(1), nil
		}
		return change.IntValue(0), nil
	case change.KindInt16, change.KindInt32, change.KindInt64, change.KindYear:
		s := string(v)
		if c.unsigned() {
			u, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return change.Value{}, fmt.Errorf("bad unsigned integer %q", s)
			}
			return change.IntValue(int64(u)), nil // BIGINT UNSIGNED wraps, as Debezium's long mode does
		}
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return change.Value{}, fmt.Errorf("bad integer %q", s)
		}
		return change.IntValue(i), nil
	case change.KindFloat32, change.KindFloat64:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return change.Value{}, fmt.Errorf("bad float %q", v)
		}
		if c.dataType == "float" {
			// A FLOAT (even FLOAT(M,D), a Connect double) holds a float32:
			// Debezium reads it as one and widens it, in snapshots as in the
			// binlog, so 1234.567 is 1234.5670166015625.
			f = float64(float32(f))
		}
		return change.FloatValue(f), nil
	case change.KindDecimal:
		if !plainDecimal(v) {
			if _, err := decimal.NewFromString(string(v)); err != nil {
				return change.Value{}, fmt.Errorf("bad decimal %q", v)
			}
		}
		return change.Value{Kind: change.Text, Bytes: v}, nil
	case change.KindString, change.KindJSON, change.KindEnum, change.KindSet:
		return change.Value{Kind: change.Text, Bytes: v}, nil
	case change.KindBytes:
		return change.Value{Kind: change.Binary, Bytes: v}, nil
	case change.KindBits:
		// Big-endian bytes on the wire; Debezium's Bits are little-endian,
		// (length+7)/8 bytes.
		return change.BinaryValue(bitsLE(bigEndianUint(v), t.Length)), nil
	case change.KindDate:
		d, err := parseDate(v)
		if errors.Is(err, errZeroDate) {
			return change.Value{}, nil
		}
		if err != nil {
			return change.Value{}, err
		}
		return change.IntValue(d), nil
	case change.KindTime:
		us, err := parseTime(v)
		if err != nil {
			return change.Value{}, err
		}
		return change.IntValue(us), nil
	case change.KindTimestamp, change.KindTimestampTZ:
		us, err := parseDateTime(v)
		if errors.Is(err, errZeroDate) {
			return change.Value{}, nil
		}
		if err != nil {
			return change.Value{}, err
		}
		return change.IntValue(us), nil
	}
	return change.Value{}, fmt.Errorf("no decoder for %s", t.Name)
}

// binKind is the Go type a rows event value has in go-mysql's decode
// (RowsEvent.decodeValue), which decodeBinlog's conversion depends on.
type binKind uint8

const (
	binNull    binKind = iota // nil: NULL, or a column the image leaves out
	binInt                    // an integer: i, of width bits
	binFloat32                // f
	binFloat64                // f
	binString                 // a string: b
	binBytes                  // a []byte: b
	binDecimal                // a decimal.Decimal (UseDecimal): dec
	binTime                   // a time.Time (ParseTime, which newParser leaves off): tm
	binOther                  // anything else (MySQL's partial JSON)
)

// binVal is one value of a rows event as go-mysql decodes it, unboxed:
// from go-mysql's decoded rows (boxed) or read from the event's bytes by
// the MariaDB stream's own decoder (rows.go), which gives the same.
type binVal struct {
	kind binKind
	// width is the bits of a binInt's Go type where the unsigned reading
	// depends on it (int8, int16, int32); 64 otherwise.
	width uint8
	i     int64
	f     float64
	b     []byte
	dec   decimal.Decimal
	tm    time.Time
}

// boxed is the binVal of a value of go-mysql's decoded rows.
func boxed(v any) binVal {
	switch x := v.(type) {
	case nil:
		return binVal{}
	case int8:
		return binVal{kind: binInt, width: 8, i: int64(x)}
	case int16:
		return binVal{kind: binInt, width: 16, i: int64(x)}
	case int32:
		return binVal{kind: binInt, width: 32, i: int64(x)}
	case int64:
		return binVal{kind: binInt, width: 64, i: x}
	case int:
		return binVal{kind: binInt, width: 64, i: int64(x)}
	case uint8:
		return binVal{kind: binInt, width: 64, i: int64(x)}
	case uint16:
		return binVal{kind: binInt, width: 64, i: int64(x)}
	case uint32:
		return binVal{kind: binInt, width: 64, i: int64(x)}
	case uint64:
		return binVal{kind: binInt, width: 64, i: int64(x)}
	case float32:
		return binVal{kind: binFloat32, f: float64(x)}
	case float64:
		return binVal{kind: binFloat64, f: x}
	case string:
		return binVal{kind: binString, b: stringBytes(x)}
	case []byte:
		return binVal{kind: binBytes, b: x}
	case decimal.Decimal:
		return binVal{kind: binDecimal, dec: x}
	case time.Time:
		return binVal{kind: binTime, tm: x}
	}
	return binVal{kind: binOther}
}

// rawBytes returns the bytes of a string or []byte value, without a copy.
func (v *binVal) rawBytes() ([]byte, bool) {
	return v.b, v.kind == binString || v.kind == binBytes
}

// asInt returns an integer value.
func (v *binVal) asInt() (int64, bool) { return v.i, v.kind == binInt }

// goType names the Go type go-mysql gives v, for errors.
func (v *binVal) goType() string {
	switch v.kind {
	case binInt:
		return fmt.Sprintf("int%d", v.width)
	case binFloat32:
		return "float32"
	case binFloat64:
		return "float64"
	case binString:
		return "string"
	case binBytes:
		return "[]byte"
	case binDecimal:
		return "decimal.Decimal"
	case binTime:
		return "time.Time"
	}
	return "another type"
}

// decodeBinlog converts one value of a rows event, as go-mysql decodes it
// (ParseTime off, timestamps formatted in UTC, a DECIMAL a decimal.Decimal
// or its text: UseDecimal, newParser), to the column's neutral value.
// The bytes of a BIT, SET or padded BINARY value are cut from s.
func decodeBinlog(c *column, v *binVal, s *snapshot.Slabs) (change.Value, error) {
	if v.kind == binNull {
		return change.Value{}, nil
	}
	t := &c.typ
	if c.text == nil && c.charset != "" && c.charset != "binary" {
		return change.Value{}, fmt.Errorf("text in character set %s: %w (charset.go); convert the column to utf8mb4", c.charset, errCharset)
	}
	if fixedBinaryWidth(c.dataType) > 0 {
		b, ok := v.rawBytes()
		if !ok {
			return change.Value{}, fmt.Errorf("%s: unexpected %s", c.dataType, v.goType())
		}
		var buf [64]byte
		text, err := appendFixedBinaryText(buf[:0], c.dataType, b)
		if err != nil {
			return change.Value{}, err
		}
		return change.Value{Kind: change.Text, Bytes: s.Keep(text)}, nil
	}
	switch t.Kind {
	case change.KindUnknown:
		if b, ok := v.rawBytes(); ok {
			return change.BinaryValue(b), nil
		}
		return change.Value{}, nil
	case change.KindPoint, change.KindGeometry:
		b, ok := v.rawBytes()
		if !ok {
			return change.Value{}, fmt.Errorf("%s: unexpected %s", c.dataType, v.goType())
		}
		return decodeGeometry(b)
	case change.KindBool:
		i, ok := v.asInt()
		if !ok {
			return change.Value{}, fmt.Errorf("bit(1): unexpected %s", v.goType())
		}
		if i != 0 {
			return change.IntValue(1), nil
		}
		return change.IntValue(0), nil
	case change.KindInt16, change.KindInt32, change.KindInt64:
		i, ok := v.asInt()
		if !ok {
			return change.Value{}, fmt.Errorf("%s: unexpected %s", c.dataType, v.goType())
		}
		if c.unsigned() {
			switch v.width {
			case 8:
				i = int64(uint8(i))
			case 16:
				i = int64(uint16(i))
			case 32:
				if c.dataType == "mediumint" {
					i = int64(uint32(i) & 0xffffff)
				} else {
					i = int64(uint32(i))
				}
			}
		}
		return change.IntValue(i), nil
	case change.KindYear:
		i, ok := v.asInt()
		if !ok {
			return change.Value{}, fmt.Errorf("year: unexpected %s", v.goType())
		}
		return change.IntValue(i), nil
	case change.KindFloat32, change.KindFloat64:
		if v.kind == binFloat32 || v.kind == binFloat64 {
			return change.FloatValue(v.f), nil
		}
		return change.Value{}, fmt.Errorf("%s: unexpected %s", c.dataType, v.goType())
	case change.KindDecimal:
		switch v.kind {
		case binDecimal:
			return change.Value{Kind: change.Text, Bytes: decimalText(v.dec, int32(max(t.Scale, 0)))}, nil
		case binString:
			// go-mysql's text of the binlog's DECIMAL (UseDecimal off,
			// newParser): the value as is when it is what decimalText
			// writes of it, else what decimalText writes.
			if fixedDecimal(v.b, max(t.Scale, 0)) {
				return change.Value{Kind: change.Text, Bytes: v.b}, nil
			}
			dec, err := decimal.NewFromString(string(v.b))
			if err != nil {
				return change.Value{}, fmt.Errorf("bad decimal %q", v.b)
			}
			return change.Value{Kind: change.Text, Bytes: decimalText(dec, int32(max(t.Scale, 0)))}, nil
		}
		return change.Value{}, fmt.Errorf("decimal: unexpected %s", v.goType())
	case change.KindString, change.KindJSON:
		b, ok := v.rawBytes()
		if !ok {
			return change.Value{}, fmt.Errorf("%s: unexpected %s", c.dataType, v.goType())
		}
		// Rows events carry text in the column's character set (the
		// backfill session asks for utf8mb4 instead).
		if c.text != nil {
			var err error
			if b, err = c.text.decode(b); err != nil {
				return change.Value{}, err
			}
		}
		return change.Value{Kind: change.Text, Bytes: b}, nil
	case change.KindBytes:
		b, ok := v.rawBytes()
		if !ok {
			return change.Value{}, fmt.Errorf("%s: unexpected %s", c.dataType, v.goType())
		}
		if c.dataType == "binary" && len(b) < c.octets {
			// The binlog drops BINARY(n)'s trailing zero bytes; the column
			// value (and Debezium's) has all n.
			var buf [256]byte
			b = s.Keep(append(append(buf[:0], b...), make([]byte, c.octets-len(b))...))
		}
		return change.BinaryValue(b), nil
	case change.KindBits:
		i, ok := v.asInt()
		if !ok {
			return change.Value{}, fmt.Errorf("bit: unexpected %s", v.goType())
		}
		var buf [8]byte
		return change.BinaryValue(s.Keep(appendBitsLE(buf[:0], uint64(i), t.Length))), nil
	case change.KindEnum:
		i, ok := v.asInt()
		if !ok {
			return change.Value{}, fmt.Errorf("enum: unexpected %s", v.goType())
		}
		if i <= 0 || int(i) > len(c.members) {
			return change.TextValue(""), nil // the error value ''
		}
		return change.Value{Kind: change.Text, Bytes: stringBytes(c.members[i-1])}, nil
	case change.KindSet:
		i, ok := v.asInt()
		if !ok {
			return change.Value{}, fmt.Errorf("set: unexpected %s", v.goType())
		}
		var buf [256]byte
		members := buf[:0]
		for j := range c.members {
			if j < 64 && uint64(i)&(1<<j) != 0 {
				if len(members) > 0 {
					members = append(members, ',')
				}
				members = append(members, c.members[j]...)
			}
		}
		return change.Value{Kind: change.Text, Bytes: s.Keep(members)}, nil
	case change.KindDate, change.KindTime, change.KindTimestamp, change.KindTimestampTZ:
		if v.kind == binTime {
			return change.IntValue(v.tm.UnixMicro()), nil
		}
		b, ok := v.rawBytes()
		if !ok {
			return change.Value{}, fmt.Errorf("%s: unexpected %s", c.dataType, v.goType())
		}
		return decodeText(c, b)
	}
	return change.Value{}, fmt.Errorf("no decoder for %s", t.Name)
}

// decimalText writes d with scale digits after the point, as
// d.StringFixed(scale) does. go-mysql makes a DECIMAL(p,s) of the binlog
// from its text with s digits after the point, so the exponent is -scale
// and, up to 18 digits, the coefficient an int64: then this costs the copy
// of the coefficient decimal.Decimal hands out and the text, where
// StringFixed's rounding and formatting take about ten allocations.
func decimalText(d decimal.Decimal, scale int32) []byte {
	c := d.Coefficient()
	if d.Exponent() != -scale || !c.IsInt64() {
		return stringBytes(d.StringFixed(scale))
	}
	i := c.Int64()
	abs := uint64(i)
	if i < 0 {
		abs = -abs // two's complement: right for math.MinInt64 too
	}
	var buf [20]byte
	digits := strconv.AppendUint(buf[:0], abs, 10)
	n := int(scale)
	out := make([]byte, 0, len(digits)+n+3)
	if i < 0 {
		out = append(out, '-')
	}
	if n == 0 {
		return append(out, digits...)
	}
	if len(digits) > n {
		out = append(out, digits[:len(digits)-n]...)
		out = append(out, '.')
		return append(out, digits[len(digits)-n:]...)
	}
	out = append(out, "0."...)
	for range n - len(digits) {
		out = append(out, '0')
	}
	return append(out, digits...)
}

// fixedDecimal reports whether v is a decimal as decimalText writes one
// with scale digits after the point: an optional minus, the integral
// digits without a leading zero (one zero alone), exactly scale digits
// after the point (no point for scale 0), and no minus on a zero.
func fixedDecimal(v []byte, scale int) bool {
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	intg, frac := indexByte(v, '.'), 0
	if intg < 0 {
		intg = len(v)
	} else if frac = len(v) - intg - 1; frac == 0 {
		return false
	}
	if intg == 0 || frac != scale || (intg > 1 && v[0] == '0') {
		return false
	}
	zero := true
	for i, ch := range v {
		switch {
		case i == intg:
		case ch < '0' || ch > '9':
			return false
		case ch != '0':
			zero = false
		}
	}
	return !neg || !zero
}

// stringBytes returns the bytes of s without a copy, never nil (decodeText
// reads nil as NULL). A Value may hold them: nothing writes through a
// Value's Bytes (pkg/change/change.go). go-mysql's strings of a rows event
// point into the event's packet, which it reads into a new buffer every
// time (packet.Conn.ReadPacket) and never reuses, so they stay as they are
// for as long as a Value holds them; copying each one cost an allocation
// per column of every row.
func stringBytes(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

func bigEndianUint(b []byte) uint64 {
	var u uint64
	for _, c := range b {
		u = u<<8 | uint64(c)
	}
	return u
}

// bitsLE returns the low nbits of u as (nbits+7)/8 little-endian bytes.
func bitsLE(u uint64, nbits int) []byte {
	return appendBitsLE(make([]byte, 0, max((nbits+7)/8, 1)), u, nbits)
}

// appendBitsLE appends bitsLE(u, nbits) to dst.
func appendBitsLE(dst []byte, u uint64, nbits int) []byte {
	n := max((nbits+7)/8, 1)
	for i := range n {
		if i < 8 {
			dst = append(dst, byte(u>>(8*i)))
		} else {
			dst = append(dst, 0)
		}
	}
	return dst
}

// parseDate reads "YYYY-MM-DD" into days since 1970-01-01. A zero year,
// month or day is errZeroDate.
func parseDate(v []byte) (int64, error) {
	y, m, d, rest, ok := splitDate(v)
	if !ok || len(rest) != 0 {
		return 0, fmt.Errorf("bad date %q", v)
	}
	if y == 0 || m == 0 || d == 0 {
		return 0, errZeroDate
	}
	if m > 12 || d > 31 {
		return 0, fmt.Errorf("bad date %q", v)
	}
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix() / 86400, nil
}

// parseDateTime reads "YYYY-MM-DD HH:MM:SS[.ffffff]" (DATETIME, and
// TIMESTAMP in a UTC session) into µs since the epoch.
func parseDateTime(v []byte) (int64, error) {
	y, m, d, rest, ok := splitDate(v)
	if !ok {
		return 0, fmt.Errorf("bad datetime %q", v)
	}
	var us int64
	if len(rest) > 0 {
		if rest[0] != ' ' && rest[0] != 'T' {
			return 0, fmt.Errorf("bad datetime %q", v)
		}
		var err error
		if us, err = parseTime(rest[1:]); err != nil || us < 0 || us >= 86400e6 {
			return 0, fmt.Errorf("bad datetime %q", v)
		}
	}
	if y == 0 || m == 0 || d == 0 {
		return 0, errZeroDate
	}
	if m > 12 || d > 31 {
		return 0, fmt.Errorf("bad datetime %q", v)
	}
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix()*1e6 + us, nil
}

func splitDate(v []byte) (y, m, d int, rest []byte, ok bool) {
	if len(v) < 10 || v[4] != '-' || v[7] != '-' {
		return 0, 0, 0, nil, false
	}
	y, ok1 := digits(v[0:4])
	m, ok2 := digits(v[5:7])
	d, ok3 := digits(v[8:10])
	return y, m, d, v[10:], ok1 && ok2 && ok3
}

// parseTime reads MySQL TIME "[-]H+:MM:SS[.f{1,6}]" into µs (may be
// negative; MySQL's range is ±838:59:59).
func parseTime(v []byte) (int64, error) {
	s := v
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg, s = true, s[1:]
	}
	c1 := indexByte(s, ':')
	if c1 < 1 || c1 > 4 || len(s) < c1+6 || s[c1+3] != ':' {
		return 0, fmt.Errorf("bad time %q", v)
	}
	h, ok1 := digits(s[:c1])
	mi, ok2 := digits(s[c1+1 : c1+3])
	sec, ok3 := digits(s[c1+4 : c1+6])
	if !ok1 || !ok2 || !ok3 || mi > 59 || sec > 59 {
		return 0, fmt.Errorf("bad time %q", v)
	}
	frac := s[c1+6:]
	var us int64
	if len(frac) > 0 {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 7 {
			return 0, fmt.Errorf("bad time %q", v)
		}
		f, ok := digits(frac[1:])
		if !ok {
			return 0, fmt.Errorf("bad time %q", v)
		}
		us = int64(f) * int64(math.Pow10(7-len(frac)))
	}
	total := (int64(h)*3600+int64(mi)*60+int64(sec))*1e6 + us
	if neg {
		total = -total
	}
	return total, nil
}

func digits(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func indexByte(b []byte, c byte) int {
	for i := range b {
		if b[i] == c {
			return i
		}
	}
	return -1
}
