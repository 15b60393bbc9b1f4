package jsonstr

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

func TestAppend(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", `""`},
		{"plain", `"plain"`},
		{`quote " and backslash \`, `"quote \" and backslash \\"`},
		{"\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"\x00\x01\x1f", `"\u0000\u0001\u001F"`}, // Jackson: upper-case hex
		{"\x7f", "\"\x7f\""},                     // DEL is not escaped
		{"<a & b>", `"<a & b>"`},                 // Jackson does not HTML-escape
		{"/", `"/"`},
		{"héllo wörld", `"héllo wörld"`},
		{"日本語", `"日本語"`},
		{"emoji 😀", `"emoji \uD83D\uDE00"`},                    // Jackson: surrogate pair, escaped
		{"\U00010348\U0001F4A9", `"\uD800\uDF48\uD83D\uDCA9"`}, // upper-case hex
		{"\U00010000", `"\uD800\uDC00"`},                       // first outside the BMP
		{"\U0010FFFF", `"\uDBFF\uDFFF"`},                       // last code point
		{"a\U0001F600b\U0001F600", `"a\uD83D\uDE00b\uD83D\uDE00"`},
		{"\uFFFF", "\"\uFFFF\""}, // last of the BMP: raw
		{"é 中", `"é 中"`},
		{"\u2028\u2029", "\"\u2028\u2029\""}, // raw, as Jackson writes them
		{"\ufffd", "\"\ufffd\""},             // a real U+FFFD stays raw
		{"bad \xff byte", "\"bad \uFFFD byte\""},
		{"\xc3", "\"\uFFFD\""},                               // truncated sequence
		{"\xc3\x28", "\"\uFFFD(\""},                          // bad continuation
		{"\xe0\x80\x80", "\"\uFFFD\uFFFD\uFFFD\""},           // overlong
		{"\xed\xa0\x80", "\"\uFFFD\uFFFD\uFFFD\""},           // surrogate
		{"\xf4\x90\x80\x80", "\"\uFFFD\uFFFD\uFFFD\uFFFD\""}, // above U+10FFFF
		{"\xf0\x9f\x98", "\"\uFFFD\uFFFD\uFFFD\""},           // truncated 4-byte
	}
	for _, tt := range tests {
		got := string(Append(nil, tt.in))
		if got != tt.want {
			t.Errorf("Append(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if gotB := string(Append(nil, []byte(tt.in))); gotB != got {
			t.Errorf("Append([]byte %q) = %s, string form gives %s", tt.in, gotB, got)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("Append(%q) = %s: invalid JSON", tt.in, got)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Fatal(err)
		}
		if want := string([]rune(tt.in)); back != want {
			t.Errorf("round trip of %q = %q, want %q", tt.in, back, want)
		}
	}
}

func TestDecodeRuneMatchesUTF8(t *testing.T) {
	// Every 1–3 byte prefix of interest, and a sample of 4-byte ones.
	check := func(b []byte) {
		r1, s1 := utf8.DecodeRune(b)
		r2, s2 := decodeRune(b, 0)
		if r1 != r2 || s1 != s2 {
			t.Fatalf("decodeRune(% x) = %U,%d; utf8 says %U,%d", b, r2, s2, r1, s1)
		}
	}
	for a := 0x80; a < 0x100; a++ {
		check([]byte{byte(a)})
		for b := 0; b < 0x100; b++ {
			check([]byte{byte(a), byte(b)})
			check([]byte{byte(a), byte(b), 0x80})
			check([]byte{byte(a), byte(b), 0xBF, 0x80})
			check([]byte{byte(a), byte(b), 0x41, 0x80})
		}
	}
}

// appendBody reads eight plain bytes at a time (plain8) and the rest
// one by one; random strings of every length up to 80, of bytes drawn
// mostly from the ones either path must notice (the seed is printed), are
// escaped as one rune at a time would be: an ASCII byte by its escape, a
// rune outside the BMP as its escaped surrogate pair, another valid
// sequence raw, an invalid byte as a raw U+FFFD.
func TestAppendEightAtATime(t *testing.T) {
	alphabet := []string{"a", "Z", " ", "~", "\x7f", "\x1f", "\x00", "\x20", "\x21", "\x23", "\x5b", "\x5d", `"`, `\`, "\n", "é", "日", "😀", "\xff", "\xc3", "\x80", "\u2028", "\U00010348", "\xf0\x9f", "\U0010FFFF"}
	next := randomText(t, alphabet)
	for range 200_000 {
		in := next()
		var want []byte
		for s := string(in); s != ""; {
			r, size := utf8.DecodeRuneInString(s)
			switch {
			case r == utf8.RuneError && size == 1:
				want = append(want, "\uFFFD"...)
			case r > 0xFFFF:
				hi, lo := utf16.EncodeRune(r)
				want = append(want, fmt.Sprintf(`\u%04X\u%04X`, hi, lo)...)
			case r == '"' || r == '\\':
				want = append(want, '\\', byte(r))
			case r < 0x20:
				want = append(want, fmt.Sprintf(`\u%04X`, r)...)
				for short, esc := range map[rune]string{'\b': `\b`, '\t': `\t`, '\n': `\n`, '\f': `\f`, '\r': `\r`} {
					if r == short {
						want = append(want[:len(want)-6], esc...)
					}
				}
			default:
				want = append(want, s[:size]...)
			}
			s = s[size:]
		}
		if got := appendBody(nil, in); string(got) != string(want) {
			t.Fatalf("appendBody(%q) = %q, want %q", in, got, want)
		}
		if got := appendBody(nil, string(in)); string(got) != string(want) {
			t.Fatalf("appendBody(string %q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzAppend: whatever the input, the string writer gives valid
// JSON holding only ASCII escapes for characters outside the BMP (no
// 4-byte UTF-8 sequence, as Jackson writes them) that reads back through
// encoding/json as the input, invalid UTF-8 bytes as U+FFFD each; the
// string and byte-slice forms agree.
func FuzzAppend(f *testing.F) {
	f.Add("plain ascii text, long enough for the eight-byte path")
	f.Add("\"\\\x00\x1f\x7f<&>\u2028\u2029\ufffd\uffff")
	f.Add("emoji \U0001F600 gothic \U00010348 \U0010FFFF é 中")
	f.Add("\xff\xfe\xc3(\xed\xa0\x80\xf0\x9f\x98 \xf4\x90\x80\x80")
	f.Fuzz(func(t *testing.T, s string) {
		out := Append(nil, s)
		if string(Append(nil, []byte(s))) != string(out) {
			t.Fatalf("string and []byte forms differ for %q", s)
		}
		for _, c := range out {
			if c >= 0xF0 {
				t.Fatalf("Append(%q) = %s: a raw 4-byte sequence", s, out)
			}
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("Append(%q) = %s: %v", s, out, err)
		}
		if want := string([]rune(s)); back != want {
			t.Fatalf("Append(%q) read back as %q, want %q", s, back, want)
		}
	})
}

// perRune is the writer the MongoDB message had before it used this
// package: one rune at a time, an invalid byte as the escape \ufffd. It is
// kept here as the oracle of TestAppendMatchesPerRune and FuzzAppendPerRune.
func perRune(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b = append(b, `\ufffd`...)
			case r > 0xffff:
				hi, lo := utf16.EncodeRune(r)
				for _, u := range []rune{hi, lo} {
					b = append(b, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
				}
			default:
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
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
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			} else {
				b = append(b, c)
			}
		}
		i++
	}
	return append(b, '"')
}

// checkPerRune fails unless Append writes s as perRune did. The writers
// differ only on invalid UTF-8: perRune wrote the escape \ufffd, which
// Jackson never writes, where Append writes U+FFFD raw, as Jackson writes
// the replacement character a Java String holds there; so an invalid s is
// compared as the string of runes Go decodes from it, one U+FFFD per
// invalid byte, and must then come out the same as Append(s).
func checkPerRune(t *testing.T, s string) {
	t.Helper()
	got := Append(nil, s)
	valid := string([]rune(s))
	if want := perRune(nil, valid); string(got) != string(want) {
		t.Fatalf("Append(%q) = %s, the per-rune writer gives %s", s, got, want)
	}
}

// The string writer and the MongoDB message's former writer agree on
// random texts (randomText) of the pieces either must notice.
func TestAppendMatchesPerRune(t *testing.T) {
	next := randomText(t, []string{"a", " ", "\x7f", "\x1f", "\x00", `"`, `\`, "\b", "\t", "\n", "\f", "\r", "é", "日", "😀",
		"\xff", "\xc3", "\x80", "\xed\xa0\x80", "\u2028", "\ufffd", "\uffff", "\U00010348", "\xf0\x9f", "\U0010FFFF"})
	for range 100_000 {
		checkPerRune(t, string(next()))
	}
}

// FuzzAppendPerRune is TestAppendMatchesPerRune on the fuzzer's strings.
func FuzzAppendPerRune(f *testing.F) {
	f.Add("plain ascii text, long enough for the eight-byte path")
	f.Add("\"\\\x00\x1f\x7f<&>\u2028\u2029\ufffd\uffff\b\t\n\f\r")
	f.Add("emoji \U0001F600 gothic \U00010348 \U0010FFFF é 中")
	f.Add("\xff\xfe\xc3(\xed\xa0\x80\xf0\x9f\x98 \xf4\x90\x80\x80")
	f.Fuzz(checkPerRune)
}

// randomText returns a source of random texts of every length up to 80:
// lower-case letters, and one piece in four drawn from alphabet (the
// bytes a writer must notice). Its seed is logged.
func randomText(t *testing.T, alphabet []string) func() []byte {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	return func() []byte {
		var in []byte
		for n := rng.IntN(80); len(in) < n; {
			if rng.IntN(4) == 0 {
				in = append(in, alphabet[rng.IntN(len(alphabet))]...)
			} else {
				in = append(in, byte('a'+rng.IntN(26)))
			}
		}
		return in
	}
}
