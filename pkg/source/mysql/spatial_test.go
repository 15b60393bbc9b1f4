package mysql

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

func TestDecodeGeometry(t *testing.T) {
	// SRID 4326 then POINT(1 2): Debezium splits the SRID off.
	b, _ := hex.DecodeString("E61000000101000000000000000000F03F0000000000000040")
	v, err := decodeGeometry(b)
	if err != nil || v.Int != 4326 || !bytes.Equal(v.Bytes, b[4:]) {
		t.Errorf("SRID 4326 point: %v, %v", v, err)
	}
	// SRID 0: none (Debezium writes null).
	b, _ = hex.DecodeString("00000000010700000000000000")
	if v, err := decodeGeometry(b); err != nil || v.Int != change.NoSRID {
		t.Errorf("SRID 0: %v, %v", v, err)
	}
	if _, err := decodeGeometry([]byte{0, 0, 0, 0, 1}); err == nil {
		t.Error("5 bytes: no error")
	}
	pt := &column{dataType: "point", typ: change.Type{Kind: change.KindPoint}}
	if _, err := decodeBoxed(pt, 42); err == nil {
		t.Error("binlog point as an int: no error")
	}
}

// FuzzDecodeGeometry: the internal geometry format comes from the server,
// through the binlog and the text protocol: a value or an error, never a
// panic, and the WKB is what follows the SRID.
func FuzzDecodeGeometry(f *testing.F) {
	for _, s := range []string{"E61000000101000000000000000000F03F0000000000000040", "00000000010700000000000000", "00", ""} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	geom := &column{dataType: "geometry", typ: change.Type{Kind: change.KindGeometry}}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, v := range []func() (change.Value, error){
			func() (change.Value, error) { return decodeText(geom, b) },
			func() (change.Value, error) { return decodeBoxed(geom, b) },
			func() (change.Value, error) { return decodeBoxed(geom, string(b)) },
		} {
			got, err := v()
			if err == nil && len(b) > 0 && !bytes.Equal(got.Bytes, b[4:]) {
				t.Fatalf("wkb %x from %x", got.Bytes, b)
			}
		}
	})
}
