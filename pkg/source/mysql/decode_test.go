package mysql

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
)

func col(dataType, colType string, fsp int) *column {
	c := &column{name: "c", dataType: dataType, columnType: colType, precision: -1, scale: -1, fsp: fsp}
	switch dataType {
	case "decimal":
		c.precision, c.scale = 10, 2
	case "bit":
		c.precision = 10
	}
	c.typ = columnType(c)
	return c
}

func TestColumnTypes(t *testing.T) {
	for _, tc := range []struct {
		dataType, columnType string
		want                 change.Kind
	}{
		{"tinyint", "tinyint(1)", change.KindInt16},
		{"tinyint", "tinyint(3) unsigned", change.KindInt16},
		{"smallint", "smallint(5) unsigned", change.KindInt32},
		{"smallint", "smallint(6)", change.KindInt16},
		{"mediumint", "mediumint(8) unsigned", change.KindInt32},
		{"int", "int(10) unsigned", change.KindInt64},
		{"int", "int(11)", change.KindInt32},
		{"bigint", "bigint(20) unsigned", change.KindInt64},
		{"float", "float", change.KindFloat32},
		{"float", "float(7,3)", change.KindFloat64},
		{"double", "double", change.KindFloat64},
		{"decimal", "decimal(10,2)", change.KindDecimal},
		{"json", "json", change.KindJSON},
		{"longtext", "longtext", change.KindString},
		{"varbinary", "varbinary(10)", change.KindBytes},
		{"year", "year(4)", change.KindYear},
		{"enum", "enum('a','b')", change.KindEnum},
		{"set", "set('a','b')", change.KindSet},
		{"geometry", "geometry", change.KindGeometry},
		{"point", "point", change.KindPoint},
		{"multipolygon", "multipolygon", change.KindGeometry},
	} {
		if got := col(tc.dataType, tc.columnType, 0).typ.Kind; got != tc.want {
			t.Errorf("%s: kind %d, want %d", tc.columnType, got, tc.want)
		}
	}
}

