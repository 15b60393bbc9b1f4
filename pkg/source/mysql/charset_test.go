package mysql

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

func TestCharsetDecode(t *testing.T) {
	for _, tc := range []struct {
		charset string
		in      string
		want    string
	}{
		{"cp1251", "\xcf\xf0\xe8\xe2\xe5\xf2", "Привет"},
		{"koi8r", "\xf0\xd2\xc9\xd7\xc5\xd4", "Привет"},
		{"latin1", "caf\xe9 \x80", "café €"},
		{"latin2", "\xbfa\xbf\xf3\xb3\xe6", "żażółć"},
		{"swe7", "R{ksm|rg}s", "Räksmörgås"},
		{"sjis", "\x93\xfa\x96\x7b", "日本"},
		{"gbk", "\xc4\xe3\xba\xc3", "你好"},
		{"ucs2", "\x00h\x04\x1f", "hП"},
		{"utf16", "\x00h\xd8\x3d\xde\x00", "h😀"},
		{"utf16le", "h\x00\x3d\xd8\x00\xde", "h😀"},
		{"utf32", "\x00\x00\x00h\x00\x01\xf6\x00", "h😀"},
		{"utf8mb4", "h😀", "h😀"},
		{"ascii", "plain", "plain"},
	} {
		d := charsetFor(tc.charset)
		if d == nil {
			t.Fatalf("%s: no decoder", tc.charset)
		}
		got, err := d.decode([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s %q: %q, %v; want %q", tc.charset, tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ charset, in string }{
		{"utf16", "\x00h\x00"},         // odd length
		{"utf16", "\xd8\x3d\x00h"},     // high surrogate, no low one
		{"utf16le", "\x00\xde"},        // low surrogate alone
		{"utf32", "\x00\x11\x00\x00"},  // beyond U+10FFFF
		{"utf32", "\x00\x00\x00h\x00"}, // not a multiple of 4
	} {
		if got, err := charsetFor(tc.charset).decode([]byte(tc.in)); err == nil {
			t.Errorf("%s %q: %q, want an error", tc.charset, tc.in, got)
		}
	}
}

// TestCharsetRefused: text in a character set without a converter is
// refused by name, at start (selectTables lists the columns) and in the
// stream, never published garbled.
func TestCharsetRefused(t *testing.T) {
	c := &column{name: "c", dataType: "varchar", columnType: "varchar(10)", charset: "klingon8", precision: -1, scale: -1, octets: -1}
	c.typ = columnType(c)
	tb := &table{db: "d", name: "t", cols: []column{{name: "id", dataType: "int", columnType: "int"}, *c}}
	if got := strings.Join(tb.unconvertible(), "; "); got != "table d.t column c (character set klingon8)" {
		t.Errorf("unconvertible: %q", got)
	}
	if _, err := decodeBoxed(c, "x"); !errors.Is(err, errCharset) || !strings.Contains(err.Error(), "klingon8") {
		t.Errorf("decodeBinlog: %v, want errCharset naming klingon8", err)
	}
	for _, cs := range []string{"binary", ""} {
		b := &column{name: "b", dataType: "varbinary", columnType: "varbinary(4)", charset: cs}
		b.typ = columnType(b)
		if (&table{cols: []column{*b}}).unconvertible() != nil {
			t.Errorf("charset %q refused", cs)
		}
	}
}

// FuzzCharsetDecode: whatever bytes a rows event holds, each decoder
// returns valid UTF-8 or an error, and never panics.
func FuzzCharsetDecode(f *testing.F) {
	f.Add("utf16", []byte("\xd8\x3d\xde\x00"))
	f.Add("sjis", []byte("\x93\xfa\x96"))
	f.Add("cp1251", []byte("\xcf\xf0"))
	f.Add("utf32", []byte("\x00\x01\xf6\x00"))
	names := slices.Sorted(maps.Keys(charsetDecoders))
	f.Fuzz(func(t *testing.T, charset string, b []byte) {
		d := charsetFor(charset)
		if d == nil && charset != "" { // any other name picks one
			d = charsetDecoders[names[int(charset[0])%len(names)]]
		}
		if d == nil {
			return
		}
		out, err := d.decode(b)
		if err == nil && !d.utf8 && !utf8.Valid(out) {
			t.Fatalf("%s %q: invalid UTF-8 %q", d.name, b, out)
		}
	})
}

// TestLoggedCharset: a table map column's character set comes from the
// server's collation ids; an id the server did not list leaves the
// catalog's column (and its set) to decode with.
func TestLoggedCharset(t *testing.T) {
	tm := &replication.TableMapEvent{ColumnCount: 1, ColumnType: []byte{gomysql.MYSQL_TYPE_VARCHAR}, ColumnMeta: []uint16{40},
		NullBitmap: []byte{1}, ColumnName: [][]byte{[]byte("c")}, DefaultCharset: []uint64{51}}
	catalog := column{name: "c", dataType: "varchar", columnType: "varchar(10)", charset: "cp1251", nullable: true, precision: -1, scale: -1, octets: -1}
	catalog.typ = columnType(&catalog)
	logged := loggedColumns(tm, flavorMariaDB, map[uint64]string{51: "cp1251"})
	if logged[0].charset != "cp1251" || logged[0].text == nil || !sameColumns(logged, []column{catalog}, true) {
		t.Errorf("collation 51: charset %q, same %v", logged[0].charset, sameColumns(logged, []column{catalog}, true))
	}
	if other := loggedColumns(tm, flavorMariaDB, map[uint64]string{51: "koi8r"}); sameColumns(other, []column{catalog}, true) {
		t.Error("a koi8r column compared equal to the catalog's cp1251 one")
	}
	unknown := loggedColumns(tm, flavorMariaDB, nil)
	if !sameColumns(unknown, []column{catalog}, true) {
		t.Error("an unlisted collation id does not leave the catalog's column")
	}
	if _, err := decodeBoxed(&unknown[0], "x"); !errors.Is(err, errCharset) {
		t.Errorf("decoding with an unlisted collation: %v, want errCharset", err)
	}
}
