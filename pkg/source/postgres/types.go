package postgres

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Text-format parsers for the types whose Debezium form needs more than a
// copy of the text: money, timetz, interval, bit strings, hstore and
// arrays. The input comes from the server: malformed text is an error,
// never a panic.

// parseMoney turns money output ("$1,234.56", "-$1.05"; lc_monetary with a
// '.' decimal point) into decimal text.
func parseMoney(src []byte) (change.Value, error) {
	out := make([]byte, 0, len(src))
	neg, digits := false, 0
	for _, c := range src {
		switch {
		case c >= '0' && c <= '9':
			out = append(out, c)
			digits++
		case c == '.':
			out = append(out, c)
		case c == '-' || c == '(':
			neg = true
		}
	}
	if digits == 0 {
		return change.Value{}, fmt.Errorf("bad money %q", trunc(src))
	}
	if neg {
		out = append([]byte{'-'}, out...)
	}
	if !validDecimal(out) {
		return change.Value{}, fmt.Errorf("bad money %q", trunc(src))
	}
	return change.Value{Kind: change.Text, Bytes: out}, nil
}

// parseTimeTZ parses "HH:MM:SS[.ffffff]±HH[:MM[:SS]]" to µs since midnight
// UTC, as Debezium moves a timetz to UTC (wrapping around midnight).
func parseTimeTZ(src []byte) (int64, error) {
	// Made only when the text is bad: every value of the type passes here.
	bad := func() error { return fmt.Errorf("bad timetz %q", trunc(src)) }
	clock, rest, err := splitClock(src)
	if err != nil || len(rest) < 3 || (rest[0] != '+' && rest[0] != '-') {
		return 0, bad()
	}
	sign := int64(1)
	if rest[0] == '-' {
		sign = -1
	}
	rest = rest[1:]
	var secs int64
	for part := 0; part < 3; part++ {
		n, ok := atoi2(rest)
		if !ok {
			return 0, bad()
		}
		secs = secs*60 + int64(n)
		rest = rest[2:]
		if len(rest) == 0 {
			for p := part + 1; p < 3; p++ {
				secs *= 60
			}
			break
		}
		if rest[0] != ':' || part == 2 {
			return 0, bad()
		}
		rest = rest[1:]
	}
	if len(rest) != 0 {
		return 0, bad()
	}
	const day = int64(86400e6)
	us := (clock - sign*secs*1e6) % day
	if us < 0 {
		us += day
	}
	return us, nil
}

// parseInterval parses interval output in the default IntervalStyle
// (postgres: "1 year 2 mons -3 days +04:05:06.789") and returns Debezium's
// MicroDuration: pgjdbc's PGInterval fields combined as
// MicroDuration.durationMicros does, in doubles with a month of 30.4375
// days, truncated to µs. The float64 conversions keep Go from fusing
// operations that Java rounds one by one.
func parseInterval(src []byte) (int64, error) {
	// Made only when the text is bad: every value of the type passes here.
	bad := func() error { return fmt.Errorf("bad interval %q", trunc(src)) }
	var years, months, days, hours, minutes int64
	var seconds float64
	if len(src) > 0 && src[0] == 'P' {
		if err := parseISOInterval(src[1:], &years, &months, &days, &hours, &minutes, &seconds); err != nil {
			return 0, bad()
		}
		return durationMicros(years, months, days, hours, minutes, seconds)
	}
	fields := bytes.Fields(src)
	if len(fields) == 0 {
		return 0, bad()
	}
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if bytes.IndexByte(f, ':') >= 0 {
			neg := f[0] == '-'
			if f[0] == '-' || f[0] == '+' {
				f = f[1:]
			}
			parts := bytes.Split(f, []byte{':'})
			if len(parts) != 3 {
				return 0, bad()
			}
			h, err1 := strconv.ParseInt(string(parts[0]), 10, 64)
			m, err2 := strconv.ParseInt(string(parts[1]), 10, 64)
			if err1 != nil || err2 != nil || h < 0 || m < 0 {
				return 0, bad()
			}
			whole, frac, _ := bytes.Cut(parts[2], []byte{'.'})
			ws, err := strconv.ParseInt(string(whole), 10, 64)
			if err != nil || ws < 0 {
				return 0, bad()
			}
			var micros int64
			for j := 0; j < 6; j++ {
				micros *= 10
				if j < len(frac) {
					if frac[j] < '0' || frac[j] > '9' {
						return 0, bad()
					}
					micros += int64(frac[j] - '0')
				}
			}
			if neg {
				h, m, ws, micros = -h, -m, -ws, -micros
			}
			hours, minutes = h, m
			seconds = float64(ws) + float64(micros)/1e6
			continue
		}
		if i+1 >= len(fields) {
			return 0, bad()
		}
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil || n > math.MaxInt32 || n < math.MinInt32 {
			return 0, bad()
		}
		i++
		switch string(fields[i]) {
		case "year", "years":
			years = n
		case "mon", "mons":
			months = n
		case "day", "days":
			days = n
		default:
			return 0, bad()
		}
	}
	return durationMicros(years, months, days, hours, minutes, seconds)
}

