package postgres

import (
	"encoding/hex"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

func TestParsePoint(t *testing.T) {
	v, err := parsePoint([]byte("(1.5,-2.25)"))
	if err != nil {
		t.Fatal(err)
	}
	// Little-endian WKB point, as Debezium's Point.createValue builds it.
	const want = "0101000000000000000000f83f00000000000002c0"
	if got := hex.EncodeToString(v.Bytes); got != want || v.Int != change.NoSRID {
		t.Errorf("point (1.5,-2.25): wkb %s srid %d, want %s and no SRID", got, v.Int, want)
	}
	for _, bad := range []string{"", "()", "(1)", "(1,2,3)", "1,2", "(a,b)", "(1,2"} {
		if _, err := parsePoint([]byte(bad)); err == nil {
			t.Errorf("point %q: no error", bad)
		}
	}
}

func TestParseHexEWKB(t *testing.T) {
	// SRID=4326;POINT(1 2): the EWKB is published unchanged, SRID read from it.
	v, err := parseHexEWKB([]byte("0101000020E6100000000000000000F03F0000000000000040"))
	if err != nil {
		t.Fatal(err)
	}
	if v.Int != 4326 || len(v.Bytes) != 25 {
		t.Errorf("SRID=4326 point: srid %d, %d bytes", v.Int, len(v.Bytes))
	}
	// No SRID flag: Debezium writes a null SRID.
	v, err = parseHexEWKB([]byte("010700000000000000"))
	if err != nil || v.Int != change.NoSRID {
		t.Errorf("empty collection: srid %d, err %v; want none", v.Int, err)
	}
	for _, bad := range []string{"", "01", "0107000000000000", "zz0700000000000000", "010700000000000000f"} {
		if _, err := parseHexEWKB([]byte(bad)); err == nil {
			t.Errorf("geometry %q: no error", bad)
		}
	}
}

// TestHexEWKBInPlace: a geometry's hex EWKB is decoded over its own text,
// like a bytea (unhexInPlace), not into a new slice per value.
func TestHexEWKBInPlace(t *testing.T) {
	const in = "0101000020E6100000000000000000F03F0000000000000040"
	want, _ := hex.DecodeString(in)
	buf := make([]byte, len(in))
	var v change.Value
	var err error
	allocs := testing.AllocsPerRun(100, func() {
		copy(buf, in)
		v, err = parseHexEWKB(buf)
	})
	if err != nil || string(v.Bytes) != string(want) || v.Int != 4326 {
		t.Fatalf("got %x srid %d, %v; want %x srid 4326", v.Bytes, v.Int, err, want)
	}
	if allocs != 0 {
		t.Errorf("%v allocations, want 0", allocs)
	}
}

func TestExtensionTypesByName(t *testing.T) {
	for name, want := range map[string]change.Kind{"citext": change.KindString, "ltree": change.KindLtree,
		"geometry": change.KindGeometry, "geography": change.KindGeography, "cube": change.KindUnknown} {
		if got := columnType(99999, -1, name).Kind; got != want {
			t.Errorf("%s: kind %d, want %d", name, got, want)
		}
	}
	for oid, want := range map[uint32]change.Kind{oidChar: change.KindString, oidInt4Range: change.KindString,
		oidTsTzRange: change.KindString, oidTsvector: change.KindTsvector, oidPoint: change.KindPoint} {
		if got := columnType(oid, -1, "").Kind; got != want {
			t.Errorf("oid %d: kind %d, want %d", oid, got, want)
		}
	}
}

// FuzzSpatialText feeds arbitrary server text to the point, geometry,
// range, tsvector and ltree decoders, alone and as array elements: a value
// or an error, never a panic; text kinds keep their bytes; a decoded point
// always has a 21-byte WKB.
func FuzzSpatialText(f *testing.F) {
	for _, s := range []string{"(1.5,-2.25)", "(1e300,-0)", "(NaN,Infinity)", "0101000020E6100000000000000000F03F0000000000000040",
		"010700000000000000", "[1,10)", "empty", "(,)", `["2024-01-01 10:00:00+00","2024-01-02 00:00:00+00")`, "'a':1A 'b c':2,3B",
		"''", "Top.Science", `{"(1,2)","(3,4)"}`, "{0101000000000000000000F03F0000000000000040:NULL}", `{"[1,3)",empty,NULL}`} {
		f.Add(s)
	}
	scalar := []change.Type{columnType(oidPoint, -1, "point"), columnType(0, -1, "geometry"), columnType(0, -1, "geography"),
		columnType(oidInt4Range, -1, "int4range"), columnType(oidTsvector, -1, "tsvector"), columnType(0, -1, "ltree"),
		columnType(oidChar, -1, "char"), columnType(0, -1, "citext")}
	types := append([]change.Type(nil), scalar...)
	for i := range scalar {
		types = append(types, change.Type{Kind: change.KindArray, Name: "_" + scalar[i].Name, Elem: &scalar[i]})
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range types {
			v, err := decodeText(typ, []byte(s))
			if err != nil {
				continue
			}
			switch typ.Kind {
			case change.KindString, change.KindTsvector, change.KindLtree:
				if string(v.Bytes) != s {
					t.Fatalf("%s text changed: %q → %q", typ.Name, s, v.Bytes)
				}
			case change.KindPoint:
				if len(v.Bytes) != 21 {
					t.Fatalf("point %q: %d-byte WKB", s, len(v.Bytes))
				}
			case change.KindGeometry, change.KindGeography:
				// Decoded over the text (unhexInPlace): the bytes hex says.
				if want, err := hex.DecodeString(s); err != nil || string(v.Bytes) != string(want) {
					t.Fatalf("%s %q → %x, want %x (%v)", typ.Name, s, v.Bytes, want, err)
				}
			}
		}
	})
}

// Debezium gives the issue-18 types no schema default; the classic ones
// keep theirs.
func TestDefaultsOfNewTypes(t *testing.T) {
	for _, name := range []string{"citext", "int4range", "ltree"} {
		typ := columnType(0, -1, name)
		if name == "int4range" {
			typ = columnType(oidInt4Range, -1, name)
		}
		if d := columnDefault(typ, "'x'::"+name); d != nil {
			t.Errorf("%s default: %v, want none", name, d)
		}
	}
	if d := columnDefault(columnType(oidText, -1, "text"), "'x'::text"); d == nil || string(d.Bytes) != "x" {
		t.Errorf("text default: %v, want x", d)
	}
}

// TestParsePointNaN: a NaN coordinate has Java's bits, as in the WKB
// Debezium builds (integration/avro TestReviewAvroNaNBitsAgainstDebezium).
func TestParsePointNaN(t *testing.T) {
	v, err := parsePoint([]byte("(NaN,-0)"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := hex.EncodeToString(v.Bytes), "0101000000000000000000f87f0000000000000080"; got != want {
		t.Errorf("WKB %s, want %s", got, want)
	}
}
