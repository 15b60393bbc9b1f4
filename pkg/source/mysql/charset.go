package mysql

import "unicode/utf8"

// cp1252High is Windows-1252 for 0x80–0x9F, which MySQL's latin1 is;
// 0 marks the five undefined bytes, which MySQL maps to U+0081 etc.
var cp1252High = [32]rune{
	0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
	0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
}

// latin1ToUTF8 converts MySQL latin1 (Windows-1252) text to UTF-8.
func latin1ToUTF8(b []byte) []byte {
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return b
	}
	out := make([]byte, 0, len(b)+len(b)/2)
	for _, c := range b {
		r := rune(c)
		if c >= 0x80 && c <= 0x9F && cp1252High[c-0x80] != 0 {
			r = cp1252High[c-0x80]
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}
