package scenario_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// myDialect generates MariaDB tables for the differential oracle: every
// built-in type, every character set and collation the server ships
// (information_schema.COLLATION_CHARACTER_SET_APPLICABILITY), ENUM and SET
// members with punctuation, primary keys of one to three columns, keyless
// tables, partitioned tables.
type myDialect struct {
	collations map[string][]string // character set → its collations
	charsets   []string
}

func newMyDialect(t *testing.T, e *itest.MyEnv) myDialect {
	r := e.Exec(`SELECT CHARACTER_SET_NAME, FULL_COLLATION_NAME FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY ORDER BY 1, 2`)
	d := myDialect{collations: map[string][]string{}}
	for i := range r.RowNumber() {
		cs, _ := r.GetString(i, 0)
		co, _ := r.GetString(i, 1)
		if d.collations[cs] == nil {
			d.charsets = append(d.charsets, cs)
		}
		d.collations[cs] = append(d.collations[cs], co)
	}
	if len(d.charsets) == 0 {
		t.Fatal("information_schema lists no character sets")
	}
	return d
}

// myUTF8Charsets are the character sets whose text is decoded right today
// (diffKnown.myNonUTF8).
var myUTF8Charsets = []string{"utf8mb4", "utf8mb3", "ascii"}

func (myDialect) quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", "''").Replace(s) + "'"
}

func (myDialect) anyRow(*diffTable) string { return " LIMIT 1" }

func (myDialect) emptyInsert(_ *diffGen, tb *diffTable) string {
	return "INSERT INTO " + tb.name + " () VALUES ()"
}

// charset is a random character set and collation clause.
func (d myDialect) charset(g *diffGen) string {
	cs := g.pick(d.charsets)
	if g.known.myNonUTF8 {
		for !slices.Contains(myUTF8Charsets, cs) {
			cs = g.pick(d.charsets)
		}
	}
	co := g.pick(d.collations[cs])
	g.covered["charset "+cs]++
	g.covered["collation "+co]++
	return " CHARACTER SET " + cs + " COLLATE " + co
}

// myMembers are ENUM and SET members with punctuation.
var myMembers = []string{"a", "b c", "it's", `"q"`, "é", "", "UPPER", "-", "a=b", "(paren)", `back\slash`, "😀", " lead", "NULL", "x;y", "ü"}

func (d myDialect) members(g *diffGen, set bool) []string {
	pool := slices.Clone(myMembers)
	if g.known.myMemberBackslash {
		pool = slices.DeleteFunc(pool, func(m string) bool { return strings.ContainsAny(m, `\'`) })
	}
	if g.known.myMember4Byte {
		pool = slices.DeleteFunc(pool, func(m string) bool { return strings.ContainsFunc(m, func(r rune) bool { return r > 0xffff }) })
	}
	if set {
		pool = slices.DeleteFunc(pool, func(m string) bool { return m == "" })
	} else if !g.known.myEnumComma {
		pool = append(pool, "x,y", ",")
	}
	var out []string
	for _, i := range g.r.Perm(len(pool))[:1+g.r.IntN(6)] {
		out = append(out, pool[i])
	}
	return out
}

func (d myDialect) quoteAll(xs []string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, d.quote(x))
	}
	return out
}

func myHex(n int) string { return fmt.Sprintf("X'%04x'", n) }

