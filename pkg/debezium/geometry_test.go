package debezium

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

func TestSpatialKinds(t *testing.T) {
	point := pointWKB(1.5, -2.25)
	ewkb, _ := hex.DecodeString("0101000020E6100000000000000000F03F0000000000000040")
	tests := []struct {
		name       string
		typ        change.Type
		optional   bool
		value      change.Value
		wantSchema string
		wantValue  string
	}{
		{"point", typ(change.KindPoint, -1, -1), true, change.GeometryValue(point, change.NoSRID),
			`{"type":"struct","fields":[{"type":"double","optional":false,"field":"x"},{"type":"double","optional":false,"field":"y"},{"type":"bytes","optional":true,"field":"wkb"},{"type":"int32","optional":true,"field":"srid"}],"optional":true,"name":"io.debezium.data.geometry.Point","version":1,"doc":"Geometry (POINT)","field":"c"}`,
			`{"x":1.5,"y":-2.25,"wkb":"AQEAAAAAAAAAAAD4PwAAAAAAAALA","srid":null}`},
		{"point NOT NULL, null: (0,0)", typ(change.KindPoint, -1, -1), false, change.Value{},
			`"optional":false,"name":"io.debezium.data.geometry.Point"`,
			`{"x":0.0,"y":0.0,"wkb":"AQEAAAAAAAAAAAAAAAAAAAAAAAAA","srid":null}`},
		{"geometry with SRID", typ(change.KindGeometry, -1, -1), true, change.GeometryValue(ewkb, 4326),
			`{"type":"struct","fields":[{"type":"bytes","optional":false,"field":"wkb"},{"type":"int32","optional":true,"field":"srid"}],"optional":true,"name":"io.debezium.data.geometry.Geometry","version":1,"doc":"Geometry","field":"c"}`,
			`{"wkb":"AQEAACDmEAAAAAAAAAAA8D8AAAAAAAAAQA==","srid":4326}`},
		// Debezium declares a geometry field optional even for NOT NULL
		// (Geometry.builder() calls optional()), a geography field as the
		// column is (Geography.builder() does not; found by the
		// differential oracle, integration/scenario/differential_test.go), and
		// writes an empty collection for a null there.
		{"geometry NOT NULL", typ(change.KindGeometry, -1, -1), false, change.Value{},
			`"optional":true,"name":"io.debezium.data.geometry.Geometry","version":1,"doc":"Geometry"`,
			`{"wkb":"AQcAAAAAAAAA","srid":null}`},
		{"geography NOT NULL, null", typ(change.KindGeography, -1, -1), false, change.Value{},
			`"optional":false,"name":"io.debezium.data.geometry.Geography","version":1,"doc":"Geography"`,
			`{"wkb":"AQcAAAAAAAAA","srid":null}`},
		{"tsvector", typ(change.KindTsvector, -1, -1), true, change.TextValue("'a':1"),
			`{"type":"string","optional":true,"name":"io.debezium.data.Tsvector","version":1,"field":"c"}`, `"'a':1"`},
		{"ltree", typ(change.KindLtree, -1, -1), true, change.TextValue("Top.A"),
			`{"type":"string","optional":true,"name":"io.debezium.data.Ltree","version":1,"field":"c"}`, `"Top.A"`},
		{"tsvector[]: required elements", arrayOf(change.KindTsvector), true, arrayValue(change.TextValue("'x':1")),
			`{"type":"array","items":{"type":"string","optional":false,"name":"io.debezium.data.Tsvector","version":1},"optional":true,"field":"c"}`, `["'x':1"]`},
	}
	for _, tc := range tests {
		out, err := oneColumn(t, tc.typ, tc.optional, tc.value)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !strings.Contains(out, tc.wantSchema) {
			t.Errorf("%s: schema lacks %s\n%s", tc.name, tc.wantSchema, out)
		}
		if !strings.Contains(out, `"after":{"id":1,"c":`+tc.wantValue+`}`) {
			t.Errorf("%s: value is not %s\n%s", tc.name, tc.wantValue, out)
		}
	}
	// A point value that is not a 2D point is an error, not a guess.
	if _, err := oneColumn(t, typ(change.KindPoint, -1, -1), true, change.GeometryValue([]byte{1, 7, 0, 0, 0, 0, 0, 0, 0}, change.NoSRID)); err == nil {
		t.Error("point from a 9-byte WKB: no error")
	}
}

