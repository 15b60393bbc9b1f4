package debezium

import (
	"math"
	"strconv"
)

// appendJavaDoublesText appends src, the text of a value made of numbers
// and punctuation (a geometric value), with each number written as
// Java's Double.toString ("3" → "3.0", "1e+300" → "1.0E300"), as a
// connector whose JDBC driver parses the text into doubles prints it
// (change.Type.JavaDoubles); the punctuation, and NaN and ±Infinity (the
// same in both), are kept.
func appendJavaDoublesText(b, src []byte) []byte {
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
