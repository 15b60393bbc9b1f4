package debezium

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"math/bits"
	"strconv"
)

// Decimals arrive as canonical text ("-12.50"). Connect's Decimal is the
// unscaled integer as Java's BigInteger.toByteArray writes it: big-endian
// two's complement in the fewest bytes that keep the sign bit (zero is one
// 0x00 byte), base64-encoded by Jackson. We convert digit text to those
// bytes directly, without math/big, so the hot path does not allocate for
// any value of up to 132 digits.

// decimalParts is parsed decimal text, sign split off.
type decimalParts struct {
	neg     bool
	intPart []byte // digits before the point, maybe empty
	frac    []byte // digits after the point, maybe empty
}

func parseDecimal(s []byte) (decimalParts, error) {
	var d decimalParts
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		d.neg = s[0] == '-'
		s = s[1:]
	}
	if bytes.EqualFold(s, []byte("nan")) || bytes.EqualFold(s, []byte("infinity")) || bytes.EqualFold(s, []byte("inf")) {
		return d, ErrSpecialDecimal
	}
	d.intPart = s
	if dot := bytes.IndexByte(s, '.'); dot >= 0 {
		d.intPart, d.frac = s[:dot], s[dot+1:]
	}
	if len(d.intPart)+len(d.frac) == 0 || !allDigits(d.intPart) || !allDigits(d.frac) {
		return d, ErrDecimal
	}
	return d, nil
}

func allDigits(s []byte) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// appendDecimalFixed appends the JSON string holding the base64 unscaled
// value of text at the column's scale (org.apache.kafka.connect.data.Decimal).
// Like Debezium's BigDecimal.setScale(scale) without a rounding mode, extra
// fractional digits are accepted only when they are zeros.
func appendDecimalFixed(b []byte, text []byte, scale int) ([]byte, error) {
	d, pad, err := atScale(text, scale)
	if err != nil {
		return b, err
	}
	b = append(b, '"')
	b = appendUnscaled(b, d.neg, d.intPart, d.frac, pad)
	return append(b, '"'), nil
}

// appendDecimalFixedRaw is appendDecimalFixed's unscaled value as bytes
// (BigInteger.toByteArray), not base64 text.
func appendDecimalFixedRaw(b []byte, text []byte, scale int) ([]byte, error) {
	d, pad, err := atScale(text, scale)
	if err != nil {
		return b, err
	}
	return appendUnscaledRaw(b, d.neg, d.intPart, d.frac, pad), nil
}

// atScale parses text and brings it to scale: fractional digits past it
// are dropped when they are zeros (else ErrDecimal), and pad is the zeros
// to add after d.frac.
func atScale(text []byte, scale int) (d decimalParts, pad int, err error) {
	d, err = parseDecimal(text)
	if err != nil {
		return d, 0, err
	}
	if len(d.frac) > scale {
		if !allZeros(d.frac[scale:]) {
			return d, 0, ErrDecimal
		}
		d.frac = d.frac[:scale]
		return d, 0, nil
	}
	return d, scale - len(d.frac), nil
}

// appendDecimalVariable appends an io.debezium.data.VariableScaleDecimal
// struct, {"scale":s,"value":"<base64>"}. Debezium strips trailing zeros
// (and never lets the scale go negative), so "12.50" has scale 1 and "100"
// scale 0.
func appendDecimalVariable(b []byte, text []byte) ([]byte, error) {
	d, err := parseDecimal(text)
	if err != nil {
		return b, err
	}
	d.frac = bytes.TrimRight(d.frac, "0")
	b = append(b, `{"scale":`...)
	b = strconv.AppendInt(b, int64(len(d.frac)), 10)
	b = append(b, `,"value":"`...)
	b = appendUnscaled(b, d.neg, d.intPart, d.frac, 0)
	return append(b, `"}`...), nil
}

func allZeros(s []byte) bool {
	for _, c := range s {
		if c != '0' {
			return false
		}
	}
	return true
}

