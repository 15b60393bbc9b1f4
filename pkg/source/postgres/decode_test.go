package postgres

import (
	"encoding/hex"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

func TestDecodeText(t *testing.T) {
	ts := func(s string) int64 {
		v, err := time.Parse("2006-01-02 15:04:05.999999Z07:00", s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UnixMicro()
	}
	typ := func(oid uint32, typmod int32) change.Type { return columnType(oid, typmod, "") }
	tests := []struct {
		name string
		typ  change.Type
		in   string
		want change.Value
	}{
		{"bool true", typ(oidBool, -1), "t", change.IntValue(1)},
		{"bool false", typ(oidBool, -1), "f", change.IntValue(0)},
		{"int2", typ(oidInt2, -1), "-32768", change.IntValue(-32768)},
		{"int8 max", typ(oidInt8, -1), "9223372036854775807", change.IntValue(9223372036854775807)},
		{"oid", typ(oidOID, -1), "4294967295", change.IntValue(4294967295)},
		{"float8", typ(oidFloat8, -1), "1.5e-07", change.FloatValue(1.5e-07)},
		{"numeric", typ(oidNumeric, (10<<16|2)+4), "-12.50", change.TextValue("-12.50")},
		{"numeric NaN", typ(oidNumeric, -1), "NaN", change.TextValue("NaN")},
		{"text", typ(oidText, -1), "héllo \"x\"", change.TextValue("héllo \"x\"")},
		{"bytea", typ(oidBytea, -1), `\xdeadbeef`, change.BinaryValue([]byte{0xde, 0xad, 0xbe, 0xef})},
		{"date", typ(oidDate, -1), "2024-03-01", change.IntValue(19783)},
		{"date before epoch", typ(oidDate, -1), "1969-12-31", change.IntValue(-1)},
		{"time", typ(oidTime, -1), "10:00:00.5", change.IntValue(36000500000)},
		{"timestamp", typ(oidTimestamp, -1), "2024-03-01 10:00:00.123456", change.IntValue(ts("2024-03-01 10:00:00.123456Z"))},
		{"timestamp before epoch", typ(oidTimestamp, -1), "1969-12-31 23:59:59", change.IntValue(-1000000)},
		{"timestamptz", typ(oidTimestampTZ, -1), "2024-03-01 10:00:00.5+02", change.IntValue(ts("2024-03-01 08:00:00.5Z"))},
		{"timestamptz minutes offset", typ(oidTimestampTZ, -1), "2024-03-01 10:00:00-03:30", change.IntValue(ts("2024-03-01 13:30:00Z"))},
		{"timestamp infinity", typ(oidTimestamp, -1), "infinity", change.IntValue(infinityMicros)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeText(tt.typ, []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tt.want.String() || got.Kind != tt.want.Kind {
				t.Errorf("decode %q = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestDecodeTextRejectsMalformed(t *testing.T) {
	typ := func(oid uint32) change.Type { return columnType(oid, -1, "") }
	for _, tt := range []struct {
		typ change.Type
		in  string
	}{
		{typ(oidBool), "yes"},
		{typ(oidInt4), "12a"},
		{typ(oidNumeric), "1.2.3"},
		{typ(oidNumeric), "-"},
		{typ(oidBytea), "deadbeef"},
		{typ(oidBytea), `\xZZ`},
		{typ(oidDate), "2024-13-01"},
		{typ(oidTime), "25:00:00"},
		{typ(oidTimestamp), "2024-03-01T10:00:00"},
		{typ(oidTimestampTZ), "2024-03-01 10:00:00"},
	} {
		if v, err := decodeText(tt.typ, []byte(tt.in)); err == nil {
			t.Errorf("kind %d %q decoded to %v, want an error", tt.typ.Kind, tt.in, v)
		}
	}
}

func TestColumnTypeModifiers(t *testing.T) {
	n := columnType(oidNumeric, (12<<16|3)+4, "numeric")
	if n.Precision != 12 || n.Scale != 3 {
		t.Errorf("numeric(12,3): precision %d scale %d", n.Precision, n.Scale)
	}
	if v := columnType(oidNumeric, -1, "numeric"); v.Scale != -1 {
		t.Errorf("numeric without typmod: scale %d, want -1 (variable)", v.Scale)
	}
	if ts := columnType(oidTimestamp, 3, "timestamp"); ts.Precision != 3 {
		t.Errorf("timestamp(3): precision %d", ts.Precision)
	}
	if vb := columnType(oidVarbit, -1, "varbit"); vb.Length != math.MaxInt32 {
		t.Errorf("varbit without a length: length %d, want Integer.MAX_VALUE as Debezium", vb.Length)
	}
	// Debezium's PostgresValueConverter: a bit or a bit varying of length
	// 1 is a boolean, longer ones (and varbit without a length) Bits.
	for _, oid := range []uint32{oidBit, oidVarbit} {
		if b := columnType(oid, 1, "varbit"); b.Kind != change.KindBool {
			t.Errorf("oid %d length 1: kind %v, want boolean as Debezium", oid, b.Kind)
		}
		if b := columnType(oid, 2, "varbit"); b.Kind != change.KindBits {
			t.Errorf("oid %d length 2: kind %v, want Bits", oid, b.Kind)
		}
	}
	// DEFAULT 'infinity' as Debezium's default-value converter has it
	// (integration/fidelity_pgedges_test.go): LocalDate.MAX/MIN's epoch
	// day wrapped to an int, LocalDateTime.MAX/MIN, none for timestamptz.
	date, ts := columnType(oidDate, -1, "date"), columnType(oidTimestamp, -1, "timestamp")
	for _, c := range []struct {
		typ  change.Type
		expr string
		want string
	}{
		{date, "'infinity'::date", "169560311"},
		{date, "'-infinity'::date", "-170999002"},
		{ts, "'infinity'::timestamp without time zone", `"31556889864403199.999999"`},
		{ts, "'-infinity'::timestamp without time zone", `"-31557014167219200.000000"`},
		{columnType(oidTimestampTZ, -1, "timestamptz"), "'infinity'::timestamp with time zone", "<none>"},
	} {
		got := "<none>"
		if d := columnDefault(c.typ, c.expr); d != nil {
			got = d.String()
		}
		if got != c.want {
			t.Errorf("default %s: %s, want %s", c.expr, got, c.want)
		}
	}
	int4 := columnType(oidInt4, -1, "int4")
	if d := columnDefault(change.Type{Kind: change.KindArray, Elem: &int4}, "'{1,2}'::integer[]"); d != nil {
		t.Errorf("array default: %v, want none (Debezium has none)", d)
	}
	// Debezium converts a numeric default to a BigDecimal that a
	// VariableScaleDecimal (a struct) cannot take: it has none, and a
	// key-only old image keeps its null (or the NOT NULL fallback), seen
	// side by side by the differential oracle.
	if d := columnDefault(columnType(oidNumeric, -1, "numeric"), "1.50"); d != nil {
		t.Errorf("unconstrained numeric default: %v, want none (Debezium has none)", d)
	}
	if d := columnDefault(columnType(oidNumeric, 10<<16|2+4, "numeric"), "1.50"); d == nil || string(d.Bytes) != "1.50" {
		t.Errorf("numeric(10,2) default: %v, want 1.50", d)
	}
	// Debezium's PostgresDefaultValueConverter maps a fixed set of types
	// (and enums): others get no default; nor does ±infinity or a literal
	// with a newline, and time '24:00:00' is LocalTime.MAX.
	for _, tc := range []struct {
		typ  change.Type
		expr string
	}{
		{columnType(oidMoney, -1, "money"), "12.34"},
		{columnType(oidInet, -1, "inet"), "'::1'::inet"},
		{columnType(oidBytea, -1, "bytea"), `'\x00'::bytea`},
		{columnType(oidText, -1, "text"), "'tab\nnewline'::text"},
	} {
		if d := columnDefault(tc.typ, tc.expr); d != nil {
			t.Errorf("%s default %s: %v, want none (Debezium has none)", tc.typ.Name, tc.expr, d)
		}
	}
	if d := columnDefault(columnType(oidTime, -1, "time"), "'24:00:00'::time without time zone"); d == nil || d.Int != 86399999999 {
		t.Errorf("time '24:00:00' default: %v, want 86399999999 (LocalTime.MAX)", d)
	}
	if d := columnDefault(change.Type{Kind: change.KindEnum, Name: "mood", Values: "a,b"}, "'a'::mood"); d == nil || string(d.Bytes) != "a" {
		t.Errorf("enum default: %v, want a", d)
	}
	if u := columnType(603, -1, "box"); u.Kind != change.KindUnknown {
		t.Errorf("box: kind %v, want unknown", u.Kind)
	}
}

// FuzzDecodeText feeds arbitrary server text to every decoder: it must
// return a value or an error, never panic, and text kinds keep the bytes.
func FuzzDecodeText(f *testing.F) {
	for _, s := range []string{"t", "-12.50", `\xdead`, "2024-03-01", "10:00:00.5", "2024-03-01 10:00:00.5+02", "2000-01-01 00:00:00 BC", "24:00:00", "infinity"} {
		f.Add(s)
	}
	for _, s := range []string{`\x`, `\xDEADbeef`, `{"\\x0102","\\xff",NULL}`, `{\x00,\xA1b2}`, "$1,234.56", "-$1.05", "13:14:15.5+02", "00:00:00-05:30:15", "P1Y2M3DT4H5M6.789S", "P-3DT-1.5S",
		"1 year 2 mons -3 days +04:05:06.789", "101000000001", `"a"=>"1", "b c"=>NULL`, `{1,2,NULL,-4}`, `{"a b",c,NULL,"x\"y"}`, "{}",
		`{1.5,-0.001,NaN,NULL}`, `{2024-02-29,1900-01-01,infinity}`, `{"2024-03-01 10:00:00.5+02",infinity,NULL}`,
		`{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}`, `{happy,sad,NULL}`, `{"{\"a\": 1}",NULL}`, "[0:1]={1,2}",
		"08:00:2b:01:02:03:04:05", "1011001110001111000011111", "-1 mons 3 days"} {
		f.Add(s)
	}
	int4 := columnType(oidInt4, -1, "int4")
	text := columnType(oidText, -1, "text")
	types := []change.Type{
		columnType(oidMoney, -1, "money"), columnType(oidTimeTZ, -1, "timetz"), columnType(oidInterval, -1, "interval"),
		columnType(oidBit, 12, "bit"), columnType(oidVarbit, -1, "varbit"), columnType(oidXML, -1, "xml"),
		{Kind: change.KindJSON, Name: "hstore"}, {Kind: change.KindEnum, Values: "a,b"},
		{Kind: change.KindArray, Name: "_int4", Elem: &int4}, {Kind: change.KindArray, Name: "_text", Elem: &text},
		columnType(oidMacaddr8, -1, "macaddr8"),
	}
	for _, elem := range []change.Type{columnType(oidNumeric, -1, "numeric"), columnType(oidNumeric, (8<<16|3)+4, "numeric"),
		columnType(oidDate, -1, "date"), columnType(oidTimestampTZ, -1, "timestamptz"), columnType(oidUUID, -1, "uuid"),
		columnType(oidInt2, -1, "int2"), columnType(oidFloat8, -1, "float8"), columnType(oidBool, -1, "bool"),
		columnType(oidJSONB, -1, "jsonb"), {Kind: change.KindEnum, Values: "sad,ok,happy"}, columnType(oidBytea, -1, "bytea")} {
		types = append(types, change.Type{Kind: change.KindArray, Name: "_" + elem.Name, Elem: &elem})
	}
	for _, oid := range []uint32{oidBool, oidInt2, oidInt4, oidInt8, oidFloat4, oidFloat8, oidNumeric, oidText, oidJSONB, oidUUID, oidBytea, oidDate, oidTime, oidTimestamp, oidTimestampTZ} {
		types = append(types, columnType(oid, -1, ""))
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range types {
			v, err := decodeText(typ, []byte(s))
			if err != nil {
				continue
			}
			if typ.Kind == change.KindString && string(v.Bytes) != s {
				t.Fatalf("text changed: %q → %q", s, v.Bytes)
			}
			if typ.Kind == change.KindBytes {
				// Decoded over the text (unhexInPlace): the bytes hex says.
				if want, err := hex.DecodeString(s[2:]); err != nil || string(v.Bytes) != string(want) {
					t.Fatalf("bytea %q → %x, want %x (%v)", s, v.Bytes, want, err)
				}
			}
			if typ.Kind == change.KindDecimal && typ.Name != "money" && strings.TrimSpace(s) != s {
				t.Fatalf("numeric accepted spaces: %q", s)
			}
		}
	})
}

// FuzzDecodePosition: positions come back from a checkpoint file or table.
func FuzzDecodePosition(f *testing.F) {
	f.Add([]byte(`{"slot":"s","lsn":"0/16B3748","backfilled":true}`))
	f.Add([]byte(`{"lsn":"zz"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, lsn, err := decodePosition(b)
		if err != nil {
			return
		}
		again, lsn2, err := decodePosition(p.encode())
		if err != nil || string(again.encode()) != string(p.encode()) || lsn2 != lsn {
			t.Fatalf("round trip of %q: %+v %d %v", b, again, lsn2, err)
		}
	})
}

// TestDecodeDebeziumForms pins values checked against real Debezium 3.6.1 by
// integration/postgres/fidelity_test.go.
func TestDecodeDebeziumForms(t *testing.T) {
	int4, text := columnType(oidInt4, -1, "int4"), columnType(oidText, -1, "text")
	tests := []struct {
		typ  change.Type
		in   string
		want string // change.Value.String()
	}{
		{columnType(oidMoney, -1, "money"), "$12.34", `"12.34"`},
		{columnType(oidMoney, -1, "money"), "-$1,234.05", `"-1234.05"`},
		{columnType(oidInterval, -1, "interval"), "P1Y2M3DT4H5M6.789S", "37091106789000"},
		{columnType(oidInterval, -1, "interval"), "1 year 2 mons 3 days 04:05:06.789", "37091106789000"},
		{columnType(oidInterval, -1, "interval"), "P-3DT-1S", "-259201000000"},
		{columnType(oidInterval, -1, "interval"), "PT0S", "0"},
		// Beyond ±2^63 µs Debezium's (long) cast saturates (seen side by
		// side: '178000000 years', '-2147483648 days').
		{columnType(oidInterval, -1, "interval"), "P178000000Y", "9223372036854775807"},
		{columnType(oidInterval, -1, "interval"), "P-178000000Y", "-9223372036854775808"},
		{columnType(oidInterval, -1, "interval"), "P2147483647D", "9223372036854775807"},
		{columnType(oidInterval, -1, "interval"), "P-178000000Y-2147483648DT-2147483647H", "-9223372036854775808"},
		{columnType(oidInterval, -1, "interval"), "178000000 years", "9223372036854775807"},
		{columnType(oidInterval, -1, "interval"), "PT2147483647H59M59.999999S", "7730941132800000000"},
		{columnType(oidInterval, -1, "interval"), "PT-2147483647H-54.775807S", "-7730941129254775808"},
		// More than 2^31 hours: Debezium fails its connector here (pgjdbc's
		// PGInterval parses hours as an int); the value fits a MicroDuration,
		// computed in doubles as Debezium's formula does.
		{columnType(oidInterval, -1, "interval"), "PT2562047787H59M59S", "9223372036798999552"},
		// PostgreSQL's latest timestamps pass int64 µs: seconds and µs
		// instead (change.FarTimestamp), never a wrapped year -290278.
		{columnType(oidTimestamp, -1, "timestamp"), "294276-12-31 23:59:59.999999", `"9224318015999.999999"`},
		{columnType(oidTimestamp, -1, "timestamp"), "294247-01-10 04:00:54.775807", "9223372036854775807"},
		{columnType(oidTimestamp, -1, "timestamp"), "294247-01-10 04:00:54.775808", `"9223372036854.775808"`},
		{columnType(oidTimestampTZ, -1, "timestamptz"), "294276-12-31 23:59:59.999999+00", `"9224318015999.999999"`},
		{columnType(oidTimestampTZ, -1, "timestamptz"), "294247-01-10 05:00:54.775808+01", `"9223372036854.775808"`},
		{columnType(oidTimestamp, -1, "timestamp"), "4713-01-01 00:00:00 BC", "-210863520000000000"},
		{columnType(oidTimeTZ, -1, "timetz"), "13:14:15.5+02", "40455500000"},
		{columnType(oidTimeTZ, -1, "timetz"), "00:00:00-05:30", "19800000000"},
		{columnType(oidTimeTZ, -1, "timetz"), "01:00:00+02", "82800000000"},
		{columnType(oidBit, 12, "bit"), "101000000001", `0x"\x01\n"`},
		{columnType(oidBit, 12, "bit"), "000000000000", `0x""`},
		{columnType(oidBit, 1, "bit"), "1", "1"},
		{columnType(oidVarbit, 1, "varbit"), "1", "1"},
		{columnType(oidVarbit, 1, "varbit"), "0", "0"},
		{columnType(oidVarbit, 1, "varbit"), "", "NULL"}, // Debezium's null
		{change.Type{Kind: change.KindJSON, Name: "hstore"}, `"a"=>"1", "b c"=>NULL`, `"{\"a\":\"1\",\"b c\":null}"`},
		{change.Type{Kind: change.KindArray, Elem: &int4}, `{1,2,NULL,-4}`, "[1,2,NULL,-4]"},
		{change.Type{Kind: change.KindArray, Elem: &int4}, `{}`, "[]"},
		// More than one dimension (any array column may hold one): the
		// elements in storage order, flattened into the column's
		// one-dimensional array (docs/types.md), never a stopped pipeline.
		{change.Type{Kind: change.KindArray, Elem: &int4}, `{{1,2},{3,4}}`, "[1,2,3,4]"},
		{change.Type{Kind: change.KindArray, Elem: &int4}, `[0:0][1:2]={{NULL,-1}}`, "[NULL,-1]"},
		{change.Type{Kind: change.KindArray, Elem: &int4}, `{{{1},{2}},{{3},{4}}}`, "[1,2,3,4]"},
		{change.Type{Kind: change.KindArray, Elem: &text}, `{{"a","b c"},{"{é}",NULL}}`, `["a","b c","{é}",NULL]`},
	}
	for _, tt := range tests {
		v, err := decodeText(tt.typ, []byte(tt.in))
		if err != nil {
			t.Errorf("%s %q: %v", tt.typ.Name, tt.in, err)
			continue
		}
		if got := v.String(); got != tt.want {
			t.Errorf("%s %q = %s, want %s", tt.typ.Name, tt.in, got, tt.want)
		}
	}
}

func TestDefaultLiteral(t *testing.T) {
	for expr, want := range map[string]string{
		"42": "42", "'dflt'::character varying": "dflt", "1.50": "1.50", "true": "true", "'it''s'::text": "it's",
		"'-1'::integer": "-1", "(-1)": "-1",
	} {
		if got, ok := defaultLiteral(expr); !ok || got != want {
			t.Errorf("defaultLiteral(%q) = %q, %v; want %q", expr, got, ok, want)
		}
	}
	for _, expr := range []string{"nextval('t_id_seq'::regclass)", "now()", "NULL::text", "CURRENT_TIMESTAMP"} {
		if got, ok := defaultLiteral(expr); ok && expr != "CURRENT_TIMESTAMP" {
			t.Errorf("defaultLiteral(%q) = %q, want not evaluable", expr, got)
		}
	}
}

// TestDecodeByteaInPlace: a bytea's hex text is decoded over itself (the
// caller hands the text over: see decodeText), not into a new slice for
// every value streamed or backfilled.
func TestDecodeByteaInPlace(t *testing.T) {
	typ := columnType(oidBytea, -1, "bytea")
	for _, in := range []string{`\x`, `\xdeadbeef`, `\x89504e470d0a1a0a0000000d49484452`} {
		buf := make([]byte, len(in))
		var got change.Value
		var err error
		allocs := testing.AllocsPerRun(100, func() {
			copy(buf, in)
			got, err = decodeText(typ, buf)
		})
		want, _ := hex.DecodeString(in[2:])
		if err != nil || got.Kind != change.Binary || string(got.Bytes) != string(want) {
			t.Fatalf("decode %s = %v, %v; want %x", in, got, err, want)
		}
		if allocs != 0 {
			t.Errorf("decode %s: %v allocations, want 0", in, allocs)
		}
	}
	// An array's elements are decoded over the array's text, each in its
	// own place.
	elem := typ
	arr := change.Type{Kind: change.KindArray, Name: "_bytea", Elem: &elem}
	got, err := decodeText(arr, []byte(`{"\\x0102",NULL,\xA1b2,"\\x"}`))
	if err != nil || got.String() != `[0x"\x01\x02",NULL,0x"\xa1\xb2",0x""]` {
		t.Errorf("bytea array: %v, %v", got, err)
	}
	for _, in := range []string{`\xdeadbeeg`, `\xdea`, `deadbeef`} {
		if _, err := decodeText(typ, []byte(in)); err == nil || !strings.Contains(err.Error(), "bad bytea") {
			t.Errorf("decode %s: %v, want a bad bytea error", in, err)
		}
	}
}

// TestDecodeAllocs: a time with time zone or an interval makes no error
// message in case its text is malformed: a timetz costs no allocation, an
// interval the slices of its fields.
func TestDecodeAllocs(t *testing.T) {
	for _, tc := range []struct {
		typ   change.Type
		in    string
		limit float64
	}{
		{columnType(oidTimeTZ, -1, "timetz"), "10:00:00.5+02", 0},
		{columnType(oidInterval, -1, "interval"), "1 year 2 mons -3 days +04:05:06.789", 2}, // its fields and the clock's parts
	} {
		var err error
		buf := []byte(tc.in)
		allocs := testing.AllocsPerRun(100, func() { _, err = decodeText(tc.typ, buf) })
		if err != nil {
			t.Fatalf("%s %s: %v", tc.typ.Name, tc.in, err)
		}
		if allocs > tc.limit {
			t.Errorf("%s %s: %v allocations, want at most %v", tc.typ.Name, tc.in, allocs, tc.limit)
		}
	}
}

// TestDecodeArrayAllocs: an array costs the slice of its elements, not an
// error message made in case it is malformed nor a slice grown element by
// element.
func TestDecodeArrayAllocs(t *testing.T) {
	for _, tc := range []struct {
		elem change.Type
		in   string
		want string
	}{
		{columnType(oidInt4, -1, "int4"), "{1,-2,3,NULL,5}", "[1,-2,3,NULL,5]"},
		{columnType(oidText, -1, "text"), `{a,"b,c",NULL}`, `["a","b,c",NULL]`},
		{columnType(oidDate, -1, "date"), "{2024-03-01,1970-01-01}", "[19783,0]"},
	} {
		arr := change.Type{Kind: change.KindArray, Name: "_" + tc.elem.Name, Elem: &tc.elem}
		buf := make([]byte, len(tc.in))
		var got change.Value
		var err error
		allocs := testing.AllocsPerRun(100, func() {
			copy(buf, tc.in)
			got, err = decodeText(arr, buf)
		})
		if err != nil || got.String() != tc.want {
			t.Fatalf("%s: %v, %v; want %s", tc.in, got, err, tc.want)
		}
		limit := 1.0
		if strings.Contains(tc.in, `"`) {
			limit = 2 // and the quoted element's unescaped text
		}
		if allocs > limit {
			t.Errorf("%s: %v allocations, want at most %v", tc.in, allocs, limit)
		}
	}
}
