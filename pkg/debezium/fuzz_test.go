package debezium

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"testing"
	"unicode/utf8"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// FuzzAppendValue encodes rows built from fuzz input — strings with
// arbitrary bytes in values, a column name and the source block — and
// checks that key and value are valid JSON and that every value reads back
// as what went in (invalid UTF-8 as U+FFFD, like encoding/json).
func FuzzAppendValue(f *testing.F) {
	f.Add("hello", []byte{0, 1, 2}, int64(0), 1.5, 6)
	f.Add("\"\\\x00\x1f\x7f<&>\u2028", []byte{}, int64(-1), math.NaN(), 3)
	f.Add("\xff\xfe\xc3(\xed\xa0\x80 😀 日本", []byte("\xff"), int64(math.MinInt64), math.Inf(-1), 0)
	f.Add("-12.50", []byte(nil), int64(1_700_000_000_123_456), 5e-324, 9)
	f.Add("99999999999999999999999999999999999999.99", []byte("x"), int64(math.MaxInt64), math.Copysign(0, -1), -1)

	f.Fuzz(func(t *testing.T, text string, raw []byte, n int64, fl float64, prec int) {
		prec = prec%12 - 1 // -1 … 10
		ty := func(k change.Kind) change.Type { return change.Type{Kind: k, Precision: prec, Scale: -1, Length: -1} }
		tbl := &change.Table{
			ID: change.TableID{DB: text, Schema: text, Name: text},
			Columns: []change.Column{
				{Name: "id", Type: ty(change.KindInt64)},
				{Name: "s", Type: ty(change.KindString)},
				{Name: "j", Type: ty(change.KindJSON), Optional: true},
				{Name: "b", Type: ty(change.KindBytes), Optional: true},
				{Name: "f64", Type: ty(change.KindFloat64)},
				{Name: "f32", Type: ty(change.KindFloat32)},
				{Name: "ts", Type: ty(change.KindTimestamp)},
				{Name: "tz", Type: ty(change.KindTimestampTZ)},
				{Name: "x_" + text, Type: ty(change.KindString), Optional: true},
			},
			Key: []int{0, 1},
		}
		if prec > 6 && (n > math.MaxInt64/1000 || n < math.MinInt64/1000) {
			n /= 1000 // keep NanoTimestamp in range; overflow is tested elsewhere
		}
		ev := &change.Event{
			Table: tbl,
			Op:    change.OpUpdate,
			After: change.Row{change.IntValue(n), change.TextValue(text), change.TextValue(text), change.BinaryValue(raw),
				change.FloatValue(fl), change.FloatValue(fl), change.IntValue(n), change.IntValue(n), change.TextValue(text)},
			Source: change.Source{Block: blocks["postgresql"], Name: text, Sequence: text, Snapshot: text, CommitMicros: n / 1000},
		}
		e := NewEncoder(Options{TopicPrefix: "fz"})
		value, err := e.AppendValue(nil, ev, n/1000)
		if err != nil {
			t.Fatal(err)
		}
		key, ok, err := e.AppendKey(nil, ev)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		for _, msg := range [][]byte{key, value} {
			if !json.Valid(msg) {
				t.Fatalf("invalid JSON: %q", msg)
			}
		}

		want := replaceInvalid(text)
		var v struct {
			Payload struct {
				After  map[string]any `json:"after"`
				Source map[string]any `json:"source"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(value, &v); err != nil {
			t.Fatal(err)
		}
		after := v.Payload.After
		for _, name := range []string{"s", "j", "x_" + want} {
			if got := after[name]; got != want {
				t.Errorf("column %q: got %q, want %q", name, got, want)
			}
		}
		if got, _ := base64.StdEncoding.DecodeString(after["b"].(string)); string(got) != string(raw) {
			t.Errorf("bytes: got %x, want %x", got, raw)
		}
		checkFloat(t, after["f64"], fl, 64)
		checkFloat(t, after["f32"], float64(float32(fl)), 32)
		wantSource := map[string]any{"name": want, "sequence": want, "snapshot": want, "db": want, "schema": want, "table": want}
		if text == "" { // empty source fields: Debezium's defaults
			wantSource["name"], wantSource["sequence"], wantSource["snapshot"] = "fz", nil, "false"
		}
		for k, w := range wantSource {
			if got := v.Payload.Source[k]; got != w {
				t.Errorf("source.%s: got %q, want %q", k, got, w)
			}
		}

		// Decimals: text either is rejected or encodes the number it spells.
		if out, err := appendDecimalFixed(nil, []byte(text), 4); err == nil {
			if !plainDecimal.MatchString(text) {
				t.Fatalf("accepted %q", text)
			}
			if ref := refUnscaled(t, text, 4); string(out) != ref {
				t.Fatalf("%q: got %s, want %s", text, out, ref)
			}
		} else if !errors.Is(err, ErrDecimal) && !errors.Is(err, ErrSpecialDecimal) {
			t.Fatalf("%q: unexpected error %v", text, err)
		}
	})
}

var plainDecimal = regexp.MustCompile(`^[+-]?[0-9]*\.?[0-9]*$`)

// checkFloat checks a float read back by encoding/json; a float32 column is
// written with Float.toString's shortest digits for the float32, so it
// compares as float32.
func checkFloat(t *testing.T, got any, want float64, bitSize int) {
	t.Helper()
	switch {
	case math.IsNaN(want):
		if got != "NaN" {
			t.Errorf("NaN written as %v", got)
		}
	case math.IsInf(want, 1):
		if got != "Infinity" {
			t.Errorf("+Inf written as %v", got)
		}
	case math.IsInf(want, -1):
		if got != "-Infinity" {
			t.Errorf("-Inf written as %v", got)
		}
	default:
		g, ok := got.(float64)
		if bitSize == 32 {
			ok = ok && float32(g) == float32(want)
		} else {
			ok = ok && g == want
		}
		if !ok {
			t.Errorf("float %v read back as %v", want, got)
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
