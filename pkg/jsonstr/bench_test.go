package jsonstr

import (
	"strings"
	"testing"
)

// BenchmarkAppend: the string writer on ASCII text (the fast path
// most column values take), on BMP text with non-ASCII letters, and on
// text with characters outside the BMP (written as surrogate escapes).
func BenchmarkAppend(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"ascii", strings.Repeat("The quick brown fox jumps over the lazy dog, 42 times. ", 4)},
		{"short", "alice@example.com"},
		{"bmp", strings.Repeat("Zażółć gęślą jaźń, 日本語のテキスト. ", 4)},
		{"nonbmp", strings.Repeat("emoji \U0001F600 and \U0001F4A9, gothic \U00010348. ", 4)},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 4096)
			b.SetBytes(int64(len(c.s)))
			b.ReportAllocs()
			for b.Loop() {
				buf = Append(buf[:0], c.s)
			}
		})
	}
}
