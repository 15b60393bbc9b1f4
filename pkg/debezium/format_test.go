package debezium

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

const goldenNow = 1766925059873428

func appendBoth(t *testing.T, f Format, ev *change.Event) (key, value string) {
	t.Helper()
	e := NewEncoder(Options{TopicPrefix: "dbserver1", Format: f})
	k, _, err := e.AppendKey(nil, ev)
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.AppendValue(nil, ev, goldenNow)
	if err != nil {
		t.Fatal(err)
	}
	return string(k), string(v)
}

// payloadOf is the exact bytes of a message's payload.
func payloadOf(t *testing.T, msg string) string {
	t.Helper()
	var m struct{ Payload json.RawMessage }
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		t.Fatal(err)
	}
	return string(m.Payload)
}

// TestFormatNoSchemas: schemas.enable=false is the payload of the default
// message, byte for byte, for the key and the value.
func TestFormatNoSchemas(t *testing.T) {
	ev := goldenUpdateEvent()
	key, value := appendBoth(t, Format{NoSchemas: true}, ev)
	if want := payloadOf(t, goldenUpdateKey); key != want {
		t.Errorf("key\n got %s\nwant %s", key, want)
	}
	if want := payloadOf(t, goldenUpdateValue); value != want {
		t.Errorf("value\n got %s\nwant %s", value, want)
	}
}

// TestFormatUnwrap: ExtractNewRecordState's row, with its rebuilt schema
// (optional false), __deleted in the rewrite modes and the added fields
// after the columns, as the real transform writes them
// (integration/scenario/format_oracle_test.go).
func TestFormatUnwrap(t *testing.T) {
	ev := goldenUpdateEvent()
	_, value := appendBoth(t, Format{Unwrap: true}, ev)
	const row = `{"id":1006,"first_name":"Liam","last_name":"Han","email":"liam3@example.com"}`
	if !strings.HasPrefix(value, `{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},`) ||
		!strings.HasSuffix(value, `],"optional":false,"name":"dbserver1.inventory.customers.Value"},"payload":`+row+`}`) {
		t.Errorf("unwrapped value %s", value)
	}

	f := Format{NoSchemas: true, Unwrap: true, DeleteHandling: DeleteRewrite, AddFields: []string{"op", "table", "source.ts_ms"}}
	if _, v := appendBoth(t, f, ev); v != `{"id":1006,"first_name":"Liam","last_name":"Han","email":"liam3@example.com","__deleted":"false","__op":"u","__table":"customers","__source_ts_ms":1766925059528}` {
		t.Errorf("rewritten update %s", v)
	}
	del := goldenUpdateEvent()
	del.Op, del.After = change.OpDelete, nil
	if _, v := appendBoth(t, f, del); v != `{"id":1006,"first_name":"Liam","last_name":"Han","email":"liam2@example.com","__deleted":"true","__op":"d","__table":"customers","__source_ts_ms":1766925059528}` {
		t.Errorf("rewritten delete %s", v)
	}
	// delete_handling tombstone: a null payload with the envelope's
	// optional Value schema; without schemas the JSON text null.
	if _, v := appendBoth(t, Format{NoSchemas: true, Unwrap: true}, del); v != "null" {
		t.Errorf("tombstone-mode delete without schemas %q", v)
	}
	if _, v := appendBoth(t, Format{Unwrap: true}, del); !strings.HasSuffix(v, `],"optional":true,"name":"dbserver1.inventory.customers.Value"},"payload":null}`) {
		t.Errorf("tombstone-mode delete %s", v)
	}
	// The schema lists the added fields, optional.
	_, v := appendBoth(t, Format{Unwrap: true, DeleteHandling: DeleteRewriteWithTombstone, AddFields: []string{"source.ts_ms"}}, ev)
	if !strings.Contains(v, `{"type":"string","optional":true,"field":"__deleted"},{"type":"int64","optional":true,"field":"__source_ts_ms"}],"optional":false`) {
		t.Errorf("schema of the added fields %s", v)
	}
}

