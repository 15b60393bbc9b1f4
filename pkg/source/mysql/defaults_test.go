package mysql

import (
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

func TestColumnDefault(t *testing.T) {
	col := func(dataType, colType string, precision, scale int) *column {
		c := &column{dataType: dataType, columnType: colType, precision: precision, scale: scale, octets: -1}
		c.typ = columnType(c)
		return c
	}
	none := "none"
	expr := "expr"
	for _, tc := range []struct {
		c       *column
		raw     string // "\x00": SQL NULL
		extra   string
		mariadb bool
		want    string // none, expr or the value's String()
	}{
		{col("int", "int(11)", 10, 0), "\x00", "", true, none},
		{col("int", "int(11)", 10, 0), "NULL", "", true, none},
		{col("int", "int(11)", 10, 0), "42", "", true, change.IntValue(42).String()},
		{col("int", "int(11)", 10, 0), "42", "", false, change.IntValue(42).String()},
		{col("varchar", "varchar(9)", -1, -1), "'it''s'", "", true, change.TextValue("it's").String()},
		{col("varchar", "varchar(9)", -1, -1), "NULL", "", false, change.TextValue("NULL").String()},
		{col("decimal", "decimal(10,2)", 10, 2), "1.50", "", true, change.TextValue("1.50").String()},
		{col("timestamp", "timestamp", -1, -1), "current_timestamp()", "", true, expr},
		{col("timestamp", "timestamp", -1, -1), "CURRENT_TIMESTAMP", "DEFAULT_GENERATED", false, expr},
		{col("datetime", "datetime", -1, -1), "'0000-00-00 00:00:00'", "", true, expr},
		// BIGINT defaults go through a double in Debezium's DDL parser
		// (BinlogValueConverters.convertBigInt: Math.round(Double.parseDouble)):
		// the largest BIGINT UNSIGNED saturates, precision past 2^53 is lost.
		{col("bigint", "bigint(20) unsigned", 20, 0), "18446744073709551615", "", true, change.IntValue(9223372036854775807).String()},
		{col("bigint", "bigint(20) unsigned", 20, 0), "9223372036854775808", "", true, change.IntValue(9223372036854775807).String()},
		{col("bigint", "bigint(20)", 19, 0), "9007199254740993", "", true, change.IntValue(9007199254740992).String()},
		{col("bigint", "bigint(20)", 19, 0), "-9223372036854775808", "", true, change.IntValue(-9223372036854775808).String()},
		{col("bigint", "bigint(20)", 19, 0), "42", "", false, change.IntValue(42).String()},
		{col("bit", "bit(1)", 1, -1), "b'1'", "", true, change.IntValue(1).String()},
		{col("bit", "bit(12)", 12, -1), "b'100000000001'", "", true, change.BinaryValue([]byte{1, 8}).String()},
	} {
		var raw []byte
		if tc.raw != "\x00" {
			raw = []byte(tc.raw)
		}
		got := columnDefault(tc.c, raw, tc.extra, tc.mariadb)
		var s string
		switch {
		case got == nil:
			s = none
		case got.Kind == change.Null:
			s = expr
		default:
			s = got.String()
		}
		if s != tc.want {
			t.Errorf("%s default %q (mariadb %v) = %s, want %s", tc.c.columnType, tc.raw, tc.mariadb, s, tc.want)
		}
	}
}
