package mysql

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// numericLiteral is an unquoted number in information_schema.COLUMNS.COLUMN_DEFAULT.
var numericLiteral = regexp.MustCompile(`^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$`)

// columnDefault converts information_schema's COLUMN_DEFAULT (raw; nil for
// SQL NULL) to the column's default value, as Debezium's binlog connectors
// put it in the schema: nil for no default (and for DEFAULT NULL); a Null
// Value for a default Debezium cannot evaluate (CURRENT_TIMESTAMP and
// other expressions, zero dates), which the encoder turns into the type's
// zero value for a NOT NULL column.
//
// MariaDB (10.2.7+) writes literals as SQL ('text', 42, NULL) and
// expressions as SQL too (current_timestamp()); MySQL writes the bare
// text of a literal and flags expressions with DEFAULT_GENERATED in EXTRA.
func columnDefault(c *column, raw []byte, extra string, mariadb bool) *change.Value {
	if raw == nil || c.dataType == "uuid" {
		// Debezium's MariaDB connector gives a UUID column no default
		// ("Unexpected default value for JDBC type …"; side by side:
		// TestDebeziumFidelityMySQLUUID).
		return nil
	}
	s := string(raw)
	var lit string
	switch {
	case mariadb && strings.EqualFold(s, "NULL"):
		return nil
	case strings.HasPrefix(s, "b'") && strings.HasSuffix(s, "'"):
		return bitDefault(c, s[2:len(s)-1])
	case mariadb && strings.HasPrefix(s, "'") && strings.HasSuffix(s, "'") && len(s) >= 2:
		lit = unquoteDefault(s[1 : len(s)-1])
	case mariadb && numericLiteral.MatchString(s):
		lit = s
	case mariadb, strings.Contains(strings.ToUpper(extra), "DEFAULT_GENERATED"),
		strings.HasPrefix(strings.ToUpper(s), "CURRENT_TIMESTAMP"):
		return &change.Value{} // an expression
	default:
		lit = s
	}
	if c.dataType == "bigint" {
		// Debezium's DDL default goes through a double
		// (BinlogValueConverters.convertBigInt: Math.round(Double.parseDouble)),
		// so 18446744073709551615 is 9223372036854775807 in the schema.
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			return &change.Value{}
		}
		v := change.IntValue(javaRound(f))
		return &v
	}
	v, err := decodeText(c, []byte(lit))
	if err != nil {
		return &change.Value{}
	}
	return &v
}

// javaRound is Java's Math.round(double): the nearest long, halves up,
// NaN 0, saturating at the long bounds.
func javaRound(f float64) int64 {
	r := math.Floor(f + 0.5)
	switch {
	case math.IsNaN(f):
		return 0
	case r >= math.MaxInt64:
		return math.MaxInt64
	case r <= math.MinInt64:
		return math.MinInt64
	}
	return int64(r)
}

// bitDefault is the default b'0101' of a BIT column.
func bitDefault(c *column, digits string) *change.Value {
	var u uint64
	for _, d := range digits {
		if d != '0' && d != '1' {
			return &change.Value{}
		}
		u = u<<1 | uint64(d-'0')
	}
	var v change.Value
	if c.typ.Kind == change.KindBool {
		v = change.IntValue(int64(u & 1))
	} else {
		v = change.BinaryValue(bitsLE(u, c.typ.Length))
	}
	return &v
}

// unquoteDefault undoes MariaDB's quoting of a string default: ” for a
// quote and backslash escapes.
func unquoteDefault(s string) string {
	if !strings.ContainsAny(s, `'\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
		case ch == '\\' && i+1 < len(s):
			i++
			switch ch = s[i]; ch {
			case 'n':
				ch = '\n'
			case 't':
				ch = '\t'
			case 'r':
				ch = '\r'
			case '0':
				ch = 0
			}
		}
		b.WriteByte(ch)
	}
	return b.String()
}

// sameValue reports whether two defaults are equal.
func sameValue(a, b *change.Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Kind == b.Kind && a.Int == b.Int && a.Float == b.Float && string(a.Bytes) == string(b.Bytes)
}
