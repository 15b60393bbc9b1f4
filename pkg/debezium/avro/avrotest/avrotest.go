// Package avrotest decodes Avro records with an independent library
// (github.com/hamba/avro) and compares them with the Debezium JSON payload
// of the same change, for the tests of pkg/debezium/avro and the
// integration tests.
package avrotest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"time"

	hamba "github.com/hamba/avro/v2"
)

// Decode decodes body with the Avro schema text, as a consumer does.
func Decode(schemaText string, body []byte) (any, hamba.Schema, error) {
	s, err := hamba.Parse(schemaText)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing the registered schema: %w", err)
	}
	var v any
	if err := hamba.Unmarshal(s, body, &v); err != nil {
		return nil, s, fmt.Errorf("decoding: %w", err)
	}
	return v, s, nil
}

// Compare reports the first difference between the JSON payload of a
// Debezium message and the decoded Avro record of the same message: every
// field's value must be the same once Avro's forms are written as
// JsonConverter writes them (bytes and decimals in base64, dates as days,
// floats' NaN and infinities as strings). Avro field names are compared
// with the JSON keys as Debezium adjusts them (invalid characters as '_').
func Compare(payload []byte, s hamba.Schema, decoded any) error {
	d := json.NewDecoder(bytes.NewReader(payload))
	d.UseNumber()
	var j any
	if err := d.Decode(&j); err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	return compare("$", j, s, decoded, func(string) bool { return false })
}

// CompareExcept is Compare leaving out the fields whose path ("$.ts_ms",
// "$.source.name") skip returns true for.
func CompareExcept(payload []byte, s hamba.Schema, decoded any, skip func(path string) bool) error {
	d := json.NewDecoder(bytes.NewReader(payload))
	d.UseNumber()
	var j any
	if err := d.Decode(&j); err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	return compare("$", j, s, decoded, skip)
}