// durationMicros is Debezium's MicroDuration.durationMicros, its Java
// (long) cast included: an interval beyond ±2^63 µs (PostgreSQL allows
// ±178,000,000 years) saturates to the int64 bound instead of failing the
// pipeline.
func durationMicros(years, months, days, hours, minutes int64, seconds float64) (int64, error) {
	numberOfDays := float64(float64(years*12+months)*30.4375) + float64(days)
	numberOfSeconds := float64(float64(float64(float64(float64(numberOfDays*24)+float64(hours))*60)+float64(minutes))*60) + seconds
	us := float64(numberOfSeconds * 1e6)
	switch {
	case math.IsNaN(us):
		return 0, nil
	case us >= math.MaxInt64:
		return math.MaxInt64, nil
	case us <= math.MinInt64:
		return math.MinInt64, nil
	}
	return int64(us), nil
}

// parseISOInterval parses the part after "P" of IntervalStyle iso_8601
// output ("1Y2M3DT4H5M6.789S", "-3DT-1.5S", "T0S"); each field has its own
// sign.
func parseISOInterval(s []byte, years, months, days, hours, minutes *int64, seconds *float64) error {
	timePart := false
	if len(s) == 0 {
		return fmt.Errorf("empty")
	}
	for len(s) > 0 {
		if s[0] == 'T' {
			if timePart {
				return fmt.Errorf("two T")
			}
			timePart = true
			s = s[1:]
			continue
		}
		i := 0
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		digits := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
			digits++
		}
		if digits == 0 || i >= len(s) {
			return fmt.Errorf("bad field")
		}
		num, unit := s[:i], s[i]
		s = s[i+1:]
		if unit == 'S' && timePart {
			neg := num[0] == '-'
			if num[0] == '-' || num[0] == '+' {
				num = num[1:]
			}
			whole, frac, _ := bytes.Cut(num, []byte{'.'})
			ws, err := strconv.ParseInt(string(whole), 10, 64)
			if err != nil {
				return err
			}
			var micros int64
			for j := 0; j < 6; j++ {
				micros *= 10
				if j < len(frac) {
					if frac[j] < '0' || frac[j] > '9' {
						return fmt.Errorf("bad seconds")
					}
					micros += int64(frac[j] - '0')
				}
			}
			if neg {
				ws, micros = -ws, -micros
			}
			*seconds = float64(ws) + float64(micros)/1e6
			continue
		}
		// 64 bits: the hours of an interval may pass 2^31
		// ("PT2562047787H59M59S").
		n, err := strconv.ParseInt(string(num), 10, 64)
		if err != nil {
			return err
		}
		switch {
		case unit == 'Y' && !timePart:
			*years = n
		case unit == 'M' && !timePart:
			*months = n
		case unit == 'D' && !timePart:
			*days = n
		case unit == 'H' && timePart:
			*hours = n
		case unit == 'M' && timePart:
			*minutes = n
		default:
			return fmt.Errorf("bad unit")
		}
	}
	return nil
}

