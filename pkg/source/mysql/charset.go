package mysql

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// Rows events carry text in its column's character set (a backfill
// session asks the server for utf8mb4 instead, SET NAMES in connect), so
// the stream converts it here, to the UTF-8 the backfill got:
// single-byte sets with the server's own tables (charset_tables.go,
// written by internal/charsetgen from a running server), the multi-byte
// Asian sets with golang.org/x/text's WHATWG decoders (supersets of
// MySQL's: sjis and cp932 are Shift_JIS / Windows-31J, ujis and eucjpms
// EUC-JP, euckr EUC-KR, gb2312 and gbk GBK, big5 Big5), UCS-2, UTF-16 and
// UTF-32 by hand. A set none of these covers is refused by name
// (unconvertible), at start and in the stream, never garbled.

// charsetDecoder converts text of one character set to UTF-8.
type charsetDecoder struct {
	name  string
	utf8  bool                           // utf8mb3/utf8mb4: as is
	table *[256]rune                     // single-byte sets
	ascii bool                           // table maps 0x00–0x7F to themselves
	enc   encoding.Encoding              // multi-byte sets
	wide  func(b []byte) ([]byte, error) // ucs2, utf16, utf16le, utf32
}

// charsetDecoders are the character sets MariaDB and MySQL ship (SHOW
// CHARACTER SET), binary aside, which is no text.
var charsetDecoders = func() map[string]*charsetDecoder {
	m := map[string]*charsetDecoder{}
	for _, n := range []string{"utf8mb4", "utf8mb3", "utf8"} {
		m[n] = &charsetDecoder{name: n, utf8: true}
	}
	for n, t := range singleByte {
		d := &charsetDecoder{name: n, table: t, ascii: true}
		for i := 0; i < 0x80; i++ {
			d.ascii = d.ascii && t[i] == rune(i)
		}
		m[n] = d
	}
	for n, e := range map[string]encoding.Encoding{
		"sjis": japanese.ShiftJIS, "cp932": japanese.ShiftJIS, "ujis": japanese.EUCJP, "eucjpms": japanese.EUCJP,
		"euckr": korean.EUCKR, "gb2312": simplifiedchinese.GBK, "gbk": simplifiedchinese.GBK,
		"gb18030": simplifiedchinese.GB18030, "big5": traditionalchinese.Big5,
	} {
		m[n] = &charsetDecoder{name: n, enc: e}
	}
	m["ucs2"] = &charsetDecoder{name: "ucs2", wide: func(b []byte) ([]byte, error) { return decodeUTF16(b, false, false) }}
	m["utf16"] = &charsetDecoder{name: "utf16", wide: func(b []byte) ([]byte, error) { return decodeUTF16(b, false, true) }}
	m["utf16le"] = &charsetDecoder{name: "utf16le", wide: func(b []byte) ([]byte, error) { return decodeUTF16(b, true, true) }}
	m["utf32"] = &charsetDecoder{name: "utf32", wide: decodeUTF32}
	return m
}()

// charsetFor is the decoder of character set name (lower case), nil when
// there is none.
func charsetFor(name string) *charsetDecoder { return charsetDecoders[name] }

// errCharset marks text in a character set that has no decoder.
var errCharset = errors.New("no converter for the character set")

// decode returns b, text in d's character set, as UTF-8; b itself when
// it is already.
func (d *charsetDecoder) decode(b []byte) ([]byte, error) {
	switch {
	case d.utf8:
		return b, nil
	case d.table != nil:
		return decodeSingleByte(d.table, d.ascii, b), nil
	case d.wide != nil:
		return d.wide(b)
	}
	out, err := d.enc.NewDecoder().Bytes(b)
	if err != nil {
		return nil, fmt.Errorf("%s text %q: %w", d.name, b, err)
	}
	return out, nil
}

// decodeSingleByte maps each byte of b through t.
func decodeSingleByte(t *[256]rune, ascii bool, b []byte) []byte {
	if ascii {
		i := 0
		for i < len(b) && b[i] < 0x80 {
			i++
		}
		if i == len(b) {
			return b
		}
	}
	out := make([]byte, 0, len(b)+len(b)/2)
	for _, c := range b {
		out = utf8.AppendRune(out, t[c])
	}
	return out
}

// decodeUTF16 reads UTF-16 (big-endian unless le) or, without pairs,
// UCS-2, which has no surrogates.
func decodeUTF16(b []byte, le, pairs bool) ([]byte, error) {
	name := map[bool]string{false: "ucs2", true: "utf16"}[pairs]
	if le {
		name = "utf16le"
	}
	if len(b)%2 != 0 {
		return nil, fmt.Errorf("%s text of odd length %d", name, len(b))
	}
	unit := func(i int) rune {
		if le {
			return rune(b[i]) | rune(b[i+1])<<8
		}
		return rune(b[i])<<8 | rune(b[i+1])
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i += 2 {
		r := unit(i)
		if pairs && r >= 0xD800 && r < 0xE000 {
			if r >= 0xDC00 || i+3 >= len(b) {
				return nil, fmt.Errorf("%s text with an unpaired surrogate at byte %d", name, i)
			}
			lo := unit(i + 2)
			if lo < 0xDC00 || lo >= 0xE000 {
				return nil, fmt.Errorf("%s text with an unpaired surrogate at byte %d", name, i)
			}
			r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
			i += 2
		}
		out = utf8.AppendRune(out, r)
	}
	return out, nil
}

// decodeUTF32 reads big-endian UTF-32.
func decodeUTF32(b []byte) ([]byte, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("utf32 text of length %d, not a multiple of 4", len(b))
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i += 4 {
		r := rune(b[i])<<24 | rune(b[i+1])<<16 | rune(b[i+2])<<8 | rune(b[i+3])
		if !utf8.ValidRune(r) {
			return nil, fmt.Errorf("utf32 text with the invalid code point %#x at byte %d", uint32(r), i)
		}
		out = utf8.AppendRune(out, r)
	}
	return out, nil
}