func compare(path string, j any, s hamba.Schema, a any, skip func(string) bool) error {
	if skip(path) {
		return nil
	}
	if u, ok := s.(*hamba.UnionSchema); ok {
		if j == nil {
			if a != nil {
				return fmt.Errorf("%s: JSON null, Avro %v", path, a)
			}
			return nil
		}
		for _, t := range u.Types() {
			if t.Type() != hamba.Null {
				// A union of null and a named type may decode as
				// {full name: value}.
				if m, ok := a.(map[string]any); ok && len(m) == 1 {
					name := string(t.Type())
					if r, ok := t.(*hamba.RefSchema); ok {
						name = r.Schema().FullName()
					} else if n, ok := t.(hamba.NamedSchema); ok {
						name = n.FullName()
					}
					if v, ok := m[name]; ok {
						a = v
					}
				}
				return compare(path, j, t, a, skip)
			}
		}
	}
	if r, ok := s.(*hamba.RefSchema); ok {
		s = r.Schema()
	}
	if j == nil {
		return fmt.Errorf("%s: JSON null, Avro %v", path, a)
	}
	switch s := s.(type) {
	case *hamba.RecordSchema:
		jm, ok1 := j.(map[string]any)
		am, ok2 := a.(map[string]any)
		if !ok1 || !ok2 {
			return fmt.Errorf("%s: record expected, JSON %T, Avro %T", path, j, a)
		}
		if len(jm) != len(s.Fields()) {
			keys := make([]string, 0, len(jm))
			for k := range jm {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return fmt.Errorf("%s: JSON has %d fields %v, Avro schema %d", path, len(jm), keys, len(s.Fields()))
		}
		for _, f := range s.Fields() {
			jv, ok := jm[f.Name()]
			if !ok {
				// An adjusted name: find the JSON key it came from.
				for k, v := range jm {
					if adjust(k) == f.Name() {
						jv, ok = v, true
					}
				}
			}
			if !ok {
				return fmt.Errorf("%s: Avro field %s not in the JSON", path, f.Name())
			}
			if err := compare(path+"."+f.Name(), jv, f.Type(), am[f.Name()], skip); err != nil {
				return err
			}
		}
		return nil
	case *hamba.ArraySchema:
		ja, ok1 := j.([]any)
		aa, ok2 := a.([]any)
		if !ok1 || !ok2 || len(ja) != len(aa) {
			return fmt.Errorf("%s: arrays differ: JSON %v, Avro %v", path, j, a)
		}
		for i := range ja {
			if err := compare(fmt.Sprintf("%s[%d]", path, i), ja[i], s.Items(), aa[i], skip); err != nil {
				return err
			}
		}
		return nil
	case *hamba.MapSchema:
		jm, ok1 := j.(map[string]any)
		am, ok2 := a.(map[string]any)
		if !ok1 || !ok2 || len(jm) != len(am) {
			return fmt.Errorf("%s: maps differ: JSON %v, Avro %v", path, j, a)
		}
		for k := range jm {
			if err := compare(path+"."+k, jm[k], s.Values(), am[k], skip); err != nil {
				return err
			}
		}
		return nil
	case *hamba.PrimitiveSchema:
		got, err := asJSON(s, a)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if !sameJSON(j, got) {
			return fmt.Errorf("%s: JSON %v, Avro %v (%v)", path, j, got, a)
		}
		return nil
	}
	return fmt.Errorf("%s: schema %s not handled", path, s.Type())
}

// asJSON writes a decoded Avro primitive as JsonConverter would.
func asJSON(s *hamba.PrimitiveSchema, a any) (any, error) {
	switch v := a.(type) {
	case *big.Rat:
		ls, _ := s.Logical().(*hamba.DecimalLogicalSchema)
		if ls == nil {
			return nil, fmt.Errorf("big.Rat without a decimal schema")
		}
		unscaled := new(big.Int).Mul(v.Num(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(ls.Scale())), nil))
		unscaled.Quo(unscaled, v.Denom())
		return base64.StdEncoding.EncodeToString(twosComplement(unscaled)), nil
	case []byte:
		return base64.StdEncoding.EncodeToString(v), nil
	case time.Time:
		switch s.Logical().Type() {
		case hamba.Date:
			return json.Number(strconv.FormatInt(v.Unix()/86400, 10)), nil
		default:
			return json.Number(strconv.FormatInt(v.UnixMilli(), 10)), nil
		}
	case time.Duration:
		return json.Number(strconv.FormatInt(v.Milliseconds(), 10)), nil
	case int:
		return json.Number(strconv.Itoa(v)), nil
	case int32:
		return json.Number(strconv.FormatInt(int64(v), 10)), nil
	case int64:
		return json.Number(strconv.FormatInt(v, 10)), nil
	case float32:
		return floatJSON(float64(v), 32), nil
	case float64:
		return floatJSON(v, 64), nil
	case string, bool:
		return v, nil
	}
	return nil, fmt.Errorf("decoded %T not handled", a)
}

func floatJSON(f float64, bits int) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, bits))
}

// sameJSON compares a JSON value with the one written from Avro; numbers
// by value.
func sameJSON(j, a any) bool {
	jn, ok1 := j.(json.Number)
	an, ok2 := a.(json.Number)
	if ok1 && ok2 {
		if ji, err := jn.Int64(); err == nil {
			if ai, err := an.Int64(); err == nil {
				return ji == ai
			}
		}
		jf, err1 := strconv.ParseFloat(string(jn), 64)
		af, err2 := strconv.ParseFloat(string(an), 64)
		if err1 == nil && err2 == nil && float32(jf) == float32(af) {
			return jf == af || float64(float32(af)) == af // a float's JSON has more digits than its 32 bits hold
		}
		return false
	}
	return j == a
}

// twosComplement is the big-endian two's complement of i in the fewest
// bytes, as Java's BigInteger.toByteArray.
func twosComplement(i *big.Int) []byte {
	if i.Sign() >= 0 {
		b := i.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	n := len(i.Bytes()) + 1
	m := new(big.Int).Lsh(big.NewInt(1), uint(n*8))
	b := new(big.Int).Add(m, i).Bytes()
	for len(b) > 1 && b[0] == 0xff && b[1]&0x80 != 0 {
		b = b[1:]
	}
	return b
}

func adjust(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == '_':
		case c >= '0' && c <= '9':
			if i == 0 {
				b = append(b, '_')
			}
		default:
			c = '_'
		}
		b = append(b, c)
	}
	return string(b)
}
