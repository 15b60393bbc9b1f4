package mysql

import (
	"encoding/binary"
	"fmt"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// decodeGeometry splits MySQL's internal geometry format (a little-endian
// 4-byte SRID, then the WKB), which both the binlog and the text protocol
// carry, as Debezium's BinlogGeometry.fromBytes does: the WKB as is, SRID 0
// as none.
func decodeGeometry(b []byte) (change.Value, error) {
	// The shortest WKB is 9 bytes (an empty collection: order, type, count).
	if len(b) < 4+9 {
		return change.Value{}, fmt.Errorf("bad geometry: %d bytes, want at least 13", len(b))
	}
	srid := int64(binary.LittleEndian.Uint32(b))
	if srid == 0 {
		srid = change.NoSRID
	}
	return change.GeometryValue(b[4:], srid), nil
}
