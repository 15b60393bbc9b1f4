package debezium

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Debezium's spatial semantic types (io.debezium.data.geometry): structs
// holding the geometry's WKB and SRID; a Point adds its coordinates.
// Field order and optionality are those of Debezium's Geometry, Geography
// and Point builders (verified side by side, integration/postgres/fidelity_types_test.go).

var (
	geometryFields = []connectField{
		{"wkb", connectSchema{typ: "bytes"}},
		{"srid", connectSchema{typ: "int32", optional: true}},
	}
	geographyFields = geometryFields
	pointFields     = []connectField{
		{"x", connectSchema{typ: "double"}},
		{"y", connectSchema{typ: "double"}},
		{"wkb", connectSchema{typ: "bytes", optional: true}},
		{"srid", connectSchema{typ: "int32", optional: true}},
	}
)

// spatialSchema sets s to the schema of a spatial kind; ok is false for
// other kinds.
func spatialSchema(s *connectSchema, k change.Kind) (colEnc, bool) {
	s.typ, s.version = "struct", 1
	switch k {
	case change.KindPoint:
		s.name, s.doc, s.fields = "io.debezium.data.geometry.Point", "Geometry (POINT)", pointFields
		return encPoint, true
	case change.KindGeometry:
		// Debezium declares geometry fields optional even for NOT NULL
		// columns (its Geometry.builder() calls optional()), while its
		// converter still writes the fallback value for a null there
		// (appendSpatialFallback). Geography.builder() does not: a
		// geography field is optional as its column is.
		s.name, s.doc, s.fields = "io.debezium.data.geometry.Geometry", "Geometry", geometryFields
		s.optional = true
		return encGeometry, true
	case change.KindGeography:
		s.name, s.doc, s.fields = "io.debezium.data.geometry.Geography", "Geography", geographyFields
		return encGeometry, true
	}
	s.typ, s.version = "", 0
	return 0, false
}

// wkbPointSize is a 2D WKB point: byte order, type, x, y.
const wkbPointSize = 1 + 4 + 8 + 8

// pointXY reads the coordinates of a 2D WKB point, as Debezium's
// Point.parseWKBPoint does: exactly 21 bytes, type 1, either byte order.
func pointXY(wkb []byte) (x, y float64, ok bool) {
	if len(wkb) != wkbPointSize {
		return 0, 0, false
	}
	var order binary.ByteOrder = binary.BigEndian
	if wkb[0] != 0 {
		order = binary.LittleEndian
	}
	if order.Uint32(wkb[1:5]) != 1 {
		return 0, 0, false
	}
	return math.Float64frombits(order.Uint64(wkb[5:13])), math.Float64frombits(order.Uint64(wkb[13:21])), true
}

// appendSpatial writes a geometry struct value: {"wkb","srid"}, preceded
// for a point by its "x" and "y".
func (p *colPlan) appendSpatial(b []byte, v *change.Value) ([]byte, error) {
	if v.Kind != change.Binary {
		return b, ErrValueKind
	}
	b = append(b, '{')
	if p.enc == encPoint {
		x, y, ok := pointXY(v.Bytes)
		if !ok {
			return b[:len(b)-1], ErrValueRange
		}
		b = append(b, `"x":`...)
		b = appendJavaFloat(b, x, 64)
		b = append(b, `,"y":`...)
		b = appendJavaFloat(b, y, 64)
		b = append(b, ',')
	}
	b = append(b, `"wkb":"`...)
	b = base64.StdEncoding.AppendEncode(b, v.Bytes)
	b = append(b, `","srid":`...)
	if v.Int == change.NoSRID {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, v.Int, 10)
	}
	return append(b, '}'), nil
}

// emptyGeometryWKB is GEOMETRYCOLLECTION EMPTY, Debezium's fallback value
// for a geometry that is null where the schema requires one.
var emptyGeometryWKB = []byte{0x01, 0x07, 0, 0, 0, 0, 0, 0, 0}

// pointWKB builds the little-endian WKB of a 2D point.
func pointWKB(x, y float64) []byte {
	b := make([]byte, wkbPointSize)
	b[0] = 1
	binary.LittleEndian.PutUint32(b[1:], 1)
	binary.LittleEndian.PutUint64(b[5:], math.Float64bits(x))
	binary.LittleEndian.PutUint64(b[13:], math.Float64bits(y))
	return b
}

// appendSpatialFallback writes the value Debezium's converters fall back
// to: the point (0, 0), or an empty geometry collection, without SRID.
func (p *colPlan) appendSpatialFallback(b []byte) []byte {
	if p.enc == encPoint {
		v := change.GeometryValue(pointWKB(0, 0), change.NoSRID)
		out, _ := p.appendSpatial(b, &v)
		return out
	}
	v := change.GeometryValue(emptyGeometryWKB, change.NoSRID)
	out, _ := p.appendSpatial(b, &v)
	return out
}