// TestFormatDeleteRecords is the records of a delete for every
// destination.delete_mode and delete_handling: the connector's delete and
// tombstone, then what ExtractNewRecordState keeps of them.
func TestFormatDeleteRecords(t *testing.T) {
	type out struct{ value, tombstone bool }
	for _, c := range []struct {
		f    Format
		want map[string]out // by delete_mode
	}{
		{Format{}, map[string]out{"record": {true, false}, "tombstone": {false, true}, "record_and_tombstone": {true, true}}},
		{Format{Unwrap: true}, map[string]out{"record": {true, false}, "tombstone": {false, false}, "record_and_tombstone": {true, false}}},
		{Format{Unwrap: true, DeleteHandling: DeleteRewrite}, map[string]out{"record": {true, false}, "tombstone": {false, false}, "record_and_tombstone": {true, false}}},
		{Format{Unwrap: true, DeleteHandling: DeleteRewriteWithTombstone}, map[string]out{"record": {true, false}, "tombstone": {false, true}, "record_and_tombstone": {true, true}}},
		{Format{Unwrap: true, DeleteHandling: DeleteDrop}, map[string]out{"record": {false, false}, "tombstone": {false, false}, "record_and_tombstone": {false, false}}},
		{Format{Unwrap: true, DeleteHandling: DeleteToTombstone}, map[string]out{"record": {false, true}, "tombstone": {false, false}, "record_and_tombstone": {false, true}}},
	} {
		e := NewEncoder(Options{TopicPrefix: "p", Format: c.f})
		for mode, want := range c.want {
			if v, tomb := e.DeleteRecords(mode); (out{v, tomb}) != want {
				t.Errorf("%+v, delete_mode %s: value %v tombstone %v, want %+v", c.f, mode, v, tomb, want)
			}
		}
	}
}

// TestFormatModes: the decimal, binary and time modes' schemas and values,
// as Debezium writes them (integration/scenario/format_oracle_test.go).
func TestFormatModes(t *testing.T) {
	table := &change.Table{
		ID: change.TableID{DB: "d", Schema: "public", Name: "t"},
		Columns: []change.Column{
			{Name: "id", Type: change.Type{Kind: change.KindInt32, Precision: -1, Scale: -1}},
			{Name: "amount", Type: change.Type{Kind: change.KindDecimal, Precision: 10, Scale: 2}, Optional: true},
			{Name: "req", Type: change.Type{Kind: change.KindDecimal, Precision: 8, Scale: 3}},
			{Name: "data", Type: change.Type{Kind: change.KindBytes, Precision: -1, Scale: -1}, Optional: true},
			{Name: "tm", Type: change.Type{Kind: change.KindTime, Precision: 3}, Optional: true},
			{Name: "ts", Type: change.Type{Kind: change.KindTimestamp, Precision: 6}, Optional: true},
			{Name: "d", Type: change.Type{Kind: change.KindDate}, Optional: true},
		},
		Key: []int{0},
	}
	row := change.Row{change.IntValue(1), change.TextValue("99.00"), change.Value{Kind: change.Null}, change.BinaryValue([]byte{0, 0xff, 0x10}),
		change.IntValue(36672123456), change.IntValue(1709287872123456), change.IntValue(19783)}
	ev := &change.Event{Table: table, Op: change.OpCreate, After: row, Source: change.Source{Block: blocks["postgresql"]}}
	for _, c := range []struct {
		f      Format
		fields []string // of the after payload
		schema []string // in the value's schema
	}{
		{Format{Decimal: "double", Binary: "base64", Time: "adaptive_time_microseconds"},
			[]string{`"amount":99.0`, `"req":0.0`, `"data":"AP8Q"`, `"tm":36672123456`},
			[]string{`{"type":"double","optional":true,"field":"amount"}`, `{"type":"string","optional":true,"field":"data"}`, `"name":"io.debezium.time.MicroTime","version":1,"field":"tm"`}},
		{Format{Decimal: "string", Binary: "hex", Time: "connect"},
			[]string{`"amount":"99.00"`, `"req":"0.000"`, `"data":"00ff10"`, `"tm":36672123`, `"ts":1709287872123`, `"d":19783`},
			[]string{`{"type":"string","optional":true,"field":"amount"}`, `{"type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Time","version":1,"field":"tm"}`,
				`{"type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"ts"}`, `{"type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Date","version":1,"field":"d"}`}},
	} {
		e := NewEncoder(Options{TopicPrefix: "p", Format: c.f})
		v, err := e.AppendValue(nil, ev, goldenNow)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range append(c.fields, c.schema...) {
			if !strings.Contains(string(v), want) {
				t.Errorf("%+v: no %s in\n%s", c.f, want, v)
			}
		}
	}
}

