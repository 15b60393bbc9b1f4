package avro

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendPayload appends the Avro binary encoding of a Connect JSON payload
// of s's schema (what JsonConverter writes under "payload") to dst.
func (s *Schema) AppendPayload(dst, payload []byte) ([]byte, error) {
	d := decoder{in: payload}
	out, err := d.value(dst, s.root)
	if err != nil {
		return dst, err
	}
	d.ws()
	if d.pos != len(d.in) {
		return dst, d.errorf("trailing data")
	}
	return out, nil
}

// decoder reads the JSON that pkg/debezium writes, guided by the schema.
type decoder struct {
	in  []byte
	pos int
	tmp []byte // scratch for strings with escapes and reordered fields
	raw []byte // scratch for decoded base64
	// spans holds, for each record being read (nested ones after their
	// parent's), where each field's encoding is in dst.
	spans [][2]int
}

var errSyntax = errors.New("avro: malformed JSON payload")

func (d *decoder) errorf(format string, args ...any) error {
	return fmt.Errorf("avro: payload at byte %d: %s", d.pos, fmt.Sprintf(format, args...))
}

func (d *decoder) ws() {
	for d.pos < len(d.in) {
		switch d.in[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) peek() byte {
	d.ws()
	if d.pos >= len(d.in) {
		return 0
	}
	return d.in[d.pos]
}

func (d *decoder) literal(lit string) bool {
	if len(d.in)-d.pos >= len(lit) && string(d.in[d.pos:d.pos+len(lit)]) == lit {
		d.pos += len(lit)
		return true
	}
	return false
}

// value appends n's encoding of the next JSON value.
func (d *decoder) value(dst []byte, n *node) ([]byte, error) {
	if d.peek() == 'n' {
		if !d.literal("null") {
			return dst, d.errorf("expected null")
		}
		if !n.nullable {
			return dst, d.errorf("null for a required %s", describe(n))
		}
		if n.nullLast {
			return append(dst, 2), nil // zigzag(1)
		}
		return append(dst, 0), nil
	}
	if n.nullable {
		if n.nullLast {
			dst = append(dst, 0)
		} else {
			dst = append(dst, 2)
		}
	}
	switch n.kind {
	case kBool:
		switch {
		case d.literal("true"):
			return append(dst, 1), nil
		case d.literal("false"):
			return append(dst, 0), nil
		}
		return dst, d.errorf("expected a boolean")
	case kInt, kLong:
		num := d.number()
		v, err := strconv.ParseInt(string(num), 10, 64)
		if err != nil {
			return dst, d.errorf("expected an integer, got %q", num)
		}
		if n.kind == kInt && (v < math.MinInt32 || v > math.MaxInt32) {
			return dst, d.errorf("%d does not fit an int", v)
		}
		return binary.AppendVarint(dst, v), nil
	case kFloat, kDouble:
		f, err := d.float()
		if err != nil {
			return dst, err
		}
		if n.kind == kFloat {
			return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(f))), nil
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), nil
	case kString:
		s, err := d.str()
		if err != nil {
			return dst, err
		}
		dst = binary.AppendVarint(dst, int64(len(s)))
		return append(dst, s...), nil
	case kBytes:
		s, err := d.str()
		if err != nil {
			return dst, err
		}
		d.raw = slices.Grow(d.raw[:0], base64.StdEncoding.DecodedLen(len(s)))[:base64.StdEncoding.DecodedLen(len(s))]
		k, err := base64.StdEncoding.Decode(d.raw, s)
		if err != nil {
			return dst, d.errorf("bytes not in base64: %v", err)
		}
		dst = binary.AppendVarint(dst, int64(k))
		return append(dst, d.raw[:k]...), nil
	case kArray:
		return d.block(dst, n, '[', ']', "an array")
	case kMap:
		return d.block(dst, n, '{', '}', "an object")
	case kRecord:
		return d.record(dst, n)
	}
	return dst, d.errorf("unknown schema kind")
}

// block appends an array's items, or a map's entries (each key, then its
// value), as one Avro block: the count first, so the items are written
// aside until it is known.
func (d *decoder) block(dst []byte, n *node, open, end byte, what string) ([]byte, error) {
	if d.peek() != open {
		return dst, d.errorf("expected %s", what)
	}
	d.pos++
	if d.peek() == end {
		d.pos++
		return append(dst, 0), nil
	}
	count := 0
	// The items go to dst; the count is put before them at the end.
	start := len(dst)
	items := dst
	for {
		if open == '{' {
			k, err := d.str()
			if err != nil {
				return dst, err
			}
			items = binary.AppendVarint(items, int64(len(k)))
			items = append(items, k...)
			if d.peek() != ':' {
				return dst, d.errorf("expected :")
			}
			d.pos++
		}
		var err error
		if items, err = d.value(items, n.items); err != nil {
			return dst, err
		}
		count++
		switch d.peek() {
		case ',':
			d.pos++
			continue
		case end:
			d.pos++
		default:
			return dst, d.errorf("expected , or %c", end)
		}
		break
	}
	var c [binary.MaxVarintLen64]byte
	k := binary.PutVarint(c[:], int64(count))
	items = append(items, c[:k]...) // room for the count
	copy(items[start+k:], items[start:len(items)-k])
	copy(items[start:], c[:k])
	return append(items, 0), nil
}