// parseBits turns a bit string ("1010") into Debezium's Bits bytes: the
// string read as a binary number, little-endian, without high zero bytes
// (java.util.BitSet.toByteArray).
func parseBits(src []byte) ([]byte, error) {
	n := len(src)
	out := make([]byte, (n+7)/8)
	for i, c := range src {
		bit := n - 1 - i // the last character is bit 0
		switch c {
		case '1':
			out[bit/8] |= 1 << (bit % 8)
		case '0':
		default:
			return nil, fmt.Errorf("bad bit string %q", trunc(src))
		}
	}
	for len(out) > 0 && out[len(out)-1] == 0 {
		out = out[:len(out)-1]
	}
	return out, nil
}

// hstoreToJSON turns hstore output ("a"=>"1", "b"=>NULL) into the JSON
// object Debezium writes (hstore.handling.mode=json): pgjdbc parses the
// text into a java.util.HashMap and Jackson writes that map, so the keys
// come in HashMap iteration order, which hashOrder reproduces.
func hstoreToJSON(src []byte) (change.Value, error) {
	type pair struct {
		key, value string
		null       bool
	}
	var pairs []pair
	// Made only when the text is bad: every value of the type passes here.
	bad := func() error { return fmt.Errorf("bad hstore %q", trunc(src)) }
	i := 0
	skipSpace := func() {
		for i < len(src) && (src[i] == ' ' || src[i] == ',') {
			i++
		}
	}
	quoted := func() (string, bool) {
		if i >= len(src) || src[i] != '"' {
			return "", false
		}
		i++
		var b []byte
		for i < len(src) {
			c := src[i]
			switch c {
			case '\\':
				if i+1 >= len(src) {
					return "", false
				}
				b = append(b, src[i+1])
				i += 2
				continue
			case '"':
				i++
				return string(b), true
			}
			b = append(b, c)
			i++
		}
		return "", false
	}
	for skipSpace(); i < len(src); skipSpace() {
		k, ok := quoted()
		if !ok || i+2 > len(src) || src[i] != '=' || src[i+1] != '>' {
			return change.Value{}, bad()
		}
		i += 2
		if bytes.HasPrefix(src[i:], []byte("NULL")) {
			i += 4
			pairs = append(pairs, pair{key: k, null: true})
			continue
		}
		v, ok := quoted()
		if !ok {
			return change.Value{}, bad()
		}
		pairs = append(pairs, pair{key: k, value: v})
	}
	keys := make([]string, len(pairs))
	for j, p := range pairs {
		keys[j] = p.key
	}
	out := []byte{'{'}
	for j, idx := range hashOrder(keys) {
		if j > 0 {
			out = append(out, ',')
		}
		out = appendJSONString(out, pairs[idx].key)
		out = append(out, ':')
		if pairs[idx].null {
			out = append(out, "null"...)
		} else {
			out = appendJSONString(out, pairs[idx].value)
		}
	}
	out = append(out, '}')
	return change.Value{Kind: change.Text, Bytes: out}, nil
}

// hashOrder returns the indexes of keys (distinct, in insertion order) in
// the order a java.util.HashMap built by inserting them iterates: by bucket
// (String.hashCode spread by h ^ h>>>16, masked by the table size, which
// starts at 16 and doubles past 3/4 full), then insertion order within a
// bucket (resizes keep it).
func hashOrder(keys []string) []int {
	size := 16
	for len(keys) > size*3/4 {
		size *= 2
	}
	buckets := make([][]int, size)
	for i, k := range keys {
		var h int32
		for _, u := range utf16.Encode([]rune(k)) {
			h = 31*h + int32(u)
		}
		spread := uint32(h) ^ uint32(h)>>16
		b := spread & uint32(size-1)
		buckets[b] = append(buckets[b], i)
	}
	order := make([]int, 0, len(keys))
	for _, b := range buckets {
		order = append(order, b...)
	}
	return order
}