// TestFormatUnavailableBytes: an unchanged TOASTed bytea in the binary
// modes, as Debezium's PostgreSQL connector writes it (verified side by
// side: integration/scenario/format_oracle_test.go).
func TestFormatUnavailableBytes(t *testing.T) {
	for binary, want := range map[string]string{
		"":       `"X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=="`,
		"base64": `null`,
		"hex":    `"__debezium_unavailable_value"`,
	} {
		col := change.Column{Name: "data", Type: change.Type{Kind: change.KindBytes, Precision: -1, Scale: -1}, Optional: true}
		f := Format{Binary: binary}
		s, enc, _ := columnSchema(&col)
		p := newColPlan(0, &col, f.formatSchema(&col.Type, &s, enc), &f)
		got, err := p.appendValue(nil, &change.Value{Kind: change.Unavailable})
		if err != nil || string(got) != want {
			t.Errorf("binary %q: %s, %v; want %s", binary, got, err, want)
		}
	}
}

// FuzzFormats encodes rows from fuzz input in the non-default formats:
// key and value are valid JSON in every shape, decimal text in the double
// and string modes is refused or written as the number it spells, and hex
// reads back as the bytes.
func FuzzFormats(f *testing.F) {
	f.Add("99.00", []byte{0, 0xff}, byte('c'))
	f.Add("-0.5e3", []byte{}, byte('d'))
	f.Add("\"\\\x00\xff", []byte(nil), byte('u'))
	f.Add("123456789012345678901234567890.123", []byte("x"), byte('r'))
	f.Fuzz(func(t *testing.T, text string, raw []byte, op byte) {
		ops := []change.Op{change.OpCreate, change.OpUpdate, change.OpDelete, change.OpRead}
		o := ops[int(op)%len(ops)]
		tbl := &change.Table{
			ID: change.TableID{DB: "d", Schema: text, Name: text},
			Columns: []change.Column{
				{Name: "id", Type: change.Type{Kind: change.KindString}},
				{Name: "b", Type: change.Type{Kind: change.KindBytes}, Optional: true},
				{Name: "n", Type: change.Type{Kind: change.KindDecimal, Precision: -1, Scale: -1}, Optional: true},
			},
			Key: []int{0},
		}
		row := change.Row{change.TextValue(text), change.BinaryValue(raw), change.Value{Kind: change.Null}}
		ev := &change.Event{Table: tbl, Op: o, After: row, Source: change.Source{Block: blocks["postgresql"], Table: text}}
		if o == change.OpDelete {
			ev.Before, ev.After = row, nil
		}
		for _, fm := range []Format{
			{NoSchemas: true, Decimal: "string", Binary: "hex"},
			{Unwrap: true, DeleteHandling: DeleteRewrite, AddFields: []string{"op", "table", "source.ts_ms"}, Decimal: "double", Binary: "base64"},
			{NoSchemas: true, Unwrap: true, Time: "connect"},
		} {
			e := NewEncoder(Options{TopicPrefix: "fz", Format: fm})
			key, _, err := e.AppendKey(nil, ev)
			if err != nil {
				t.Fatal(err)
			}
			value, err := e.AppendValue(nil, ev, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(key) || !json.Valid(value) {
				t.Fatalf("%+v: invalid JSON: key %q value %q", fm, key, value)
			}
		}

		_, perr := parseDecimal([]byte(text))
		special := perr == ErrSpecialDecimal
		if out, err := appendDecimalString(nil, []byte(text)); err == nil && !special {
			var s string
			if json.Unmarshal(out, &s) != nil || s != text || !plainDecimal.MatchString(text) {
				t.Fatalf("string mode: %q written as %s", text, out)
			}
		}
		if special {
			d, _ := appendDecimalDouble(nil, []byte(text))
			s, _ := appendDecimalString(nil, []byte(text))
			if !specialDouble.Match(d) || !specialString.Match(s) {
				t.Fatalf("%q: double mode %s, string mode %s", text, d, s)
			}
		} else if out, err := appendDecimalDouble(nil, []byte(text)); err == nil {
			want, _ := strconv.ParseFloat(text, 64)
			var got float64
			if json.Unmarshal(out, &got) != nil || got != want {
				t.Fatalf("double mode: %q written as %s, want %v", text, out, want)
			}
		}
		var h string
		if err := json.Unmarshal(appendHex(nil, raw), &h); err != nil {
			t.Fatal(err)
		}
		if got, err := hex.DecodeString(h); err != nil || !bytes.Equal(got, raw) || strings.ToLower(h) != h {
			t.Fatalf("hex %q of %x", h, raw)
		}
	})
}

// The special decimal values in the double and string modes.
var (
	specialDouble = regexp.MustCompile(`^"(NaN|Infinity|-Infinity)"$`)
	specialString = regexp.MustCompile(`^"(NAN|POSITIVE_INFINITY|NEGATIVE_INFINITY)"$`)
)

// TestFormatSpecialDecimals: PostgreSQL's NaN and ±Infinity numerics in
// decimal.handling.mode double and string are the values Debezium writes
// (verified side by side: integration/scenario/review_format_test.go), not null.
func TestFormatSpecialDecimals(t *testing.T) {
	for _, c := range []struct{ text, double, str string }{
		{"NaN", `"NaN"`, `"NAN"`},
		{"Infinity", `"Infinity"`, `"POSITIVE_INFINITY"`},
		{"-Infinity", `"-Infinity"`, `"NEGATIVE_INFINITY"`},
	} {
		d, err := appendDecimalDouble(nil, []byte(c.text))
		if err != nil || string(d) != c.double {
			t.Errorf("double mode: %s written as %s (%v), want %s", c.text, d, err, c.double)
		}
		s, err := appendDecimalString(nil, []byte(c.text))
		if err != nil || string(s) != c.str {
			t.Errorf("string mode: %s written as %s (%v), want %s", c.text, s, err, c.str)
		}
	}
}

// TestFormatUnknownTypeBinary: a column of an unknown type published with
// IncludeUnknownTypes is bytes in the binary mode's schema and encoding,
// as Debezium's include.unknown.datatypes writes it (verified side by
// side: integration/scenario/review_format_test.go).
func TestFormatUnknownTypeBinary(t *testing.T) {
	table := &change.Table{
		ID: change.TableID{DB: "d", Schema: "public", Name: "t"},
		Columns: []change.Column{
			{Name: "id", Type: change.Type{Kind: change.KindInt32, Precision: -1, Scale: -1}},
			{Name: "q", Type: change.Type{Kind: change.KindUnknown, Name: "tsquery"}, Optional: true},
		},
		Key: []int{0},
	}
	ev := &change.Event{Table: table, Op: change.OpCreate, After: change.Row{change.IntValue(1), change.BinaryValue([]byte("'a'"))},
		Source: change.Source{Block: blocks["postgresql"]}}
	for binary, want := range map[string][]string{
		"":       {`{"type":"bytes","optional":true,"field":"q"}`, `"q":"J2En"`},
		"base64": {`{"type":"string","optional":true,"field":"q"}`, `"q":"J2En"`},
		"hex":    {`{"type":"string","optional":true,"field":"q"}`, `"q":"276127"`},
	} {
		e := NewEncoder(Options{TopicPrefix: "p", IncludeUnknownTypes: true, Format: Format{Binary: binary}})
		v, err := e.AppendValue(nil, ev, goldenNow)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(v), w) {
				t.Errorf("binary %q: no %s in\n%s", binary, w, v)
			}
		}
	}
}

