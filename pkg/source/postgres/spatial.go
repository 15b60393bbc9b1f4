package postgres

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Decoders of PostgreSQL's geometric point and of PostGIS geometries, into
// the WKB Debezium publishes.

// parsePoint parses point output "(x,y)" into a 2D point's little-endian
// WKB without SRID, as Debezium's Point.createValue builds it.
func parsePoint(src []byte) (change.Value, error) {
	bad := fmt.Errorf("bad point %q", trunc(src))
	if len(src) < 5 || src[0] != '(' || src[len(src)-1] != ')' {
		return change.Value{}, bad
	}
	body := string(src[1 : len(src)-1])
	comma := -1
	for i := 0; i < len(body); i++ {
		if body[i] == ',' {
			if comma >= 0 {
				return change.Value{}, bad
			}
			comma = i
		}
	}
	if comma < 0 {
		return change.Value{}, bad
	}
	x, err1 := strconv.ParseFloat(body[:comma], 64)
	y, err2 := strconv.ParseFloat(body[comma+1:], 64)
	if err1 != nil || err2 != nil {
		return change.Value{}, bad
	}
	// Debezium parses the point with Java, whose NaN has other bits than
	// Go's; the WKB carries them.
	if x != x {
		x = javaNaN
	}
	if y != y {
		y = javaNaN
	}
	wkb := make([]byte, 21)
	wkb[0] = 1
	binary.LittleEndian.PutUint32(wkb[1:], 1)
	binary.LittleEndian.PutUint64(wkb[5:], math.Float64bits(x))
	binary.LittleEndian.PutUint64(wkb[13:], math.Float64bits(y))
	return change.GeometryValue(wkb, change.NoSRID), nil
}

// ewkbSRIDFlag marks an EWKB geometry type that is followed by an SRID.
const ewkbSRIDFlag = 0x20000000

// parseHexEWKB decodes PostGIS's output (hex EWKB). Debezium publishes the
// EWKB bytes unchanged and the SRID read from them, null when there is
// none or it is 0 (verified side by side with Debezium 3.6). The EWKB is
// decoded over src (unhexInPlace), which the caller hands over.
func parseHexEWKB(src []byte) (change.Value, error) {
	if len(src)%2 != 0 {
		return change.Value{}, fmt.Errorf("bad geometry %q: odd hex length", trunc(src))
	}
	if len(src) < 2*9 {
		return change.Value{}, fmt.Errorf("bad geometry %q: EWKB shorter than 9 bytes", trunc(src))
	}
	b, err := unhexInPlace(src, 0)
	if err != nil {
		return change.Value{}, fmt.Errorf("bad geometry: %v", err)
	}
	srid, err := ewkbSRID(b)
	if err != nil {
		return change.Value{}, fmt.Errorf("bad geometry: %v", err)
	}
	if srid == 0 {
		srid = change.NoSRID
	}
	return change.GeometryValue(b, srid), nil
}

// ewkbSRID reads the SRID of an EWKB geometry: the int after the type
// when the type has the SRID flag, else 0 (none).
func ewkbSRID(b []byte) (int64, error) {
	if len(b) < 9 {
		return 0, fmt.Errorf("EWKB shorter than 9 bytes")
	}
	var order binary.ByteOrder = binary.BigEndian
	if b[0] != 0 {
		order = binary.LittleEndian
	}
	if order.Uint32(b[1:5])&ewkbSRIDFlag == 0 {
		return 0, nil
	}
	return int64(int32(order.Uint32(b[5:9]))), nil
}

// javaNaN is Java's Double.NaN (0x7ff8000000000000); Go's math.NaN() is
// 0x7ff8000000000001.
var javaNaN = math.Float64frombits(0x7ff8000000000000)