func TestDroppedColumns(t *testing.T) {
	pointT := typ(change.KindPoint, -1, -1)
	tbl := &change.Table{
		ID: change.TableID{DB: "shop", Schema: "public", Name: "t"},
		Columns: []change.Column{
			{Name: "id", Type: typ(change.KindInt32, -1, -1)},
			{Name: "q", Type: change.Type{Kind: change.KindUnknown, Name: "tsquery"}, Optional: true},
			{Name: "pts", Type: change.Type{Kind: change.KindArray, Name: "_point", Elem: &pointT}, Optional: true},
		},
		Key: []int{0},
	}
	got := NewEncoder(Options{TopicPrefix: "shop"}).Dropped(tbl)
	if len(got) != 2 || got[0].Name != "q" || got[1].Name != "pts" {
		t.Errorf("dropped %v, want q (unknown type) and pts (point[]: Debezium drops it too)", got)
	}
	inc := NewEncoder(Options{TopicPrefix: "shop", IncludeUnknownTypes: true})
	if got := inc.Dropped(tbl); len(got) != 1 || got[0].Name != "pts" {
		t.Errorf("with IncludeUnknownTypes dropped %v, want only pts", got)
	}
	ev := &change.Event{Table: tbl, Op: change.OpCreate, Source: pgSource,
		After: change.Row{change.IntValue(1), change.BinaryValue([]byte("'a' & 'b'")), {}}}
	out, err := inc.AppendValue(nil, ev, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `{"type":"bytes","optional":true,"field":"q"}`) || !strings.Contains(string(out), `"q":"J2EnICYgJ2In"`) {
		t.Errorf("unknown column not published as bytes of its text:\n%s", out)
	}
}

// FuzzSpatialValue: WKB from a source, in a point or geometry column, is
// written as valid JSON or refused with an error, never a panic.
func FuzzSpatialValue(f *testing.F) {
	f.Add(pointWKB(1.5, -2.25), int64(-1))
	f.Add([]byte{0, 0, 0, 0, 1, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0}, int64(4326))
	f.Add(emptyGeometryWKB, int64(0))
	f.Fuzz(func(t *testing.T, wkb []byte, srid int64) {
		for _, k := range []change.Kind{change.KindPoint, change.KindGeometry, change.KindGeography} {
			if _, err := oneColumn(t, typ(k, -1, -1), true, change.GeometryValue(wkb, srid)); err != nil && k != change.KindPoint {
				t.Fatalf("kind %d: %v", k, err)
			}
		}
	})
}

// Unchanged-TOAST values of the issue-18 types: Debezium's placeholder
// does not convert for geometries nor for arrays of citext/ranges, so it
// writes null; a plain text[] keeps its placeholder list.
func TestUnavailableNewTypes(t *testing.T) {
	unavailable := change.Value{Kind: change.Unavailable}
	citext := change.Type{Kind: change.KindString, Name: "citext", Precision: -1, Scale: -1, Length: -1, NullUnavailableArray: true}
	text := change.Type{Kind: change.KindString, Name: "text", Precision: -1, Scale: -1, Length: -1}
	for _, tc := range []struct {
		name string
		typ  change.Type
		want string
	}{
		{"geometry", typ(change.KindGeometry, -1, -1), "null"},
		{"geography", typ(change.KindGeography, -1, -1), "null"},
		{"citext[]", change.Type{Kind: change.KindArray, Name: "_citext", Precision: -1, Scale: -1, Length: -1, Elem: &citext}, "null"},
		{"text[]", change.Type{Kind: change.KindArray, Name: "_text", Precision: -1, Scale: -1, Length: -1, Elem: &text}, `["__debezium_unavailable_value"]`},
		{"tsvector", typ(change.KindTsvector, -1, -1), `"__debezium_unavailable_value"`},
	} {
		out, err := oneColumn(t, tc.typ, true, unavailable)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !strings.Contains(out, `"c":`+tc.want+`}`) {
			t.Errorf("%s: want %s\n%s", tc.name, tc.want, out)
		}
	}
}
