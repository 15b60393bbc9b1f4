package mongodb

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A name with invalid UTF-8 in the update description is written as
// Jackson writes the Java String Debezium decodes it to: U+FFFD in place
// of each bad byte, raw, never the escape \ufffd that Jackson does not
// write; as the relational encoder writes such bytes.
func TestMessageInvalidUTF8AsJackson(t *testing.T) {
	ev := Event{Op: OpUpdate, DB: "d", Collection: "c", Key: bson.RawValue{Type: bson.TypeInt32, Value: []byte{7, 0, 0, 0}},
		Update:      &UpdateDescription{RemovedFields: []string{"a\xffb"}, TruncatedArrays: []TruncatedArray{{Field: "t\xfe", NewSize: 1}}},
		ClusterTime: bson.Timestamp{T: 10, I: 2}}
	m, err := EncodeChange(ev, MessageOptions{Name: "pre", Version: DefaultVersion}, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"removedFields":["a` + "\uFFFD" + `b"]`, `{"field":"t` + "\uFFFD" + `","size":1}`} {
		if !strings.Contains(string(m.Value), want) {
			t.Errorf("value has no %s:\n%s", want, m.Value)
		}
	}
	if strings.Contains(string(m.Value), `\ufffd`) {
		t.Errorf("value has the escape \\ufffd, which Jackson does not write:\n%s", m.Value)
	}
}

// javaStringPerRune is appendJavaString as it was before its run of plain
// ASCII was copied at once: every rune through the switch.
func javaStringPerRune(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r >= 0x10000:
			hi, lo := utf16.EncodeRune(r)
			b = appendU(appendU(b, hi), lo)
		case javaRaw(r):
			b = utf8.AppendRune(b, r)
		default:
			b = appendU(b, r)
		}
	}
	return append(b, '"')
}

// FuzzJavaStringPerRune: the string writer's fast path over runs of plain
// ASCII writes what writing every rune on its own writes, for any bytes
// (invalid UTF-8 included).
func FuzzJavaStringPerRune(f *testing.F) {
	for _, s := range []string{"", "plain text 0123", `a"b\c`, "tab\there\nnl", "\x00\x1f\x7f", "é中😀", "\xff\xfeab", "a\u200bb\u0301", strings.Repeat("x", 40) + "\"" + "\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := appendJavaString(nil, s), javaStringPerRune(nil, s)
		if string(got) != string(want) {
			t.Fatalf("appendJavaString(%q) = %s, per rune %s", s, got, want)
		}
	})
}