// appendJSONString writes s as Jackson does (see pkg/debezium/json.go):
// '"', '\\' and control characters escaped, everything else raw.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, `\b`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\f':
			b = append(b, `\f`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}

// parseArray parses an array literal ({1,"a b",NULL}) into an Array value
// of elem-typed elements; one of more dimensions ({{1,2},{3,4}}) is
// flattened.
func parseArray(elem change.Type, src []byte) (change.Value, error) {
	// The error is made only when the text is bad (every array value
	// passes here), except where elements are decoded over the text
	// (bytea, geometry: unhexInPlace), which would quote them decoded.
	quoted := ""
	if elem.Kind == change.KindBytes || elem.Kind == change.KindGeometry || elem.Kind == change.KindGeography {
		quoted = trunc(src)
	}
	bad := func() error {
		if quoted == "" {
			quoted = trunc(src)
		}
		return fmt.Errorf("bad array %q", quoted)
	}
	if len(src) > 0 && src[0] == '[' { // explicit bounds: "[0:1]={1,2}"
		eq := bytes.IndexByte(src, '=')
		if eq < 0 {
			return change.Value{}, bad()
		}
		src = src[eq+1:]
	}
	if len(src) < 2 || src[0] != '{' || src[len(src)-1] != '}' {
		return change.Value{}, bad()
	}
	body := src[1 : len(src)-1]
	v := change.Value{Kind: change.Array, Elems: []change.Value{}}
	if len(body) == 0 {
		return v, nil
	}
	delim := byte(',')
	switch elem.Name {
	case "box":
		delim = ';'
	case "geometry", "geography":
		delim = ':' // PostGIS's typdelim
	}
	// At most one element more than delimiters (fewer when quoted ones
	// hold some): the slice is made once.
	v.Elems = make([]change.Value, 0, bytes.Count(body, []byte{delim})+1)
	for i := 0; ; {
		var text []byte
		isNull := false
		switch {
		case i < len(body) && body[i] == '{':
			// A sub-array: PostgreSQL does not enforce a column's
			// declared dimensions, and Debezium garbles such a value
			// (nulls, Java object names), so its elements join this
			// one-dimensional array in storage order (docs/types.md).
			end := subArrayEnd(body, i)
			if end < 0 {
				return change.Value{}, bad()
			}
			sub, err := parseArray(elem, body[i:end])
			if err != nil {
				return change.Value{}, err
			}
			v.Elems = append(v.Elems, sub.Elems...)
			i = end
			if i == len(body) {
				return v, nil
			}
			if body[i] != delim {
				return change.Value{}, bad()
			}
			i++
			continue
		case i < len(body) && body[i] == '"':
			i++
			text = []byte{}
			for {
				if i >= len(body) {
					return change.Value{}, bad()
				}
				c := body[i]
				if c == '\\' {
					if i+1 >= len(body) {
						return change.Value{}, bad()
					}
					text = append(text, body[i+1])
					i += 2
					continue
				}
				if c == '"' {
					i++
					break
				}
				text = append(text, c)
				i++
			}
		default:
			start := i
			for i < len(body) && body[i] != delim {
				i++
			}
			text = body[start:i]
			if string(text) == "NULL" {
				isNull = true
			}
		}
		if isNull {
			v.Elems = append(v.Elems, change.Value{})
		} else {
			e, err := decodeText(elem, text)
			if err != nil {
				return change.Value{}, err
			}
			v.Elems = append(v.Elems, e)
		}
		if i == len(body) {
			return v, nil
		}
		if body[i] != delim {
			return change.Value{}, bad()
		}
		i++
	}
}

// subArrayEnd returns the index after the '}' closing the sub-array that
// opens at body[i], skipping quoted elements, or -1.
func subArrayEnd(body []byte, i int) int {
	depth, quoted := 0, false
	for ; i < len(body); i++ {
		switch c := body[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}