// TestFormatNegativeTimeConnect: a negative MySQL TIME, or one past a
// day, in time_precision connect is null, as Debezium writes it (verified side by side:
// integration/scenario/review_format_test.go), and refused in a NOT NULL column.
func TestFormatNegativeTimeConnect(t *testing.T) {
	table := &change.Table{
		ID: change.TableID{DB: "d", Name: "t"},
		Columns: []change.Column{
			{Name: "id", Type: change.Type{Kind: change.KindInt32, Precision: -1, Scale: -1}},
			{Name: "tm", Type: change.Type{Kind: change.KindTime, Precision: 6}, Optional: true},
		},
		Key: []int{0},
	}
	ev := &change.Event{Table: table, Op: change.OpCreate, After: change.Row{change.IntValue(1), change.IntValue(-3_600_000_000)},
		Source: change.Source{Block: blocks["mariadb"]}}
	e := NewEncoder(Options{TopicPrefix: "p", Format: Format{Time: "connect"}})
	for _, micros := range []int64{-3_600_000_000, 25 * 3_600_000_000} {
		ev.After[1] = change.IntValue(micros)
		v, err := e.AppendValue(nil, ev, goldenNow)
		if err != nil || !strings.Contains(string(v), `"tm":null`) {
			t.Errorf("optional, %d µs: %v\n%s", micros, err, v)
		}
	}
	table.Columns[1].Optional = false
	e = NewEncoder(Options{TopicPrefix: "p", Format: Format{Time: "connect"}})
	if _, err := e.AppendValue(nil, ev, goldenNow); err == nil {
		t.Error("a negative TIME in a NOT NULL column is written")
	}
}