// pow10 holds 10^0 … 10^19.
var pow10 = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// appendUnscaled appends, base64-encoded, BigInteger.toByteArray of the
// integer whose decimal digits are hi, lo and pad zeros, negated if neg.
func appendUnscaled(b []byte, neg bool, hi, lo []byte, pad int) []byte {
	var store [8*8 + 1]byte
	return base64.StdEncoding.AppendEncode(b, appendUnscaledRaw(store[:0], neg, hi, lo, pad))
}

// appendUnscaledRaw is appendUnscaled without the base64.
func appendUnscaledRaw(b []byte, neg bool, hi, lo []byte, pad int) []byte {
	hi = bytes.TrimLeft(hi, "0")
	if len(hi) == 0 {
		lo = bytes.TrimLeft(lo, "0")
	}
	if len(hi)+len(lo) == 0 { // zero, whatever the sign and scale
		return append(b, 0)
	}
	nd := len(hi) + len(lo) + pad
	if nd <= 18 {
		var u uint64
		for _, c := range hi {
			u = u*10 + uint64(c-'0')
		}
		for _, c := range lo {
			u = u*10 + uint64(c-'0')
		}
		u *= pow10[pad]
		v := int64(u)
		if neg {
			v = -v
		}
		var buf [8]byte
		binary.BigEndian.PutUint64(buf[:], uint64(v))
		return append(b, minimalTwos(buf[:], neg)...)
	}

	// Base 2^64 limbs, little-endian, fed 19 digits at a time. A digit is
	// about 3.33 bits, so nd/19+2 limbs always suffice.
	var limbStore [8]uint64
	limbs := limbStore[:0]
	if need := nd/19 + 2; need > len(limbStore) {
		limbs = make([]uint64, 0, need)
	}
	var chunk uint64
	n := 0
	for _, seg := range [2][]byte{hi, lo} {
		for _, c := range seg {
			chunk = chunk*10 + uint64(c-'0')
			if n++; n == 19 {
				limbs = mulAdd(limbs, pow10[19], chunk)
				chunk, n = 0, 0
			}
		}
	}
	for range pad {
		chunk *= 10
		if n++; n == 19 {
			limbs = mulAdd(limbs, pow10[19], chunk)
			chunk, n = 0, 0
		}
	}
	if n > 0 {
		limbs = mulAdd(limbs, pow10[n], chunk)
	}

	// Big-endian bytes with one extra leading byte, so the sign bit of the
	// magnitude is clear; then negate in place for negative values.
	var byteStore [8*8 + 1]byte
	size := len(limbs)*8 + 1
	buf := byteStore[:0]
	if size > len(byteStore) {
		buf = make([]byte, 0, size)
	}
	buf = append(buf, 0)
	for i := len(limbs) - 1; i >= 0; i-- {
		buf = binary.BigEndian.AppendUint64(buf, limbs[i])
	}
	if neg {
		carry := byte(1)
		for i := len(buf) - 1; i >= 0; i-- {
			x := ^buf[i] + carry
			if carry == 1 && x != 0 {
				carry = 0
			}
			buf[i] = x
		}
	}
	return append(b, minimalTwos(buf, neg)...)
}

// mulAdd sets limbs = limbs*m + a.
func mulAdd(limbs []uint64, m, a uint64) []uint64 {
	for i := range limbs {
		hi, lo := bits.Mul64(limbs[i], m)
		var c uint64
		lo, c = bits.Add64(lo, a, 0)
		limbs[i] = lo
		a = hi + c
	}
	if a != 0 {
		limbs = append(limbs, a)
	}
	return limbs
}

// minimalTwos drops redundant leading sign bytes from a big-endian two's
// complement number, keeping at least one byte.
func minimalTwos(buf []byte, neg bool) []byte {
	i := 0
	if neg {
		for i < len(buf)-1 && buf[i] == 0xFF && buf[i+1]&0x80 != 0 {
			i++
		}
	} else {
		for i < len(buf)-1 && buf[i] == 0 && buf[i+1]&0x80 == 0 {
			i++
		}
	}
	return buf[i:]
}