// record appends a struct's fields in schema order. JsonConverter writes
// them in that order, so they are encoded as they come; fields out of
// order, or missing (null), are put in place afterwards.
func (d *decoder) record(dst []byte, n *node) ([]byte, error) {
	if d.peek() != '{' {
		return dst, d.errorf("expected an object for %s", describe(n))
	}
	d.pos++
	start := len(dst)
	next := 0 // the field expected next
	// This record's spans are d.spans[base:], by index: a nested
	// record's may move the slice.
	base := len(d.spans)
	defer func() { d.spans = d.spans[:base] }()
	spans := false
	inOrder := true
	if d.peek() == '}' {
		d.pos++
	} else {
		for {
			name, err := d.str()
			if err != nil {
				return dst, err
			}
			if d.peek() != ':' {
				return dst, d.errorf("expected :")
			}
			d.pos++
			i := -1
			if next < len(n.fields) && n.fields[next].json == string(name) {
				i = next
			} else {
				for j := range n.fields {
					if n.fields[j].json == string(name) {
						i = j
						break
					}
				}
			}
			if i < 0 {
				return dst, d.errorf("field %q is not in the schema of %s", name, describe(n))
			}
			if i != next {
				inOrder = false
			}
			if !spans {
				spans = true
				for range n.fields {
					d.spans = append(d.spans, [2]int{-1, -1})
				}
			}
			from := len(dst)
			if dst, err = d.value(dst, n.fields[i].node); err != nil {
				return dst, err
			}
			d.spans[base+i] = [2]int{from, len(dst)}
			next = i + 1
			switch d.peek() {
			case ',':
				d.pos++
				continue
			case '}':
				d.pos++
			default:
				return dst, d.errorf("expected , or }")
			}
			break
		}
	}
	if inOrder && next == len(n.fields) {
		return dst, nil
	}
	// Reorder, filling in nulls for the missing fields.
	d.tmp = d.tmp[:0]
	for i := range n.fields {
		if spans && d.spans[base+i][0] >= 0 {
			sp := d.spans[base+i]
			d.tmp = append(d.tmp, dst[sp[0]:sp[1]]...)
			continue
		}
		f := n.fields[i].node
		if !f.nullable {
			return dst, d.errorf("required field %q of %s is missing", n.fields[i].json, describe(n))
		}
		if f.nullLast {
			d.tmp = append(d.tmp, 2)
		} else {
			d.tmp = append(d.tmp, 0)
		}
	}
	return append(dst[:start], d.tmp...), nil
}

func describe(n *node) string {
	if n.name != "" {
		return n.name
	}
	return primitiveName(n.kind)
}

// number returns the text of a JSON number.
func (d *decoder) number() []byte {
	d.ws()
	from := d.pos
	for d.pos < len(d.in) {
		c := d.in[d.pos]
		if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			d.pos++
			continue
		}
		break
	}
	return d.in[from:d.pos]
}

// javaNaN is Java's Double.NaN, the NaN Debezium's values hold (its
// connectors parse "NaN") and Avro's Java encoder writes bit for bit. Go's
// math.NaN() has other bits, which a consumer hashing or comparing the
// raw value would see.
var javaNaN = math.Float64frombits(0x7ff8000000000000)

// float reads a number, or JsonConverter's "NaN", "Infinity", "-Infinity".
func (d *decoder) float() (float64, error) {
	if d.peek() == '"' {
		s, err := d.str()
		if err != nil {
			return 0, err
		}
		switch string(s) {
		case "NaN":
			return javaNaN, nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		return 0, d.errorf("expected a number, got %q", s)
	}
	num := d.number()
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return 0, d.errorf("expected a number, got %q", num)
	}
	return f, nil
}

// str reads a JSON string; the result is valid until the next call.
func (d *decoder) str() ([]byte, error) {
	if d.peek() != '"' {
		return nil, d.errorf("expected a string")
	}
	d.pos++
	from := d.pos
	for d.pos < len(d.in) {
		c := d.in[d.pos]
		if c == '"' {
			s := d.in[from:d.pos]
			d.pos++
			return s, nil
		}
		if c == '\\' {
			return d.escaped(from)
		}
		d.pos++
	}
	return nil, errSyntax
}

// escaped finishes a string that has escapes, into d.tmp.
func (d *decoder) escaped(from int) ([]byte, error) {
	out := append(d.tmp[:0], d.in[from:d.pos]...)
	for d.pos < len(d.in) {
		c := d.in[d.pos]
		switch {
		case c == '"':
			d.pos++
			d.tmp = out
			return out, nil
		case c != '\\':
			out = append(out, c)
			d.pos++
			continue
		}
		if d.pos+1 >= len(d.in) {
			return nil, errSyntax
		}
		e := d.in[d.pos+1]
		d.pos += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return nil, errSyntax
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if d.pos+1 < len(d.in) && d.in[d.pos] == '\\' && d.in[d.pos+1] == 'u' {
					d.pos += 2
					lo, ok := d.hex4()
					if !ok {
						return nil, errSyntax
					}
					r2 = utf16.DecodeRune(r, lo)
				}
				r = r2
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, errSyntax
		}
	}
	return nil, errSyntax
}

func (d *decoder) hex4() (rune, bool) {
	if d.pos+4 > len(d.in) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(d.in[d.pos:d.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	d.pos += 4
	return rune(v), true
}