// TestEnumValues reads COLUMN_TYPE as MariaDB writes it (checked on
// 10.11): a quote doubled, a backslash and newline escaped. quoteMember
// writes each member back the same way.
func TestEnumValues(t *testing.T) {
	colType := `enum('a','it''s','x,y','',',','b\\s','x\ny','(p)','ü')`
	want := []string{"a", "it's", "x,y", "", ",", `b\s`, "x\ny", "(p)", "ü"}
	if got := enumValues(colType); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	quoted := make([]string, len(want))
	for i, v := range want {
		quoted[i] = quoteMember(v)
	}
	if got := "enum(" + strings.Join(quoted, ",") + ")"; got != colType {
		t.Errorf("quoteMember: %s, want %s", got, colType)
	}
	// Debezium's "allowed" (integration/mysql/mysql_fidelity_test.go).
	if got, want := allowed(want), `a,it's,x\,y,,\,,b\\s,x\ny,(p),ü`; got != want {
		t.Errorf("allowed: %s, want %s", got, want)
	}
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *column
		text string // text protocol; "" with null
		bin  any    // binlog value
		want change.Value
	}{
		{"tinyint unsigned", col("tinyint", "tinyint(3) unsigned", 0), "255", int8(-1), change.IntValue(255)},
		{"smallint unsigned", col("smallint", "smallint(5) unsigned", 0), "65535", int16(-1), change.IntValue(65535)},
		{"mediumint unsigned", col("mediumint", "mediumint(8) unsigned", 0), "16777215", int32(-1), change.IntValue(16777215)},
		{"int unsigned", col("int", "int(10) unsigned", 0), "4294967295", int32(-1), change.IntValue(4294967295)},
		{"bigint unsigned wraps", col("bigint", "bigint(20) unsigned", 0), "18446744073709551615", int64(-1), change.IntValue(-1)},
		{"decimal", col("decimal", "decimal(10,2)", 0), "12.50", decimal.RequireFromString("12.5"), change.TextValue("12.50")},
		{"date", col("date", "date", 0), "2024-01-02", "2024-01-02", change.IntValue(19724)},
		{"zero date", col("date", "date", 0), "0000-00-00", "0000-00-00", change.Value{}},
		{"datetime(3)", col("datetime", "datetime(3)", 3), "2024-01-02 03:04:05.123", "2024-01-02 03:04:05.123", change.IntValue(1704164645123000)},
		{"zero datetime", col("datetime", "datetime", 0), "0000-00-00 00:00:00", "0000-00-00 00:00:00", change.Value{}},
		{"timestamp(6)", col("timestamp", "timestamp(6)", 6), "2024-01-02 03:04:05.000001", "2024-01-02 03:04:05.000001", change.IntValue(1704164645000001)},
		{"negative time", col("time", "time(1)", 1), "-12:00:01.5", "-12:00:01.5", change.IntValue(-43201500000)},
		{"long time", col("time", "time", 0), "838:59:59", "838:59:59", change.IntValue(3020399000000)},
		{"bit(10)", col("bit", "bit(10)", 0), "\x02\x01", int64(0x201), change.BinaryValue([]byte{0x01, 0x02})},
		{"year", col("year", "year(4)", 0), "2024", 2024, change.IntValue(2024)},
		{"enum", col("enum", "enum('a','b')", 0), "b", int64(2), change.TextValue("b")},
		{"set", col("set", "set('a','b','c')", 0), "a,c", int64(5), change.TextValue("a,c")},
		{"enum member with a comma", col("enum", "enum('a,b','c','d')", 0), "a,b", int64(1), change.TextValue("a,b")},
		{"enum after a member with a comma", col("enum", "enum('a,b','c','d')", 0), "d", int64(3), change.TextValue("d")},
		{"set members with punctuation", col("set", `set('it''s','(p)','b\\s','x y')`, 0), `it's,b\s`, int64(5), change.TextValue(`it's,b\s`)},
		{"blob", col("blob", "blob", 0), "\x00\xff", []byte{0, 0xff}, change.BinaryValue([]byte{0, 0xff})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeText(tc.c, []byte(tc.text))
			if err != nil || got.String() != tc.want.String() {
				t.Errorf("text: got %v, %v; want %v", got, err, tc.want)
			}
			got, err = decodeBoxed(tc.c, tc.bin)
			if err != nil || got.String() != tc.want.String() {
				t.Errorf("binlog: got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestGTIDSets(t *testing.T) {
	for _, tc := range []struct{ flavor, in, want string }{
		{flavorMariaDB, "0-1-10", "0-1-10"},
		{flavorMariaDB, "0-1-10,1-2-3", "0-1-10,1-2-3"},
		{flavorMySQL, "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"},
		{flavorMySQL, "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7,\n 4e11fa47-71ca-11e1-9e33-c80aa9429562:1", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7,4e11fa47-71ca-11e1-9e33-c80aa9429562:1"},
	} {
		set, err := parseGTIDSet(tc.flavor, tc.in)
		if err != nil || set.String() != tc.want {
			t.Errorf("%s %q: got %v, %v; want %s", tc.flavor, tc.in, set, err, tc.want)
		}
	}
	if _, err := parseGTIDSet(flavorMySQL, "0-1-10"); err == nil {
		t.Error("a MariaDB GTID parsed as MySQL")
	}
	p := position{Flavor: flavorMySQL, GTID: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", File: "binlog.000001", Pos: 4}
	back, err := decodePosition(p.encode())
	if err != nil || back.GTID != p.GTID || back.File != p.File || back.Pos != 4 {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}

func TestDDLTables(t *testing.T) {
	q := "ALTER TABLE `shop`.`orders` ADD COLUMN x INT; RENAME TABLE a TO b, c TO `d`"
	var got []string
	for _, m := range ddlTable.FindAllStringSubmatch(q, -1) {
		got = append(got, m[1])
	}
	want := "`shop`.`orders` a b c `d`"
	if s := join(got); s != want {
		t.Errorf("got %q, want %q", s, want)
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// The text decoders read bytes from the server: no input may panic, and
// what they accept must be in range.
func FuzzParseTemporal(f *testing.F) {
	for _, s := range []string{"2024-01-02", "2024-01-02 03:04:05.123456", "-838:59:59.5", "0000-00-00", "9999-12-31 23:59:59"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, err := parseDate(b); err == nil && (d < -719528 || d > 2932896) {
			t.Fatalf("date %q → %d days", b, d)
		}
		if us, err := parseTime(b); err == nil && (us > 10000*3600e6 || us < -10000*3600e6) {
			t.Fatalf("time %q → %d", b, us)
		}
		parseDateTime(b)
	})
}

func FuzzDecodeText(f *testing.F) {
	f.Add("int", "int(10) unsigned", []byte("42"))
	f.Add("enum", "enum('a','b''c')", []byte("a"))
	f.Add("bit", "bit(64)", []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add("decimal", "decimal(10,2)", []byte("1e5"))
	f.Fuzz(func(t *testing.T, dataType, colType string, v []byte) {
		c := &column{name: "c", dataType: dataType, columnType: colType, precision: len(v), scale: 2}
		c.typ = columnType(c)
		enumValues(colType)
		decodeText(c, v)
	})
}

func TestLowerType(t *testing.T) {
	for in, want := range map[string]string{
		"INT(10) UNSIGNED":             "int(10) unsigned",
		"enum('Red','it''S','B\\\\Q')": "enum('Red','it''S','B\\\\Q')",
		"SET('A')":                     "set('A')",
	} {
		if got := lowerType(in); got != want {
			t.Errorf("lowerType(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDecodeBinlogAliasesStrings: go-mysql hands text, dates and times of
// a rows event to decodeBinlog as strings over the event's own packet
// (never reused: packet.Conn.ReadPacket reads each into a new buffer), and
// ENUM members are the column's own strings. The value is the same bytes,
// not a copy made for every column of every row.
func TestDecodeBinlogAliasesStrings(t *testing.T) {
	utf8 := col("varchar", "varchar(32)", 0)
	utf8.charset = "utf8mb4"
	utf8.typ = columnType(utf8)
	for _, tc := range []struct {
		name string
		c    *column
		bin  any
		want change.Value
	}{
		{"varchar", utf8, "shipped", change.TextValue("shipped")},
		{"json", col("json", "json", 0), `{"a": 1}`, change.TextValue(`{"a": 1}`)},
		{"varbinary", col("varbinary", "varbinary(8)", 0), "\x00\xff", change.BinaryValue([]byte{0, 0xff})},
		{"date", col("date", "date", 0), "2024-01-02", change.IntValue(19724)},
		{"datetime(6)", col("datetime", "datetime(6)", 6), "2024-01-02 03:04:05.000001", change.IntValue(1704164645000001)},
		{"time", col("time", "time", 0), "838:59:59", change.IntValue(3020399000000)},
		{"enum", col("enum", "enum('new','paid')", 0), int64(2), change.TextValue("paid")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got change.Value
			var err error
			allocs := testing.AllocsPerRun(100, func() { got, err = decodeBoxed(tc.c, tc.bin) })
			if err != nil || got.String() != tc.want.String() || got.Kind != tc.want.Kind {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
			if allocs != 0 {
				t.Errorf("%v allocations per value, want 0", allocs)
			}
		})
	}
}

// TestDecodeBinlogDecimal: a DECIMAL of a rows event (go-mysql's
// decimal.Decimal) is written with the column's scale, as StringFixed
// writes it, in 3 allocations (the copy of its coefficient that
// decimal.Decimal hands out, and the text) where StringFixed takes 10.
func TestDecodeBinlogDecimal(t *testing.T) {
	for _, tc := range []struct {
		typ string
		in  string
	}{
		{"decimal(12,2)", "1234.50"}, {"decimal(12,2)", "-1234.50"}, {"decimal(12,2)", "0.00"}, {"decimal(12,2)", "-0.05"},
		{"decimal(12,2)", "0.5"}, {"decimal(12,2)", "7"}, {"decimal(12,2)", "1.005"}, {"decimal(10,0)", "-42"}, {"decimal(10,0)", "0"},
		{"decimal(20,0)", "-9223372036854775808"}, {"decimal(20,0)", "9223372036854775807"}, {"decimal(30,4)", "-12345678901234567890123.4567"},
		{"decimal(12,6)", "0.000001"}, {"decimal(12,6)", "-0.000010"},
	} {
		c := col("decimal", tc.typ, 0)
		fmt.Sscanf(tc.typ, "decimal(%d,%d)", &c.precision, &c.scale)
		c.typ = columnType(c)
		d := decimal.RequireFromString(tc.in)
		want := d.StringFixed(int32(c.scale))
		var got change.Value
		var err error
		var v any = d // as go-mysql hands it over
		allocs := testing.AllocsPerRun(100, func() { got, err = decodeBoxed(c, v) })
		if err != nil || got.Kind != change.Text || string(got.Bytes) != want {
			t.Errorf("%s %s: got %v, %v; want %s", tc.typ, tc.in, got, err, want)
		}
		if d.Exponent() == -int32(c.scale) && d.Coefficient().IsInt64() && allocs > 3 {
			t.Errorf("%s %s: %v allocations, want at most 3", tc.typ, tc.in, allocs)
		}
	}
}

// FuzzDecimalText: decimalText writes what StringFixed writes, for any
// coefficient and scale (the binlog's DECIMAL holds up to 65 digits, 30
// after the point).
func FuzzDecimalText(f *testing.F) {
	f.Add(int64(123450), uint8(2), "1234.50")
	f.Add(int64(-5), uint8(6), "-0.000005")
	f.Add(int64(-9223372036854775808), uint8(0), "1e40")
	f.Fuzz(func(t *testing.T, coef int64, scale uint8, text string) {
		s := int32(scale % 31)
		ds := []decimal.Decimal{decimal.New(coef, -s)}
		if d, err := decimal.NewFromString(text); err == nil && len(text) < 80 {
			ds = append(ds, d)
		}
		for _, d := range ds {
			if got, want := string(decimalText(d, s)), d.StringFixed(s); got != want {
				t.Fatalf("decimalText(%s, %d) = %s, want %s", d, s, got, want)
			}
		}
	})
}

// decodeBoxed is decodeBinlog of a value of go-mysql's decoded rows.
func decodeBoxed(c *column, v any) (change.Value, error) {
	bv := boxed(v)
	return decodeBinlog(c, &bv, &snapshot.Slabs{})
}
