package mysql

import (
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/shopspring/decimal"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// FuzzBinlogDecimal: a DECIMAL(p,s) of a rows event decodes to the same
// value whether go-mysql hands it over as a decimal.Decimal (UseDecimal,
// as the stream of a MySQL server asks) or as its text (a MariaDB
// server's, newParser), for any value of any precision and scale the
// binlog holds (p ≤ 65, s ≤ 30), a negative zero among them, and for a
// catalog column whose scale is not the binlog's. The events are built as
// a server writes them (a table map and a write rows event after the
// benchmark's MariaDB format description).
func FuzzBinlogDecimal(f *testing.F) {
	f.Add(uint8(12), uint8(2), false, []byte("123450"), uint8(2))
	f.Add(uint8(10), uint8(2), true, []byte("0000000000"), uint8(2))
	f.Add(uint8(65), uint8(30), true, []byte("98765432109876543210987654321098765432109876543210987654321098765"), uint8(30))
	f.Add(uint8(2), uint8(2), false, []byte("05"), uint8(4))
	f.Add(uint8(20), uint8(0), true, []byte("9223372036854775808"), uint8(0))
	f.Fuzz(func(t *testing.T, prec, scale uint8, neg bool, digits []byte, colScale uint8) {
		p := max(1, int(prec)%66)
		s := int(scale) % (min(p, 30) + 1)
		text := make([]byte, p) // p digits, from digits (ASCII ones as they are)
		for i := range text {
			text[i] = '0'
			if i < len(digits) {
				text[i] += (digits[i] - '0') % 10
			}
		}
		c := &column{name: "c", dataType: "decimal", precision: p, scale: int(colScale) % 31}
		c.columnType = "decimal(" + strconv.Itoa(p) + "," + strconv.Itoa(c.scale) + ")"
		c.typ = columnType(c)
		var got [2]change.Value
		for i, useDecimal := range []bool{true, false} {
			v := parseBinlogDecimal(t, p, s, neg, text, useDecimal)
			val, err := decodeBoxed(c, v)
			if err != nil {
				t.Fatalf("decimal(%d,%d) %q (%T): %v", p, s, text, v, err)
			}
			got[i] = val
		}
		// The events hold the value: the digits, s after the point (in a
		// column of another scale, rounded to it).
		want := string(text[:p-s])
		if s > 0 {
			want += "." + string(text[p-s:])
		}
		if neg {
			want = "-" + want
		}
		if d, err := decimal.NewFromString(string(got[0].Bytes)); err != nil || !d.Equal(decimal.RequireFromString(want).Round(int32(c.scale))) {
			t.Fatalf("decimal(%d,%d) %s decoded as %q", p, s, want, got[0].Bytes)
		}
		if got[0].Kind != got[1].Kind || string(got[0].Bytes) != string(got[1].Bytes) {
			t.Fatalf("decimal(%d,%d) neg %v %q in a decimal(%d,%d) column: %q from the decimal.Decimal, %q from the text",
				p, s, neg, text, p, c.scale, got[0].Bytes, got[1].Bytes)
		}
	})
}

// parseBinlogDecimal returns what go-mysql decodes from a rows event of
// one DECIMAL(p,s) column holding digits (p of them, s after the point).
func parseBinlogDecimal(t *testing.T, p, s int, neg bool, digits []byte, useDecimal bool) any {
	parser := replication.NewBinlogParser()
	parser.SetUseDecimal(useDecimal)
	if _, err := parser.Parse(benchBytes(t, benchFormatEvent)); err != nil {
		t.Fatal(err)
	}
	tableID := []byte{1, 0, 0, 0, 0, 0}
	tm := append(append([]byte{}, tableID...), 1, 0, 1, 'd', 0, 1, 't', 0, 1, 0xf6, 2, byte(p), byte(s), 1)
	rows := append(append([]byte{}, tableID...), 1, 0, 1, 1, 0)
	rows = append(rows, binaryDecimal(p, s, neg, digits)...)
	var v any
	for _, ev := range []struct {
		typ  replication.EventType
		body []byte
	}{{replication.TABLE_MAP_EVENT, tm}, {replication.WRITE_ROWS_EVENTv1, rows}} {
		raw := make([]byte, replication.EventHeaderSize, replication.EventHeaderSize+len(ev.body)+replication.BinlogChecksumLength)
		raw[4] = byte(ev.typ)
		binary.LittleEndian.PutUint32(raw[5:], 1)
		binary.LittleEndian.PutUint32(raw[9:], uint32(cap(raw)))
		raw = append(append(raw, ev.body...), 0, 0, 0, 0) // the checksum, not verified
		e, err := parser.Parse(raw)
		if err != nil {
			t.Fatalf("decimal(%d,%d): %v", p, s, err)
		}
		if re, ok := e.Event.(*replication.RowsEvent); ok {
			v = re.Rows[0][0]
		}
	}
	return v
}

// binaryDecimal is MySQL's binary form of a DECIMAL(p,s) (decimal2bin in
// the server's strings/decimal.cc): the integral digits, then those after
// the point, in groups of nine in four big-endian bytes, a partial group
// (the first integral one, the last fractional one) in as few bytes as
// its digits need; all bytes inverted for a negative value, the first
// byte's top bit flipped.
func binaryDecimal(p, s int, neg bool, digits []byte) []byte {
	size := []int{0, 1, 1, 2, 2, 3, 3, 4, 4, 4}
	var out []byte
	put := func(ds []byte) {
		var n uint32
		for _, d := range ds {
			n = n*10 + uint32(d-'0')
		}
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], n)
		out = append(out, b[4-size[len(ds)]:]...)
	}
	intg, frac := digits[:p-s], digits[p-s:]
	if k := len(intg) % 9; k > 0 {
		put(intg[:k])
		intg = intg[k:]
	}
	for ; len(intg) > 0; intg = intg[9:] {
		put(intg[:9])
	}
	for ; len(frac) >= 9; frac = frac[9:] {
		put(frac[:9])
	}
	if len(frac) > 0 {
		put(frac)
	}
	if neg {
		for i := range out {
			out[i] ^= 0xff
		}
	}
	out[0] ^= 0x80
	return out
}
