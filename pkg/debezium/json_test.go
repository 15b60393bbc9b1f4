package debezium

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

func TestAppendString(t *testing.T) {
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
		got := string(appendString(nil, tt.in))
		if got != tt.want {
			t.Errorf("appendString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if gotB := string(appendString(nil, []byte(tt.in))); gotB != got {
			t.Errorf("appendString([]byte %q) = %s, string form gives %s", tt.in, gotB, got)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("appendString(%q) = %s: invalid JSON", tt.in, got)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Fatal(err)
		}
		if want := replaceInvalid(tt.in); back != want {
			t.Errorf("round trip of %q = %q, want %q", tt.in, back, want)
		}
	}
}

// replaceInvalid is what encoding/json makes of s: each invalid byte
// becomes U+FFFD.
func replaceInvalid(s string) string {
	var out []rune
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		out = append(out, r)
		i += size
	}
	return string(out)
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

func TestAppendJavaFloat(t *testing.T) {
	// Expected strings are Java's Double.toString / Float.toString (JDK 19+).
	doubles := []struct {
		in   float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{-1, "-1.0"},
		{100, "100.0"},
		{1.5, "1.5"},
		{123.456, "123.456"},
		{math.Nextafter(0.3, 1), "0.30000000000000004"}, // 0.1+0.2 at run time
		{0.001, "0.001"},
		{0.00123, "0.00123"},
		{0.0001, "1.0E-4"},
		{1e-5, "1.0E-5"},
		{1.234e-5, "1.234E-5"},
		{9999999, "9999999.0"},
		{9999999.5, "9999999.5"},
		{1e7, "1.0E7"},
		{12345678.9, "1.23456789E7"},
		{1e21, "1.0E21"},
		{1e23, "1.0E23"},
		{-2.5e-10, "-2.5E-10"},
		{math.MaxFloat64, "1.7976931348623157E308"},
		{math.SmallestNonzeroFloat64, "4.9E-324"},
		{2 * math.SmallestNonzeroFloat64, "9.9E-324"},
		{0x1p-1022, "2.2250738585072014E-308"}, // Double.MIN_NORMAL
		{math.Pi, "3.141592653589793"},
		{math.NaN(), `"NaN"`},
		{math.Inf(1), `"Infinity"`},
		{math.Inf(-1), `"-Infinity"`},
	}
	for _, tt := range doubles {
		if got := string(appendJavaFloat(nil, tt.in, 64)); got != tt.want {
			t.Errorf("double %v: got %s, want %s", tt.in, got, tt.want)
		}
	}
	floats := []struct {
		in   float32
		want string
	}{
		{0, "0.0"},
		{1.1, "1.1"},
		{0.1, "0.1"},
		{3.14, "3.14"},
		{16777216, "1.6777216E7"},
		{1e10, "1.0E10"},
		{math.MaxFloat32, "3.4028235E38"},
		{math.SmallestNonzeroFloat32, "1.4E-45"},
		{1e-3, "0.001"},
		{-123.25, "-123.25"},
	}
	for _, tt := range floats {
		if got := string(appendJavaFloat(nil, float64(tt.in), 32)); got != tt.want {
			t.Errorf("float %v: got %s, want %s", tt.in, got, tt.want)
		}
	}
}

// Every finite double written must parse back to itself.
func TestAppendJavaFloatRoundTrip(t *testing.T) {
	vals := []float64{5e-324, 1e-310, 2.2250738585072014e-308, 1e-300, 0.5, 1 / 3.0, 2e22, 1e300}
	for i := range 2000 {
		vals = append(vals, math.Float64frombits(uint64(i)*0x9E3779B97F4A7C15))
	}
	for _, f := range vals {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := appendJavaFloat(nil, f, 64)
		var back float64
		if err := json.Unmarshal(s, &back); err != nil || back != f {
			t.Fatalf("%v written as %s, read back %v (%v)", f, s, back, err)
		}
	}
}

// appendStringBody reads eight plain bytes at a time (plain8) and the rest
// one by one; random strings of every length up to 80, of bytes drawn
// mostly from the ones either path must notice (the seed is printed), are
// escaped as one rune at a time would be: an ASCII byte by its escape, a
// rune outside the BMP as its escaped surrogate pair, another valid
// sequence raw, an invalid byte as a raw U+FFFD.
func TestAppendStringEightAtATime(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	alphabet := []string{"a", "Z", " ", "~", "\x7f", "\x1f", "\x00", "\x20", "\x21", "\x23", "\x5b", "\x5d", `"`, `\`, "\n", "é", "日", "😀", "\xff", "\xc3", "\x80", "\u2028", "\U00010348", "\xf0\x9f", "\U0010FFFF"}
	for range 200_000 {
		var in []byte
		for n := rng.IntN(80); len(in) < n; {
			if rng.IntN(4) == 0 {
				in = append(in, alphabet[rng.IntN(len(alphabet))]...)
			} else {
				in = append(in, byte('a'+rng.IntN(26)))
			}
		}
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
		if got := appendStringBody(nil, in); string(got) != string(want) {
			t.Fatalf("appendStringBody(%q) = %q, want %q", in, got, want)
		}
		if got := appendStringBody(nil, string(in)); string(got) != string(want) {
			t.Fatalf("appendStringBody(string %q) = %q, want %q", in, got, want)
		}
	}
}
