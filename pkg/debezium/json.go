package debezium

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// JSON writing helpers. They follow what Kafka Connect's JsonConverter gets
// from Jackson's default generator, so output can be compared byte for byte:
//   - strings: '"' and '\\' escaped; \b \t \n \f \r short escapes; other
//     control characters as \u00XX with upper-case hex digits, as Jackson
//     writes them; a character outside the Basic Multilingual Plane
//     (U+10000 and above, an emoji) as its UTF-16 surrogate pair, both
//     halves escaped with upper-case hex ("\uD83D\uDE00"), since Jackson's
//     UTF-8 generator escapes each surrogate code unit of a Java String
//     rather than combining the pair; everything else, including '<', '>',
//     '&', DEL, U+2028/U+2029 and U+FFFD, written raw. Invalid UTF-8
//     (which a Java String cannot hold) becomes U+FFFD, one per invalid
//     byte as encoding/json counts them, written raw as Jackson writes
//     the replacement character of a Java String (never "\ufffd", which
//     Jackson does not write). Java's decoder may replace a malformed
//     multi-byte sequence (an encoded surrogate, a sequence cut short)
//     with one U+FFFD where this writes one per byte.
//   - doubles and floats: Java's Double.toString / Float.toString (JDK 19+
//     shortest-digit algorithm); NaN and ±Infinity as the strings "NaN",
//     "Infinity", "-Infinity" (Jackson's QUOTE_NON_NUMERIC_NUMBERS default).

const hexUpper = "0123456789ABCDEF"

// safeASCII[b] is true for ASCII bytes written unescaped inside a string.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// appendString appends s as a JSON string.
func appendString[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	b = appendStringBody(b, s)
	return append(b, '"')
}

