package debezium

import (
	"math"
	"strconv"
)

// pgObjectTypes are the PostgreSQL geometric types Debezium has no
// converter for: with include.unknown.datatypes it publishes the text its
// JDBC driver's PGobject class prints (PGbox, PGcircle, PGline, PGlseg,
// PGpath, PGpolygon), which is PostgreSQL's text with every number as
// Java's Double.toString (docs/types.md).
var pgObjectTypes = map[string]bool{"box": true, "circle": true, "line": true, "lseg": true, "path": true, "polygon": true}

// appendPGobjectText appends src, PostgreSQL's text of a geometric value,
// with each number written as Java's Double.toString ("3" → "3.0",
// "1e+300" → "1.0E300"); the punctuation, and NaN and ±Infinity (the
// same in both), are kept.
func appendPGobjectText(b, src []byte) []byte {
	for i := 0; i < len(src); {
		if !numberByte(src[i]) {
			b = append(b, src[i])
			i++
			continue
		}
		j := i
		for j < len(src) && numberByte(src[j]) {
			j++
		}
		tok := src[i:j]
		if f, err := strconv.ParseFloat(string(tok), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			b = appendJavaFloat(b, f, 64)
		} else {
			b = append(b, tok...)
		}
		i = j
	}
	return b
}

// numberByte is a byte of a float8's text: digits, sign, point, exponent,
// and the letters of NaN and Infinity.
func numberByte(c byte) bool {
	switch {
	case c >= '0' && c <= '9', c == '+', c == '-', c == '.':
		return true
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return true
	}
	return false
}
