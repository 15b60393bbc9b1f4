package debezium

import (
	"math"
	"strconv"
)

// JSON writing helpers beside the string writer (pkg/jsonstr). They follow
// what Kafka Connect's JsonConverter gets from Jackson's default
// generator, so output can be compared byte for byte: doubles and floats
// as Java's Double.toString / Float.toString (JDK 19+ shortest-digit
// algorithm); NaN and ±Infinity as the strings "NaN", "Infinity",
// "-Infinity" (Jackson's QUOTE_NON_NUMERIC_NUMBERS default).

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