// appendStringBody appends s escaped, without the surrounding quotes.
func appendStringBody[S ~string | ~[]byte](b []byte, s S) []byte {
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a look (most text):
		// the byte-by-byte loop below was most of the encoder's time
		// spent on strings.
		if i+8 <= len(s) && plain8(uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
			uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\t':
				b = append(b, '\\', 't')
			case '\n':
				b = append(b, '\\', 'n')
			case '\f':
				b = append(b, '\\', 'f')
			case '\r':
				b = append(b, '\\', 'r')
			default:
				b = append(b, '\\', 'u', '0', '0', hexUpper[c>>4], hexUpper[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := decodeRune(s, i)
		switch {
		case size == 4: // U+10000 and above: a UTF-16 surrogate pair in Java
			b = append(b, s[start:i]...)
			b = appendSurrogates(b, r)
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}

// appendSurrogates appends r (U+10000 to U+10FFFF) as Jackson's UTF-8
// generator writes the two UTF-16 code units Java holds for it: each
// escaped, upper-case hex ("\uD83D\uDE00" for U+1F600).
func appendSurrogates(b []byte, r rune) []byte {
	r -= 0x10000
	hi, lo := 0xD800+r>>10, 0xDC00+r&0x3FF
	return append(b,
		'\\', 'u', 'D', hexUpper[hi>>8&0xF], hexUpper[hi>>4&0xF], hexUpper[hi&0xF],
		'\\', 'u', 'D', hexUpper[lo>>8&0xF], hexUpper[lo>>4&0xF], hexUpper[lo&0xF])
}

// plain8 reports whether the eight bytes of x are all safeASCII: none
// below 0x20, none of 0x80 or above, no '"' and no '\\'. A byte is zero
// in v exactly when v-0x01…01 borrows into its high bit while v's own
// high bit is clear; the tests hold for all eight bytes at once.
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (x - 0x20*ones) &^ x // a byte below 0x20 (a high bit set in x is caught below)
	quote := x ^ '"'*ones
	backslash := x ^ '\\'*ones
	return (x|below|(quote-ones)&^quote|(backslash-ones)&^backslash)&highs == 0
}

// decodeRune decodes the UTF-8 sequence at s[i:] with utf8.DecodeRune's
// rules (no overlongs, no surrogates, nothing above U+10FFFF), returning
// (utf8.RuneError, 1) for an invalid byte. It indexes bytes itself so that
// one generic body serves strings and byte slices without conversions.
func decodeRune[S ~string | ~[]byte](s S, i int) (rune, int) {
	n := len(s) - i
	c0 := s[i]
	cont := func(c byte) bool { return c&0xC0 == 0x80 }
	switch {
	case c0 < 0xC2:
		return utf8.RuneError, 1
	case c0 < 0xE0:
		if n < 2 || !cont(s[i+1]) {
			return utf8.RuneError, 1
		}
		return rune(c0&0x1F)<<6 | rune(s[i+1]&0x3F), 2
	case c0 < 0xF0:
		lo, hi := byte(0x80), byte(0xBF)
		if c0 == 0xE0 {
			lo = 0xA0
		} else if c0 == 0xED {
			hi = 0x9F
		}
		if n < 3 || s[i+1] < lo || s[i+1] > hi || !cont(s[i+2]) {
			return utf8.RuneError, 1
		}
		return rune(c0&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), 3
	case c0 < 0xF5:
		lo, hi := byte(0x80), byte(0xBF)
		if c0 == 0xF0 {
			lo = 0x90
		} else if c0 == 0xF4 {
			hi = 0x8F
		}
		if n < 4 || s[i+1] < lo || s[i+1] > hi || !cont(s[i+2]) || !cont(s[i+3]) {
			return utf8.RuneError, 1
		}
		return rune(c0&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F), 4
	}
	return utf8.RuneError, 1
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// appendJavaFloat appends f the way Jackson writes a Java double
// (bitSize 64) or float (bitSize 32): Double.toString / Float.toString,
// with non-finite values quoted.
//
// Java's rules (JDK 19+): the shortest decimal that rounds to the value;
// plain notation with at least one fractional digit when
// 10^-3 <= |f| < 10^7 ("100.0", "0.001"), otherwise computerized
// scientific notation ("1.0E7", "1.234E-5", "-4.9E-324").
//
// Known difference: before JDK 19, Double.toString sometimes printed more
// digits than the shortest (JDK-4511638), so a Connect worker on JDK 17 can
// differ from us in the last digits of rare values; Debezium 3.x images run
// on JDK 21.
func appendJavaFloat(b []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	case f == 0:
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	var buf [40]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, bitSize)
	neg, digits, exp := splitE(s)
	if len(digits) == 1 && isSubnormal(f, bitSize) {
		// Java considers two-digit decimals when the shortest has one digit
		// and takes the one closest to the value; that only differs from
		// Go's choice where doubles are sparse, i.e. among subnormals
		// (Double.MIN_VALUE is "4.9E-324" in Java, "5e-324" in Go).
		var buf2 [40]byte
		s2 := strconv.AppendFloat(buf2[:0], f, 'e', 1, bitSize)
		if g, err := strconv.ParseFloat(string(s2), bitSize); err == nil && g == f {
			_, d2, e2 := splitE(s2)
			if d2[1] != '0' {
				digits, exp = d2, e2
			}
		}
	}
	if neg {
		b = append(b, '-')
	}
	if exp >= -3 && exp < 7 {
		if exp < 0 {
			b = append(b, '0', '.')
			for i := -1; i > exp; i-- {
				b = append(b, '0')
			}
			return append(b, digits...)
		}
		intLen := exp + 1
		if len(digits) <= intLen {
			b = append(b, digits...)
			for i := len(digits); i < intLen; i++ {
				b = append(b, '0')
			}
			return append(b, '.', '0')
		}
		b = append(b, digits[:intLen]...)
		b = append(b, '.')
		return append(b, digits[intLen:]...)
	}
	b = append(b, digits[0], '.')
	if len(digits) > 1 {
		b = append(b, digits[1:]...)
	} else {
		b = append(b, '0')
	}
	b = append(b, 'E')
	return strconv.AppendInt(b, int64(exp), 10)
}

// splitE splits Go's 'e' format ("-1.2345e-05") into sign, significant
// digits ("12345", in place) and decimal exponent (-5).
func splitE(s []byte) (neg bool, digits []byte, exp int) {
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	e := len(s) - 1
	for s[e] != 'e' {
		e--
	}
	mant := s[:e]
	if len(mant) > 1 { // "d.ddd": drop the point
		copy(mant[1:], mant[2:])
		mant = mant[:len(mant)-1]
	}
	x := 0
	for _, c := range s[e+2:] {
		x = x*10 + int(c-'0')
	}
	if s[e+1] == '-' {
		x = -x
	}
	return neg, mant, x
}

func isSubnormal(f float64, bitSize int) bool {
	a := math.Abs(f)
	if bitSize == 32 {
		return a < 0x1p-126
	}
	return a < 0x1p-1022
}