// myType is a random MariaDB column type (key: one that can be in a
// primary key).
func (d myDialect) myType(g *diffGen, key bool) diffType {
	intKey := func(min string) func(int) string {
		return func(n int) string {
			if n == 0 {
				return min
			}
			return fmt.Sprint(n)
		}
	}
	strKey := func(n int) string {
		if n == 0 {
			return "''"
		}
		return d.quote(fmt.Sprintf("k%d-x", n)) // ASCII: a literal of any character set compares with it
	}
	ints := []struct {
		name     string
		min, max string
		umax     string
	}{
		{"TINYINT", "-128", "127", "255"}, {"SMALLINT", "-32768", "32767", "65535"}, {"MEDIUMINT", "-8388608", "8388607", "16777215"},
		{"INT", "-2147483648", "2147483647", "4294967295"}, {"BIGINT", "-9223372036854775808", "9223372036854775807", "18446744073709551615"},
	}
	kinds := []func() diffType{
		func() diffType {
			it := ints[g.r.IntN(len(ints))]
			if g.chance(0.3) {
				t := diffType{sql: it.name + " UNSIGNED", name: "u" + strings.ToLower(it.name), vals: []string{"0", "1", it.umax}, key: intKey("0")}
				if it.name == "TINYINT" {
					t.key = nil
				}
				return t
			}
			t := diffType{sql: it.name, name: strings.ToLower(it.name), vals: []string{"0", "-1", it.min, it.max}, key: intKey(it.min)}
			if it.name == "TINYINT" {
				t.key = nil
			}
			return t
		},
		func() diffType {
			return diffType{sql: "TINYINT(1)", name: "bool", vals: []string{"0", "1", "127", "-128"}}
		},
		func() diffType {
			p := 1 + g.r.IntN(65)
			s := g.r.IntN(min(p, 30) + 1)
			nines := strings.Repeat("9", p)
			t := diffType{sql: fmt.Sprintf("DECIMAL(%d,%d)", p, s), name: "dec", vals: []string{pgDecimal(nines, s), pgDecimal("-"+nines, s), "0", pgDecimal(g.digits(p), s)}}
			if g.chance(0.2) {
				t.sql += " UNSIGNED"
				t.vals = t.vals[:1]
				t.vals = append(t.vals, "0")
			}
			if p-s >= 6 {
				t.key = func(n int) string { return fmt.Sprint(n) }
			}
			return t
		},
		func() diffType {
			// Not 1.17549435e-38: see pgScalar's real.
			return diffType{sql: "FLOAT", name: "float", vals: []string{"0", "1.5", "0.1", "-3.4e38", "3.4e38", "1.1754944e-37", "123456.789"}}
		},
		func() diffType {
			return diffType{sql: "DOUBLE", name: "double", vals: []string{"0", "0.1", "3.141592653589793", "1.7976931348623157e308", "-2.2250738585072014e-308", "1e-300"}}
		},
		func() diffType {
			n := 1 + g.r.IntN(64)
			ones := "b'" + strings.Repeat("1", n) + "'"
			return diffType{sql: fmt.Sprintf("BIT(%d)", n), name: "bit", vals: []string{"b'0'", ones, "b'1'"}}
		},
		func() diffType {
			n := 1 + g.r.IntN(30)
			t := diffType{sql: fmt.Sprintf("CHAR(%d)", n) + d.charset(g), name: "char", vals: strVals(d, n)}
			if n >= 8 {
				t.key = strKey
			}
			return t
		},
		func() diffType {
			n := 1 + g.r.IntN(300)
			t := diffType{sql: fmt.Sprintf("VARCHAR(%d)", n) + d.charset(g), name: "varchar", vals: strVals(d, n)}
			if n >= 8 && n <= 100 {
				t.key = strKey
			}
			return t
		},
		func() diffType {
			tt := []string{"TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT"}[g.r.IntN(4)]
			t := diffType{sql: tt + d.charset(g), name: strings.ToLower(tt), vals: strVals(d, 0)}
			if tt != "TINYTEXT" {
				t.toast = "REPEAT('huge é ', 6000)"
			}
			return t
		},
		func() diffType {
			n := 1 + g.r.IntN(20)
			t := diffType{sql: fmt.Sprintf("BINARY(%d)", n), name: "binary", vals: []string{"X''", "X'00'", "X'FF'"}}
			if n >= 2 {
				t.key = myHex
			}
			return t
		},
		func() diffType {
			n := 1 + g.r.IntN(300)
			t := diffType{sql: fmt.Sprintf("VARBINARY(%d)", n), name: "varbinary", vals: []string{"X''", "X'00'", "X'DEADBEEF'", "X'C328'"}}
			if n >= 2 && n <= 100 {
				t.key = myHex
			}
			return t
		},
		func() diffType {
			bt := []string{"TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"}[g.r.IntN(4)]
			t := diffType{sql: bt, name: strings.ToLower(bt), vals: []string{"X''", "X'00FF10'", "X'C328'"}}
			if bt != "TINYBLOB" {
				t.toast = "REPEAT(X'AB01', 20000)"
			}
			return t
		},
		func() diffType {
			return diffType{sql: "DATE", name: "date", vals: []string{"'2024-02-29'", "'1000-01-01'", "'9999-12-31'", "'1970-01-01'", "'0000-00-00'", "'2024-00-10'"},
				key: func(n int) string { return pgDate(n) }}
		},
		func() diffType {
			p := g.r.IntN(7)
			return diffType{sql: fmt.Sprintf("DATETIME(%d)", p), name: "datetime", vals: []string{"'1000-01-01 00:00:00'", "'9999-12-31 23:59:59.999999'", "'1970-01-01 00:00:00'",
				"'0000-00-00 00:00:00'", "'2024-02-29 12:00:00.5'", "'1969-12-31 23:59:59.999'"},
				key: func(n int) string { return fmt.Sprintf("'2000-01-01 00:00:00' + INTERVAL %d SECOND", n) }}
		},
		func() diffType {
			p := g.r.IntN(7)
			t := diffType{sql: fmt.Sprintf("TIMESTAMP(%d)", p), name: "timestamp", vals: []string{"'1970-01-01 00:00:01'", "'2038-01-19 03:14:07'",
				"'2024-03-01 10:00:00.120'", "'2038-01-19 03:14:07.999999'"}}
			if !g.known.myTimestampZero {
				t.vals = append(t.vals, "'0000-00-00 00:00:00'")
			}
			return t
		},
		func() diffType {
			p := g.r.IntN(7)
			return diffType{sql: fmt.Sprintf("TIME(%d)", p), name: "time", vals: []string{"'-838:59:59'", "'838:59:59'", "'00:00:00'", "'12:34:56.789'", "'-00:00:00.000001'"},
				key: func(n int) string { return fmt.Sprintf("'%d:%02d:%02d'", n/3600, n/60%60, n%60) }}
		},
		func() diffType {
			t := diffType{sql: "YEAR", name: "year", vals: []string{"1901", "2155", "2024"}}
			if !g.known.myYearZero {
				t.vals = append(t.vals, "0")
			}
			return t
		},
		func() diffType {
			// utf8mb4: the members (é, ü, 😀) need not exist in the table's charset.
			m := d.quoteAll(d.members(g, false))
			return diffType{sql: "ENUM(" + strings.Join(m, ",") + ") CHARACTER SET utf8mb4", name: "enum", vals: m}
		},
		func() diffType {
			m := d.members(g, true)
			q := d.quoteAll(m)
			return diffType{sql: "SET(" + strings.Join(q, ",") + ") CHARACTER SET utf8mb4", name: "set", vals: []string{"''", q[0], d.quote(strings.Join(m, ","))}}
		},
		func() diffType {
			return diffType{sql: "JSON", name: "json", vals: []string{"'{}'", "'[]'", "'null'", `'{"a": 1, "b": [true, null, 1.5e300]}'`, `'{"é": "✓"}'`}}
		},
		func() diffType {
			return diffType{sql: "POINT", name: "point", vals: []string{"POINT(1.5, -2.25)", "POINT(0, 0)", "ST_GeomFromText('POINT(1 2)', 4326)"}}
		},
		func() diffType {
			return diffType{sql: "GEOMETRY", name: "geometry", vals: []string{"ST_GeomFromText('LINESTRING(0 0,1 1)')", "ST_GeomFromText('GEOMETRYCOLLECTION EMPTY')", "ST_GeomFromText('POINT(5 6)', 3857)"}}
		},
		func() diffType {
			// MariaDB 10.7+: the versions MariaDB stores in different byte
			// orders (v1 swapped on disk), nil, max. Key values never end
			// in a zero byte unless myUUIDTrailingZero is off.
			t := diffType{sql: "UUID", name: "uuid", vals: []string{"'6ccd780c-baba-1026-9564-5b8c656024db'", "'01890a5d-ac96-774b-bcce-b302099a8057'",
				"'00000000-0000-0000-0000-000000000001'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "'123e4567-e89b-12d3-0456-426614174001'",
				"'00000000-0000-0000-0000-000000000000'"},
				key: func(n int) string { return fmt.Sprintf("'%08x-0000-4000-8000-0000000000ff'", n) }}
			if !g.known.myUUIDTrailingZero {
				t.vals = append(t.vals, "'123e4567-e89b-12d3-0456-426614174000'", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a00'")
			}
			return t
		},
		// Not INET4, INET6 (MariaDB 10.10+, 10.5+): Debezium's MariaDB DDL
		// parser (3.5.0) has no such types (the connector stops, or with
		// schema.history.internal.skip.unparseable.ddl knows no such
		// table): they are in myInetTable, checked against the database.
	}
	for {
		t := kinds[g.r.IntN(len(kinds))]()
		if !key || t.key != nil {
			return t
		}
	}
}

func (d myDialect) table(g *diffGen, i int) *diffTable {
	tb := &diffTable{name: fmt.Sprintf("t%d", i+1)}
	tb.nkey = []int{0, 1, 1, 1, 2, 3}[g.r.IntN(6)]
	tb.cols = g.columns(tb.nkey, func(key bool) diffType { return d.myType(g, key) })
	for j := range tb.cols {
		c := &tb.cols[j]
		// MariaDB takes no DEFAULT for a spatial column.
		if c.typ.name == "point" || c.typ.name == "geometry" {
			c.def = ""
		}
		// A default outside ASCII may not exist in the column's (or the
		// table's) character set: MariaDB refuses the table.
		if strings.ContainsFunc(c.def, func(r rune) bool { return r > 0x7f }) && !g.known.myNonUTF8 {
			c.def = ""
		}
		switch c.typ.name {
		case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
			if g.known.myBinaryDefault {
				c.def = ""
			}
		}
		if g.known.myDefaultEscapes && (strings.ContainsAny(c.def, "\\\n") || strings.Contains(c.def, "''") ||
			strings.ContainsFunc(c.def, func(r rune) bool { return r > 0xffff })) {
			c.def = ""
		}
		// TINYTEXT holds 255 bytes, its default too.
		if len(c.def) > 200 {
			c.def = ""
		}
		// An ascii column takes no default it cannot hold.
		if strings.Contains(c.typ.sql, "CHARACTER SET ascii") && strings.ContainsFunc(c.def, func(r rune) bool { return r > 0x7f }) {
			c.def = ""
		}
		// A TIMESTAMP is NOT NULL unless it says NULL.
		if c.typ.name == "timestamp" && c.nullable {
			c.typ.sql += " NULL"
		}
	}
	opts := ""
	if cs := d.charset(g); g.chance(0.3) && !strings.Contains(cs, " ascii ") {
		opts = " DEFAULT" + cs // (not ascii: other columns' defaults would not convert)
	}
	// A partitioned table takes no spatial column ("The storage engine for
	// the table doesn't support GEOMETRY").
	spatial := slices.ContainsFunc(tb.cols, func(c diffColumn) bool { return c.typ.name == "point" || c.typ.name == "geometry" })
	if tb.nkey > 0 && !spatial && g.chance(0.3) {
		opts += d.partition(g, tb)
	}
	tb.ddl = []string{"CREATE TABLE " + tb.name + " (\n  " + columnsDDL(tb, "PRIMARY KEY") + ")" + opts}
	return tb
}

// partition partitions tb by one of its key columns (none: tb stays as it
// is), MariaDB's way, transparent to the binlog: HASH, RANGE, LIST or KEY
// on an integer, RANGE COLUMNS or KEY on a date, KEY on the other key
// types, with two or three partitions (RANGE up to MAXVALUE, LIST with a
// DEFAULT one) that the key values 0, 1, 2, … fill as pgPartition's do
// (LIST: 1 and 4, 2 and 3, the others in DEFAULT).
func (d myDialect) partition(g *diffGen, tb *diffTable) string {
	tb.partitioned, tb.partKey = true, g.r.IntN(tb.nkey)
	integer := func(t diffType) bool { return strings.HasSuffix(t.name, "int") }
	if !integer(tb.cols[tb.partKey].typ) && (g.chance(0.6) || tb.cols[tb.partKey].typ.name == "uuid") {
		// Most key types take KEY only: an integer key column, now and
		// then, for HASH, RANGE and LIST.
		t := d.myType(g, true)
		for !integer(t) {
			t = d.myType(g, true)
		}
		tb.cols[tb.partKey] = diffColumn{name: fmt.Sprintf("k%d_%s", tb.partKey+1, t.name), typ: t}
		g.covered[t.sql]++
	}
	c := tb.cols[tb.partKey]
	k := c.typ.key
	kinds := []string{"KEY"}
	switch {
	case integer(c.typ):
		kinds = append(kinds, "HASH", "RANGE", "LIST")
	case c.typ.name == "date":
		kinds = append(kinds, "RANGE COLUMNS")
	}
	kind := g.pick(kinds)
	g.covered["partitioned by "+kind]++
	switch kind {
	case "KEY", "HASH":
		return fmt.Sprintf(" PARTITION BY %s (%s) PARTITIONS %d", kind, c.name, 2+g.r.IntN(2))
	case "LIST":
		// Not the first key value, the type's minimum (in the DEFAULT
		// partition): Debezium's MariaDB DDL parser fails on a partition
		// value of -9223372036854775808 ("mismatched input
		// '9223372036854775808' expecting '-'"), and a connector reading
		// the binlog then, this round's or another test's, stops.
		return fmt.Sprintf(" PARTITION BY LIST (%s) (PARTITION p1 VALUES IN (%s, %s), PARTITION p2 VALUES IN (%s, %s), PARTITION p3 DEFAULT)",
			c.name, k(1), k(4), k(2), k(3))
	default:
		return fmt.Sprintf(" PARTITION BY %s (%s) (PARTITION p1 VALUES LESS THAN (%s), PARTITION p2 VALUES LESS THAN (%s), PARTITION p3 VALUES LESS THAN MAXVALUE)",
			kind, c.name, k(2), k(5))
	}
}

// The MariaDB types Debezium cannot read, and sessions in STATEMENT
// format, which it does not handle (its rows are not in the binlog): both
// go to tables of their own that Debezium does not capture, created
// empty (the snapshot markers of the compared tables stay as they are),
// and Tributary's messages for them, folded per key, are checked against
// the database itself at the end of the round.

// myInet4Vals and myInet6Vals are values at the edges of MariaDB's text
// form: trailing zero bytes (cut in the binlog), a single zero group
// (MariaDB writes "::" for it), IPv4-mapped and -compatible addresses.
var (
	myInet4Vals = []string{"'0.0.0.0'", "'1.2.3.0'", "'255.255.255.255'", "'10.0.0.1'", "'1.0.0.0'"}
	myInet6Vals = []string{"'::'", "'::1'", "'1::'", "'::ffff:1.2.3.4'", "'::1.2.3.4'", "'1:0:2:3:4:5:6:7'", "'1:0:0:2:0:0:3:4'",
		"'2001:db8::'", "'fe80::1:0:0'", "'::ffff:0:0'", "'0:0:0:0:0:1:0:0'", "'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'", "'1:2:3:4:5:6:7:0'"}
)

// myInetTable is zz_inet: INET4 and INET6 columns, an INET6 in the key.
func myInetTable() *diffTable {
	inet6Key := func(n int) string {
		switch n % 3 {
		case 0:
			return fmt.Sprintf("'%x::'", n+1)
		case 1:
			return fmt.Sprintf("'::ffff:10.%d.%d.0'", n/256%256, n%256)
		}
		return fmt.Sprintf("'1:0:%x::1'", n+1)
	}
	tb := &diffTable{name: "zz_inet", nkey: 2, cols: []diffColumn{
		{name: "k1_int", typ: diffType{sql: "INT", name: "int", key: func(n int) string { return fmt.Sprint(n % 4) }}},
		{name: "k2_inet6", typ: diffType{sql: "INET6", name: "inet6", key: inet6Key}},
		{name: "c1_inet4", typ: diffType{sql: "INET4", name: "inet4", vals: myInet4Vals}, nullable: true},
		{name: "c2_inet6", typ: diffType{sql: "INET6", name: "inet6", vals: myInet6Vals}, nullable: true, def: "'::1'"},
		{name: "c3_inet4", typ: diffType{sql: "INET4", name: "inet4", vals: myInet4Vals}, def: "'1.2.3.4'"},
	}}
	tb.ddl = []string{"CREATE TABLE zz_inet (\n  " + columnsDDL(tb, "PRIMARY KEY") + ")"}
	return tb
}

// myStatementTable is zz_stmt, written in STATEMENT format: inserts and
// updates (a backfill, which is what Tributary does about such a
// statement, cannot show what a delete removed: docs/mysql.md).
func myStatementTable() *diffTable {
	tb := &diffTable{name: "zz_stmt", nkey: 1, cols: []diffColumn{
		{name: "k1_int", typ: diffType{sql: "INT", name: "int", key: func(n int) string { return fmt.Sprint(n) }}},
		{name: "c1_int", typ: diffType{sql: "INT", name: "int", vals: []string{"0", "-1", "2147483647"}}, nullable: true},
		{name: "c2_varchar", typ: diffType{sql: "VARCHAR(20)", name: "varchar", vals: []string{"''", "'a'", "'statement'", "'é✓'"}}, nullable: true},
	}}
	tb.ddl = []string{"CREATE TABLE zz_stmt (\n  " + columnsDDL(tb, "PRIMARY KEY") + ")"}
	return tb
}

// myStatementFormat starts a transaction of the stream that the round's
// exec runs in a session with binlog_format = STATEMENT.
const myStatementFormat = "-- binlog_format = STATEMENT"

// mySideWorkload adds the side tables' transactions to w's stream at
// random places: changes of zz_inet (any statement), and of zz_stmt in
// STATEMENT format (inserts and non-key updates).
func mySideWorkload(g *diffGen, w *diffWorkload, inet, stmt *diffTable) {
	n := max(4, len(w.stream)/6)
	for range n {
		var tx []string
		if g.chance(0.5) {
			for k := 1 + g.r.IntN(3); k > 0; k-- {
				tx = append(tx, g.change(inet))
			}
		} else {
			tx = []string{myStatementFormat}
			for k := 1 + g.r.IntN(3); k > 0; k-- {
				if stmt.rows == 0 || g.chance(0.5) {
					tx = append(tx, g.Insert(stmt, true))
					continue
				}
				c := stmt.cols[1+g.r.IntN(2)]
				tx = append(tx, fmt.Sprintf("UPDATE zz_stmt SET %s = %s%s", c.name, g.value(c, true), g.where(stmt, stmt.live[g.r.IntN(stmt.rows)])))
			}
		}
		i := g.r.IntN(len(w.stream) + 1)
		w.stream = slices.Insert(w.stream, i, tx)
	}
	g.covered["INET4, INET6 (zz_inet, against the database)"]++
	g.covered["STATEMENT format (zz_stmt, against the database)"]++
}
