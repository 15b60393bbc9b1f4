// Package jsonstr writes a JSON string the way Kafka Connect's
// JsonConverter gets it from Jackson's default generator, so that output
// can be compared with Debezium's byte for byte. Both the relational
// encoder (pkg/debezium) and the MongoDB driver's message writer use it;
// it knows no database and imports nothing of the repository.
//
// What it writes: '"' and '\\' escaped; \b \t \n \f \r short escapes;
// other control characters as \u00XX with upper-case hex digits, as
// Jackson writes them; a character outside the Basic Multilingual Plane
// (U+10000 and above, an emoji) as its UTF-16 surrogate pair, both halves
// escaped with upper-case hex ("\uD83D\uDE00"), since Jackson's UTF-8
// generator escapes each surrogate code unit of a Java String rather than
// combining the pair; everything else, including '<', '>', '&', DEL,
// U+2028/U+2029 and U+FFFD, written raw. Invalid UTF-8 (which a Java
// String cannot hold) becomes U+FFFD, one per invalid byte as
// encoding/json counts them, written raw as Jackson writes the
// replacement character of a Java String (never "\ufffd", which Jackson
// does not write). Java's decoder may replace a malformed multi-byte
// sequence (an encoded surrogate, a sequence cut short) with one U+FFFD
// where this writes one per byte.
package jsonstr

import "unicode/utf8"

const hexUpper = "0123456789ABCDEF"

// safeASCII[b] is true for ASCII bytes written unescaped inside a string.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// Append appends s as a JSON string, quoted.
func Append[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	b = appendBody(b, s)
	return append(b, '"')
}

// appendBody appends s escaped, without the surrounding quotes.
func appendBody[S ~string | ~[]byte](b []byte, s S) []byte {
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

// AppendValidUTF8 appends s unescaped, with each byte that is not UTF-8
// replaced by U+FFFD as Append replaces it: the text of a string value
// that is written in another format than JSON (Avro).
func AppendValidUTF8[S ~string | ~[]byte](b []byte, s S) []byte {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			b = append(b, s[i])
			i++
			continue
		}
		r, size := decodeRune(s, i)
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
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
