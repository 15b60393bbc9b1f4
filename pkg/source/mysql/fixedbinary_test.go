package mysql

import (
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// TestFixedBinaryText: a rows event's UUID, INET4 and INET6 bytes (their
// trailing zero bytes cut, as the binlog writes them) give the text
// MariaDB 10.11 prints for them (SELECT CAST(… AS CHAR), checked against
// the server by TestMySQLFixedBinaryTypes).
func TestFixedBinaryText(t *testing.T) {
	for _, c := range []struct {
		typ  string
		raw  []byte
		want string
	}{
		{"uuid", []byte{0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0x04, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40}, "123e4567-e89b-12d3-0456-426614174000"},
		{"uuid", nil, "00000000-0000-0000-0000-000000000000"},
		{"inet4", []byte{1, 2, 3}, "1.2.3.0"},
		{"inet4", []byte{255, 255, 255, 255}, "255.255.255.255"},
		{"inet6", nil, "::"},
		{"inet6", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, "::1"},
		{"inet6", []byte{0, 1}, "1::"},
		{"inet6", []byte{0, 1, 0, 0, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7}, "1::2:3:4:5:6:7"},
		{"inet6", []byte{0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}, "1::2:0:0:3:4"},
		{"inet6", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4}, "::ffff:1.2.3.4"},
		{"inet6", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}, "::1.2.3.4"},
		{"inet6", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, "::ffff:0.0.0.0"},
		{"inet6", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, "::1:0:0"},
		{"inet6", []byte{0x20, 0x01, 0x0d, 0xb8}, "2001:db8::"},
		{"inet6", []byte{0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7}, "1:2:3:4:5:6:7::"},
	} {
		got, err := appendFixedBinaryText(nil, c.typ, c.raw)
		if err != nil || string(got) != c.want {
			t.Errorf("%s %x: %q, %v; want %q", c.typ, c.raw, got, err, c.want)
		}
	}
	if _, err := appendFixedBinaryText(nil, "inet4", make([]byte, 5)); err == nil {
		t.Error("5 bytes of INET4: no error")
	}
}

// TestUnencodableKeyRefused: a table whose key has a column of a type
// Tributary cannot encode is refused, naming the table and the column,
// unless include_unknown_types publishes it (as bytes).
func TestUnencodableKeyRefused(t *testing.T) {
	tb := &table{db: "shop", name: "t", cols: []column{
		{name: "id", dataType: "int", columnType: "int(11)"},
		{name: "v", dataType: "vector", columnType: "vector(3)"},
		{name: "u", dataType: "uuid", columnType: "uuid"},
	}, key: []int{0, 1, 2}}
	for i := range tb.cols {
		tb.cols[i].typ = columnType(&tb.cols[i])
	}
	tb.t = &change.Table{}
	got := unencodableKey(tb, false)
	if len(got) != 1 || !strings.Contains(got[0], "shop.t.v is a key column of type vector(3)") {
		t.Errorf("problems %q, want one naming shop.t.v", got)
	}
	if got := unencodableKey(tb, true); len(got) != 0 {
		t.Errorf("with include_unknown_types: %q", got)
	}
}