// TestFormatNonBMPEscaped: every string of a message — key and value
// columns, a column name, the source block's names — writes a character
// outside the BMP as Jackson does, an escaped surrogate pair with
// upper-case hex, with and without schemas and unwrapped; no raw 4-byte
// UTF-8 sequence is left.
func TestFormatNonBMPEscaped(t *testing.T) {
	const smile, smileEsc = "\U0001F600", `\uD83D\uDE00`
	tbl := &change.Table{
		ID: change.TableID{DB: "db" + smile, Schema: "s" + smile, Name: "t" + smile},
		Columns: []change.Column{
			{Name: "k", Type: change.Type{Kind: change.KindString, Precision: -1, Scale: -1, Length: -1}},
			{Name: "n" + smile, Type: change.Type{Kind: change.KindString, Precision: -1, Scale: -1, Length: -1}, Optional: true},
		},
		Key: []int{0},
	}
	ev := &change.Event{
		Table: tbl, Op: change.OpCreate,
		After: change.Row{change.TextValue("k" + smile), change.TextValue("\U00010348 é 中 \U0001F4A9")},
		Source: change.Source{Block: blocks["postgresql"], Name: "srv" + smile, DB: "db" + smile,
			Schema: "s" + smile, Table: "t" + smile, CommitMicros: 1766925059528750},
	}
	const after = `{"k":"k` + smileEsc + `","n` + smileEsc + `":"\uD800\uDF48 é 中 \uD83D\uDCA9"}`
	for _, f := range []Format{{}, {NoSchemas: true}, {NoSchemas: true, Unwrap: true}} {
		key, value := appendBoth(t, f, ev)
		if bytes.ContainsFunc([]byte(key+value), func(r rune) bool { return r > 0xFFFF }) {
			t.Errorf("%+v: a raw character outside the BMP in\n%s\n%s", f, key, value)
		}
		if !strings.Contains(key, `{"k":"k`+smileEsc+`"}`) {
			t.Errorf("%+v: key %s", f, key)
		}
		if !strings.Contains(value, after) {
			t.Errorf("%+v: value %s, want the row %s", f, value, after)
		}
		if !f.Unwrap && !strings.Contains(value, `"name":"srv`+smileEsc+`",`) ||
			!f.Unwrap && !strings.Contains(value, `"db":"db`+smileEsc+`","sequence":null,`) ||
			!f.Unwrap && !strings.Contains(value, `"schema":"s`+smileEsc+`","table":"t`+smileEsc+`"`) {
			t.Errorf("%+v: source block in %s", f, value)
		}
		if !f.NoSchemas && !strings.Contains(value, `"field":"n`+smileEsc+`"`) {
			t.Errorf("%+v: column name in the schema of %s", f, value)
		}
	}
}
