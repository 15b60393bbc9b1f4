package debezium

import (
	"encoding/base64"
	"errors"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// javaToByteArray is Java's BigInteger.toByteArray, written with math/big:
// the reference the allocation-free encoder is checked against.
func javaToByteArray(x *big.Int) []byte {
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	m := new(big.Int).Neg(x)
	n := 1
	for {
		limit := new(big.Int).Lsh(big.NewInt(1), uint(8*n-1))
		if m.Cmp(limit) <= 0 {
			break
		}
		n++
	}
	v := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(8*n)), m)
	return v.FillBytes(make([]byte, n))
}

// refUnscaled returns the base64 JSON string for text at scale using big.Int.
func refUnscaled(t *testing.T, text string, scale int) string {
	t.Helper()
	neg := strings.HasPrefix(text, "-")
	s := strings.TrimLeft(text, "+-")
	ip, fp, _ := strings.Cut(s, ".")
	for len(fp) < scale {
		fp += "0"
	}
	fp = fp[:scale]
	x, ok := new(big.Int).SetString("0"+ip+fp, 10)
	if !ok {
		t.Fatalf("bad reference input %q", text)
	}
	if neg {
		x.Neg(x)
	}
	return `"` + base64.StdEncoding.EncodeToString(javaToByteArray(x)) + `"`
}

func TestDecimalFixed(t *testing.T) {
	tests := []struct {
		text  string
		scale int
		want  string // base64 JSON string; "" means compare with the reference
	}{
		{"0", 2, `"AA=="`},
		{"0.00", 2, `"AA=="`},
		{"-0.00", 2, `"AA=="`},
		{"-12.50", 2, `"+x4="`}, // -1250 = 0xFB1E
		{"12.50", 2, `"BOI="`},  // 1250 = 0x04E2
		{"12.5", 2, `"BOI="`},   // padded to the column's scale
		{"1.2300", 2, `"ew=="`}, // extra zeros dropped: 123 = 0x7B
		{"127", 0, `"fw=="`},
		{"128", 0, `"AIA="`},
		{"-128", 0, `"gA=="`},
		{"-129", 0, `"/38="`},
		{"255", 0, `"AP8="`},
		{"-1", 0, `"/w=="`},
		{".5", 1, `"BQ=="`},
		{"5.", 0, `"BQ=="`},
		{"+3", 0, `"Aw=="`},
		{"0001.10", 2, `"bg=="`}, // 110
		{"999999999999999999", 0, ""},
		{"-999999999999999999", 0, ""},
		{"9223372036854775807", 0, ""},  // 19 digits: limb path
		{"-9223372036854775808", 0, ""}, // exactly -2^63
		{"18446744073709551616", 0, ""}, // 2^64
		{"99999999999999999999999999999999999999", 0, ""},
		{"-1234567890123456789012345678901234567.89", 2, ""},
		{"0.00000000000000000000000000000000000001", 38, ""},
		{"12345678901234567.5", 20, ""}, // padding crosses the 18-digit limit
		{"-" + strings.Repeat("9", 200), 0, ""},
		{strings.Repeat("7", 140) + "." + strings.Repeat("3", 10), 12, ""}, // heap limbs
		{"-" + strings.Repeat("12345678901", 100), 5, ""},                  // 1100 digits
	}
	for _, tt := range tests {
		got, err := appendDecimalFixed(nil, []byte(tt.text), tt.scale)
		if err != nil {
			t.Errorf("%s scale %d: %v", tt.text, tt.scale, err)
			continue
		}
		want := tt.want
		if want == "" {
			want = refUnscaled(t, tt.text, tt.scale)
		} else if ref := refUnscaled(t, tt.text, tt.scale); ref != want {
			t.Fatalf("test table disagrees with reference for %s: %s vs %s", tt.text, want, ref)
		}
		if string(got) != want {
			t.Errorf("%s scale %d: got %s, want %s", tt.text, tt.scale, got, want)
		}
	}
}

func TestDecimalFixedRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var sb strings.Builder
		if r.IntN(2) == 0 {
			sb.WriteByte('-')
		}
		for range 1 + r.IntN(60) {
			sb.WriteByte(byte('0' + r.IntN(10)))
		}
		scale := r.IntN(12)
		if scale > 0 {
			sb.WriteByte('.')
			for range r.IntN(scale + 1) {
				sb.WriteByte(byte('0' + r.IntN(10)))
			}
		}
		text := sb.String()
		got, err := appendDecimalFixed(nil, []byte(text), scale)
		if err != nil {
			t.Fatalf("%s scale %d: %v", text, scale, err)
		}
		if want := refUnscaled(t, text, scale); string(got) != want {
			t.Fatalf("%s scale %d: got %s, want %s", text, scale, got, want)
		}
	}
}

func TestDecimalVariable(t *testing.T) {
	tests := []struct{ text, want string }{
		{"12.50", `{"scale":1,"value":"fQ=="}`}, // 125
		{"100", `{"scale":0,"value":"ZA=="}`},   // trailing integer zeros stay
		{"0", `{"scale":0,"value":"AA=="}`},
		{"0.000", `{"scale":0,"value":"AA=="}`},
		{"-0.001", `{"scale":3,"value":"/w=="}`},
		{"-12.345", `{"scale":3,"value":"z8c="}`}, // -12345 = 0xCFC7
		{"1234567890.0987654321", ""},             // filled in below: 20 digits, beyond int64
	}
	x, _ := new(big.Int).SetString("12345678900987654321", 10)
	tests[len(tests)-1].want = `{"scale":10,"value":"` + base64.StdEncoding.EncodeToString(javaToByteArray(x)) + `"}`
	for _, tt := range tests {
		got, err := appendDecimalVariable(nil, []byte(tt.text))
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %s, %v; want %s", tt.text, got, err, tt.want)
		}
	}
}

func TestDecimalErrors(t *testing.T) {
	tests := []struct {
		text  string
		scale int
		want  error
	}{
		{"", 0, ErrDecimal},
		{"-", 0, ErrDecimal},
		{".", 0, ErrDecimal},
		{"1.2.3", 0, ErrDecimal},
		{"1e5", 0, ErrDecimal},
		{" 1", 0, ErrDecimal},
		{"abc", 0, ErrDecimal},
		{"1.235", 2, ErrDecimal}, // would need rounding: Debezium's setScale throws too
		{"NaN", 2, ErrSpecialDecimal},
		{"Infinity", 2, ErrSpecialDecimal},
		{"-Infinity", 2, ErrSpecialDecimal},
		{"nan", 2, ErrSpecialDecimal},
	}
	for _, tt := range tests {
		if _, err := appendDecimalFixed(nil, []byte(tt.text), tt.scale); !errors.Is(err, tt.want) {
			t.Errorf("fixed %q: got %v, want %v", tt.text, err, tt.want)
		}
		if tt.scale == 0 || tt.want == ErrSpecialDecimal {
			if _, err := appendDecimalVariable(nil, []byte(tt.text)); !errors.Is(err, tt.want) {
				t.Errorf("variable %q: got %v, want %v", tt.text, err, tt.want)
			}
		}
	}
}
