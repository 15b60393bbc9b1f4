package debezium

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// pgSource is a minimal PostgreSQL source block for tests.
var pgSource = with(change.Source{Block: blocks["postgresql"], Name: "shop", DB: "shop", CommitMicros: 1_700_000_000_000_000}, "lsn", 1, "txId", 2)

// oneColumn encodes an insert into public.t (id int4 key, c <typ>) and
// returns the value message.
func oneColumn(t *testing.T, typ change.Type, optional bool, v change.Value) (string, error) {
	t.Helper()
	tbl := &change.Table{
		ID: change.TableID{DB: "shop", Schema: "public", Name: "t"},
		Columns: []change.Column{
			{Name: "id", Type: change.Type{Kind: change.KindInt32, Name: "int4", Precision: -1, Scale: -1, Length: -1}},
			{Name: "c", Type: typ, Optional: optional},
		},
		Key: []int{0},
	}
	e := NewEncoder(Options{TopicPrefix: "shop"})
	ev := &change.Event{Table: tbl, Op: change.OpCreate, After: change.Row{change.IntValue(1), v}, Source: pgSource}
	out, err := e.AppendValue(nil, ev, 1_700_000_000_500_000)
	if err == nil && !json.Valid(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	return string(out), err
}

func arrayOf(k change.Kind) change.Type {
	e := typ(k, -1, -1)
	return change.Type{Kind: change.KindArray, Precision: -1, Scale: -1, Length: -1, Elem: &e}
}

func arrayValue(elems ...change.Value) change.Value {
	return change.Value{Kind: change.Array, Elems: elems}
}

func typ(k change.Kind, precision, scale int) change.Type {
	return change.Type{Kind: k, Precision: precision, Scale: scale, Length: -1}
}

func TestKinds(t *testing.T) {
	const (
		decimalSchema = `{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"c"}`
		varDecSchema  = `{"type":"struct","fields":[{"type":"int32","optional":false,"field":"scale"},{"type":"bytes","optional":false,"field":"value"}],"optional":true,"name":"io.debezium.data.VariableScaleDecimal","version":1,"doc":"Variable scaled decimal","field":"c"}`
	)
	tests := []struct {
		name       string
		typ        change.Type
		optional   bool
		value      change.Value
		wantSchema string // the column's field schema, byte for byte
		wantValue  string // the column's payload value, byte for byte
	}{
		{"bool true", typ(change.KindBool, -1, -1), false, change.IntValue(1), `{"type":"boolean","optional":false,"field":"c"}`, `true`},
		{"bool false", typ(change.KindBool, -1, -1), false, change.IntValue(0), `{"type":"boolean","optional":false,"field":"c"}`, `false`},
		{"bool null", typ(change.KindBool, -1, -1), true, change.Value{}, `{"type":"boolean","optional":true,"field":"c"}`, `null`},
		{"int16 min", typ(change.KindInt16, -1, -1), false, change.IntValue(math.MinInt16), `{"type":"int16","optional":false,"field":"c"}`, `-32768`},
		{"int16 max", typ(change.KindInt16, -1, -1), false, change.IntValue(math.MaxInt16), `{"type":"int16","optional":false,"field":"c"}`, `32767`},
		{"int32 min", typ(change.KindInt32, -1, -1), false, change.IntValue(math.MinInt32), `{"type":"int32","optional":false,"field":"c"}`, `-2147483648`},
		{"int64 min", typ(change.KindInt64, -1, -1), true, change.IntValue(math.MinInt64), `{"type":"int64","optional":true,"field":"c"}`, `-9223372036854775808`},
		{"int64 max", typ(change.KindInt64, -1, -1), true, change.IntValue(math.MaxInt64), `{"type":"int64","optional":true,"field":"c"}`, `9223372036854775807`},
		{"float32", typ(change.KindFloat32, -1, -1), false, change.FloatValue(1.1), `{"type":"float","optional":false,"field":"c"}`, `1.1`},
		{"float32 NaN", typ(change.KindFloat32, -1, -1), false, change.FloatValue(math.NaN()), `{"type":"float","optional":false,"field":"c"}`, `"NaN"`},
		{"float64", typ(change.KindFloat64, -1, -1), false, change.FloatValue(1e7), `{"type":"double","optional":false,"field":"c"}`, `1.0E7`},
		{"float64 -0", typ(change.KindFloat64, -1, -1), false, change.FloatValue(math.Copysign(0, -1)), `{"type":"double","optional":false,"field":"c"}`, `-0.0`},
		{"float64 -Inf", typ(change.KindFloat64, -1, -1), false, change.FloatValue(math.Inf(-1)), `{"type":"double","optional":false,"field":"c"}`, `"-Infinity"`},
		{"decimal negative", typ(change.KindDecimal, 10, 2), false, change.TextValue("-12.50"), decimalSchema, `"+x4="`},
		{"decimal zero", typ(change.KindDecimal, 10, 2), false, change.TextValue("0.00"), decimalSchema, `"AA=="`},
		{"decimal positive", typ(change.KindDecimal, 10, 2), false, change.TextValue("12345678.99"), decimalSchema, `"SZYC2w=="`}, // 1234567899 = 0x499602DB
		{"decimal 38 digits", typ(change.KindDecimal, 38, 0), false, change.TextValue("99999999999999999999999999999999999999"),
			`{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"0","connect.decimal.precision":"38"},"field":"c"}`,
			`"SztMqFqGxHoJiiI//////w=="`},
		{"decimal no precision", typ(change.KindDecimal, -1, 3), false, change.TextValue("1"),
			`{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"3"},"field":"c"}`, `"A+g="`},
		{"numeric variable", typ(change.KindDecimal, -1, -1), true, change.TextValue("12.50"), varDecSchema, `{"scale":1,"value":"fQ=="}`},
		{"numeric variable negative", typ(change.KindDecimal, -1, -1), true, change.TextValue("-0.001"), varDecSchema, `{"scale":3,"value":"/w=="}`},
		{"numeric variable null", typ(change.KindDecimal, -1, -1), true, change.Value{}, varDecSchema, `null`},
		{"string escapes", typ(change.KindString, -1, -1), false, change.TextValue("a\"b\\c\n\x01é😀<&>"), `{"type":"string","optional":false,"field":"c"}`, `"a\"b\\c\n\u0001é\uD83D\uDE00<&>"`},
		{"string invalid utf8", typ(change.KindString, -1, -1), false, change.TextValue("x\xffy"), `{"type":"string","optional":false,"field":"c"}`, "\"x\uFFFDy\""},
		{"string unavailable", typ(change.KindString, -1, -1), true, change.Value{Kind: change.Unavailable}, `{"type":"string","optional":true,"field":"c"}`, `"__debezium_unavailable_value"`},
		{"json", typ(change.KindJSON, -1, -1), true, change.TextValue(`{"a": [1, "x"]}`), `{"type":"string","optional":true,"name":"io.debezium.data.Json","version":1,"field":"c"}`, `"{\"a\": [1, \"x\"]}"`},
		{"json unavailable", typ(change.KindJSON, -1, -1), true, change.Value{Kind: change.Unavailable}, `{"type":"string","optional":true,"name":"io.debezium.data.Json","version":1,"field":"c"}`, `"__debezium_unavailable_value"`},
		{"uuid", typ(change.KindUUID, -1, -1), false, change.TextValue("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), `{"type":"string","optional":false,"name":"io.debezium.data.Uuid","version":1,"field":"c"}`, `"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"`},
		{"bytes", typ(change.KindBytes, -1, -1), true, change.BinaryValue([]byte{0, 1, 2, 255}), `{"type":"bytes","optional":true,"field":"c"}`, `"AAEC/w=="`},
		{"bytes empty", typ(change.KindBytes, -1, -1), true, change.BinaryValue([]byte{}), `{"type":"bytes","optional":true,"field":"c"}`, `""`},
		{"bytes unavailable", typ(change.KindBytes, -1, -1), true, change.Value{Kind: change.Unavailable}, `{"type":"bytes","optional":true,"field":"c"}`, `"X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=="`},
		{"date", typ(change.KindDate, -1, -1), false, change.IntValue(19675), `{"type":"int32","optional":false,"name":"io.debezium.time.Date","version":1,"field":"c"}`, `19675`},
		{"date before 1970", typ(change.KindDate, -1, -1), false, change.IntValue(-25567), `{"type":"int32","optional":false,"name":"io.debezium.time.Date","version":1,"field":"c"}`, `-25567`},
		{"time(3)", typ(change.KindTime, 3, -1), false, change.IntValue(45296789000), `{"type":"int32","optional":false,"name":"io.debezium.time.Time","version":1,"field":"c"}`, `45296789`},
		{"time(6)", typ(change.KindTime, 6, -1), false, change.IntValue(45296789012), `{"type":"int64","optional":false,"name":"io.debezium.time.MicroTime","version":1,"field":"c"}`, `45296789012`},
		{"time default precision", typ(change.KindTime, -1, -1), false, change.IntValue(86400000000), `{"type":"int64","optional":false,"name":"io.debezium.time.MicroTime","version":1,"field":"c"}`, `86400000000`},
		{"time(9)", typ(change.KindTime, 9, -1), false, change.IntValue(1), `{"type":"int64","optional":false,"name":"io.debezium.time.NanoTime","version":1,"field":"c"}`, `1000`},
		{"timestamp(3)", typ(change.KindTimestamp, 3, -1), false, change.IntValue(1700000000123000), `{"type":"int64","optional":false,"name":"io.debezium.time.Timestamp","version":1,"field":"c"}`, `1700000000123`},
		{"timestamp(3) before 1970", typ(change.KindTimestamp, 3, -1), false, change.IntValue(-1500), `{"type":"int64","optional":false,"name":"io.debezium.time.Timestamp","version":1,"field":"c"}`, `-2`},
		{"timestamp default", typ(change.KindTimestamp, -1, -1), true, change.IntValue(-62135596800000000), `{"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"c"}`, `-62135596800000000`},
		{"timestamp(6)", typ(change.KindTimestamp, 6, -1), true, change.IntValue(1700000000123456), `{"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"c"}`, `1700000000123456`},
		{"timestamp(9)", typ(change.KindTimestamp, 9, -1), true, change.IntValue(-1), `{"type":"int64","optional":true,"name":"io.debezium.time.NanoTimestamp","version":1,"field":"c"}`, `-1000`},
		{"timestamptz default", typ(change.KindTimestampTZ, -1, -1), true, change.IntValue(1700000000120000), `{"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","version":1,"field":"c"}`, `"2023-11-14T22:13:20.120000Z"`},
		{"timestamptz(3)", typ(change.KindTimestampTZ, 3, -1), true, change.IntValue(1700000000123000), `{"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","version":1,"field":"c"}`, `"2023-11-14T22:13:20.123Z"`},
		{"timestamptz(0)", typ(change.KindTimestampTZ, 0, -1), true, change.IntValue(1700000000000000), `{"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","version":1,"field":"c"}`, `"2023-11-14T22:13:20Z"`},
		{"timestamptz before 1970", typ(change.KindTimestampTZ, 6, -1), false, change.IntValue(-1), `{"type":"string","optional":false,"name":"io.debezium.time.ZonedTimestamp","version":1,"field":"c"}`, `"1969-12-31T23:59:59.999999Z"`},
		// Unchanged-TOAST arrays, as Debezium 3.6.1.Final writes them
		// (integration/postgres/fidelity_test.go, table arr_t).
		{"text array unavailable", arrayOf(change.KindString), true, change.Value{Kind: change.Unavailable}, `{"type":"array","items":{"type":"string","optional":true},"optional":true,"field":"c"}`, `["__debezium_unavailable_value"]`},
		{"int4 array unavailable", arrayOf(change.KindInt32), true, change.Value{Kind: change.Unavailable}, `{"type":"array","items":{"type":"int32","optional":true},"optional":true,"field":"c"}`, `[95,95,100,101,98,101,122,105,117,109,95,117,110,97,118,97,105,108,97,98,108,101,95,118,97,108,117,101]`},
		{"uuid array unavailable", arrayOf(change.KindUUID), true, change.Value{Kind: change.Unavailable}, `"items":{"type":"string","optional":true,"name":"io.debezium.data.Uuid","version":1}`, `["b68a35a7-17ad-35b3-af2a-ae46edb4545a"]`},
		{"float8 array unavailable", arrayOf(change.KindFloat64), true, change.Value{Kind: change.Unavailable}, `{"type":"array","items":{"type":"double","optional":true},"optional":true,"field":"c"}`, `null`},
		// Debezium converts an array whole: a NaN numeric or a NULL enum
		// element makes the field null.
		{"numeric array with NaN", arrayOf(change.KindDecimal), true, arrayValue(change.Value{Kind: change.Text, Bytes: []byte("1")}, change.Value{Kind: change.Text, Bytes: []byte("NaN")}), `"items":{"type":"struct"`, `null`},
		{"enum array with NULL", change.Type{Kind: change.KindArray, Precision: -1, Scale: -1, Length: -1, Elem: &change.Type{Kind: change.KindEnum, Values: "a,b"}}, true, arrayValue(change.TextValue("a"), change.Value{}), `"items":{"type":"string","optional":false,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"a,b"}}`, `null`},
		// A null in a NOT NULL column (a delete's old row under REPLICA
		// IDENTITY DEFAULT) gets Debezium's fallback value, never null.
		{"required null bool", typ(change.KindBool, -1, -1), false, change.Value{}, `{"type":"boolean","optional":false,"field":"c"}`, `false`},
		{"required null int", typ(change.KindInt64, -1, -1), false, change.Value{}, `{"type":"int64","optional":false,"field":"c"}`, `0`},
		{"required null double", typ(change.KindFloat64, -1, -1), false, change.Value{}, `{"type":"double","optional":false,"field":"c"}`, `0.0`},
		{"required null decimal", typ(change.KindDecimal, 10, 2), false, change.Value{}, decimalSchema, `"AA=="`},
		{"required null string", typ(change.KindString, -1, -1), false, change.Value{}, `{"type":"string","optional":false,"field":"c"}`, `""`},
		// hstore's converter falls back to an empty object (found by the
		// differential oracle: hstore NOT NULL, a delete's key-only old row).
		{"required null hstore", change.Type{Kind: change.KindJSON, Name: "hstore", Precision: -1, Scale: -1, Length: -1, Zero: "{}"}, false, change.Value{}, `{"type":"string","optional":false,"name":"io.debezium.data.Json","version":1,"field":"c"}`, `"{}"`},
		{"required null bytes", typ(change.KindBytes, -1, -1), false, change.Value{}, `{"type":"bytes","optional":false,"field":"c"}`, `""`},
		{"required null timestamptz", typ(change.KindTimestampTZ, -1, -1), false, change.Value{}, `{"type":"string","optional":false,"name":"io.debezium.time.ZonedTimestamp","version":1,"field":"c"}`, `"1970-01-01T00:00:00Z"`}, // Debezium's fallback: no fraction, whatever the precision (side by side: timestamptz, (3), (6) NOT NULL without a default)
		{"required null timestamp", typ(change.KindTimestamp, -1, -1), false, change.Value{}, `{"type":"int64","optional":false,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"c"}`, `0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := oneColumn(t, tt.typ, tt.optional, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			// The column appears in both before and after schemas.
			if n := strings.Count(out, tt.wantSchema); n != 2 {
				t.Errorf("schema fragment %s found %d times in\n%s", tt.wantSchema, n, out)
			}
			if want := `"before":null,"after":{"id":1,"c":` + tt.wantValue + `}`; !strings.Contains(out, want) {
				t.Errorf("payload %s not found in\n%s", want, out)
			}
		})
	}
}

func TestUnknownKindIsDropped(t *testing.T) {
	out, err := oneColumn(t, change.Type{Kind: change.KindUnknown, Name: "tsvector"}, true, change.TextValue("'a':1"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, `"field":"c"`) || !strings.Contains(out, `"after":{"id":1}`) {
		t.Errorf("unknown column not dropped:\n%s", out)
	}
}

func TestValueErrors(t *testing.T) {
	tests := []struct {
		name     string
		typ      change.Type
		optional bool
		value    change.Value
		want     error
	}{
		{"text in int column", typ(change.KindInt32, -1, -1), false, change.TextValue("1"), ErrValueKind},
		{"int in string column", typ(change.KindString, -1, -1), false, change.IntValue(1), ErrValueKind},
		{"binary in string column", typ(change.KindString, -1, -1), false, change.BinaryValue([]byte("x")), ErrValueKind},
		{"text in bytes column", typ(change.KindBytes, -1, -1), false, change.TextValue("x"), ErrValueKind},
		{"int in float column", typ(change.KindFloat64, -1, -1), false, change.IntValue(1), ErrValueKind},
		{"float in timestamp column", typ(change.KindTimestamp, -1, -1), false, change.FloatValue(1), ErrValueKind},
		{"int in decimal column", typ(change.KindDecimal, 10, 2), false, change.IntValue(1), ErrValueKind},
		{"int16 overflow", typ(change.KindInt16, -1, -1), false, change.IntValue(32768), ErrValueRange},
		{"int32 overflow", typ(change.KindInt32, -1, -1), false, change.IntValue(math.MaxInt32 + 1), ErrValueRange},
		{"date overflow", typ(change.KindDate, -1, -1), false, change.IntValue(math.MinInt32 - 1), ErrValueRange},
		{"bool 2", typ(change.KindBool, -1, -1), false, change.IntValue(2), ErrValueRange},
		{"nano timestamp overflow", typ(change.KindTimestamp, 9, -1), false, change.IntValue(math.MaxInt64 / 100), ErrValueRange},
		{"decimal NaN", typ(change.KindDecimal, 10, 2), false, change.TextValue("NaN"), ErrSpecialDecimal},
		{"numeric NaN", typ(change.KindDecimal, -1, -1), false, change.TextValue("NaN"), ErrSpecialDecimal}, // optional: null, as Debezium,
		{"decimal garbage", typ(change.KindDecimal, 10, 2), true, change.TextValue("12,50"), ErrDecimal},
		{"decimal too many digits", typ(change.KindDecimal, 10, 2), true, change.TextValue("1.005"), ErrDecimal},
		{"unavailable int", typ(change.KindInt64, -1, -1), true, change.Value{Kind: change.Unavailable}, ErrUnavailable},
		{"unavailable decimal", typ(change.KindDecimal, 10, 2), true, change.Value{Kind: change.Unavailable}, ErrUnavailable},
		{"bad value kind", typ(change.KindInt64, -1, -1), true, change.Value{Kind: 42}, ErrValueKind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := oneColumn(t, tt.typ, tt.optional, tt.value)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v (%s), want %v", err, out, tt.want)
			}
			if out != "" {
				t.Errorf("dst changed on error: %q", out)
			}
			var ee *EncodeError
			if !errors.As(err, &ee) || ee.Table != "public.t" || ee.Column != "c" || ee.Kind != tt.typ.Kind {
				t.Errorf("error does not name table, column and kind: %#v", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "public.t") || !strings.Contains(msg, `"c"`) || !strings.Contains(msg, kindName(tt.typ.Kind)) {
				t.Errorf("message %q does not name table, column and kind", msg)
			}
		})
	}
}
