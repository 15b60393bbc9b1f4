package scenario_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// pgDialect generates PostgreSQL tables for the differential oracle:
// every built-in type Debezium's connector maps and those of the common
// extensions (citext, hstore, ltree, PostGIS), with random precision,
// one-dimensional arrays, domains and enums, primary keys of one to three
// columns, keyless tables, every REPLICA IDENTITY, identity and serial
// columns, partitioned tables.
type pgDialect struct{}

func (pgDialect) quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (pgDialect) anyRow(tb *diffTable) string {
	return fmt.Sprintf(" WHERE ctid = (SELECT ctid FROM %s LIMIT 1)", tb.name)
}

func (pgDialect) emptyInsert(_ *diffGen, tb *diffTable) string {
	return "INSERT INTO " + tb.name + " DEFAULT VALUES"
}

// pgExtensions are created in every round's database (cube, seg and isn
// for pgUnknown).
var pgExtensions = []string{"citext", "hstore", "ltree", "postgis", "cube", "seg", "isn"}

// pgToastText is text random enough to be stored out of line.
const pgToastText = `(SELECT string_agg(md5(g::text), '') FROM generate_series(1, 300) g)`

func pgDate(n int) string {
	return "'" + time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, n).Format("2006-01-02") + "'"
}

// pgDecimal is the literal of unscaled × 10^-scale.
func pgDecimal(unscaled string, scale int) string {
	neg := strings.HasPrefix(unscaled, "-")
	u := strings.TrimPrefix(unscaled, "-")
	switch {
	case scale <= 0:
		u += strings.Repeat("0", -scale)
	case len(u) <= scale:
		u = "0." + strings.Repeat("0", scale-len(u)) + u
	default:
		u = u[:len(u)-scale] + "." + u[len(u)-scale:]
	}
	if neg {
		u = "-" + u
	}
	return "'" + u + "'"
}

// digits is a random whole number of n digits.
func (g *diffGen) digits(n int) string {
	b := []byte{byte('1' + g.r.IntN(9))}
	for i := 1; i < n; i++ {
		b = append(b, byte('0'+g.r.IntN(10)))
	}
	return string(b)
}

// pgScalar is a random scalar type (key: one that can be in a primary key).
func (g *diffGen) pgScalar(key bool) diffType {
	d := pgDialect{}
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
		return d.quote(fmt.Sprintf("k%d é", n))
	}
	kinds := []func() diffType{
		func() diffType {
			return diffType{sql: "smallint", name: "int2", vals: []string{"0", "-1", "42", "-32768", "32767"}, key: intKey("-32768")}
		},
		func() diffType {
			return diffType{sql: "integer", name: "int4", vals: []string{"0", "7", "-2147483648", "2147483647"}, key: intKey("-2147483648")}
		},
		func() diffType {
			return diffType{sql: "bigint", name: "int8", vals: []string{"0", "9007199254740993", "-9223372036854775808", "9223372036854775807"}, key: intKey("-9223372036854775808")}
		},
		func() diffType {
			return diffType{sql: "oid", name: "oid", vals: []string{"0", "42", "4294967295"}, key: intKey("4294967295")}
		},
		func() diffType {
			return diffType{sql: "numeric", name: "numeric", vals: []string{"0", "'-0.000000000000000000000001'", "'123456789012345678901234567890.0123456789'", "'1.50'"},
				nullable: []string{"'NaN'", "'Infinity'", "'-Infinity'"},
				key:      func(n int) string { return fmt.Sprintf("'%d.5'", n) }}
		},
		func() diffType {
			p := []int{1, 2, 5, 10, 18, 19, 20, 38, 50}[g.r.IntN(9)]
			s := g.r.IntN(p + 1)
			if g.chance(0.15) {
				s = -g.r.IntN(3) // PostgreSQL 15 allows a negative scale
			} else if g.chance(0.1) {
				s = p + 1 + g.r.IntN(2) // and a scale above the precision
			}
			nines := strings.Repeat("9", p)
			t := diffType{sql: fmt.Sprintf("numeric(%d,%d)", p, s), name: "dec", vals: []string{
				pgDecimal(nines, s), pgDecimal("-"+nines, s), "0", pgDecimal(g.digits(p), s), pgDecimal("-"+g.digits(p), s)}, nullable: []string{"'NaN'"}}
			if p-s >= 6 && s >= 0 {
				t.key = func(n int) string { return pgDecimal(fmt.Sprint(n), 0) }
			}
			return t
		},
		func() diffType {
			// Not 1.17549435e-38: the harness's JDK 17 prints it with more
			// digits than the shortest (pkg/debezium/json.go appendJavaFloat).
			return diffType{sql: "real", name: "float4", vals: []string{"0", "'-0'", "1.5", "0.1", "3.4028235e38", "1.1754944e-37", "1e-45", "'NaN'", "'Infinity'", "'-Infinity'"}}
		},
		func() diffType {
			return diffType{sql: "double precision", name: "float8", vals: []string{"0", "'-0'", "0.1", "3.141592653589793", "1.7976931348623157e308", "2.2250738585072014e-308", "4.9e-324", "'NaN'", "'Infinity'", "'-Infinity'"}}
		},
		func() diffType {
			return diffType{sql: "money", name: "money", vals: []string{"0", "'12.34'", "'-92233720368547758.08'", "'92233720368547758.07'"}}
		},
		func() diffType { return diffType{sql: "boolean", name: "bool", vals: []string{"true", "false"}} },
		func() diffType {
			return diffType{sql: "text", name: "text", vals: strVals(d, 0), toast: pgToastText, key: strKey}
		},
		func() diffType {
			n := 1 + g.r.IntN(40)
			t := diffType{sql: fmt.Sprintf("varchar(%d)", n), name: "varchar", vals: strVals(d, n)}
			if n >= 8 {
				t.key = strKey
			}
			return t
		},
		func() diffType {
			return diffType{sql: "varchar", name: "varchar", vals: strVals(d, 0), toast: pgToastText, key: strKey}
		},
		func() diffType {
			n := 1 + g.r.IntN(20)
			t := diffType{sql: fmt.Sprintf("char(%d)", n), name: "bpchar", vals: strVals(d, n)}
			if n >= 8 {
				t.key = strKey
			}
			return t
		},
		func() diffType {
			return diffType{sql: "bytea", name: "bytea", vals: []string{`'\x'`, `'\x00'`, `'\x00ff10'`, `'\xdeadbeef'`, `'\xc328'`},
				toast: `(SELECT string_agg(decode(md5(g::text), 'hex'), '') FROM generate_series(1, 300) g)`,
				key:   func(n int) string { return fmt.Sprintf(`'\x%04x'`, n) }}
		},
		func() diffType {
			return diffType{sql: "date", name: "date", vals: []string{"'2024-02-29'", "'1970-01-01'", "'1969-12-31'", "'0001-01-01'", "'1582-10-15'", "'5874897-12-31'"},
				// date 'infinity' is a deliberate difference (pkg/debezium/doc.go).
				stream: []string{"'4713-01-01 BC'", "'0044-03-15 BC'"}, key: pgDate}
		},
		func() diffType {
			p := g.r.IntN(8) - 1
			sql := "time"
			if p >= 0 {
				sql = fmt.Sprintf("time(%d)", p)
			}
			return diffType{sql: sql, name: "time", vals: []string{"'00:00:00'", "'23:59:59.999999'", "'24:00:00'", "'12:34:56.789'", "'00:00:00.000001'"},
				key: func(n int) string { return fmt.Sprintf("'%02d:%02d:%02d'", n/3600%24, n/60%60, n%60) }}
		},
		func() diffType {
			return diffType{sql: "timetz", name: "timetz", vals: []string{"'00:00:00+1559'", "'23:59:59.999999-1559'", "'12:00:00+05:30'", "'24:00:00+00'"}}
		},
		func() diffType {
			p := g.r.IntN(8) - 1
			sql := "timestamp"
			if p >= 0 {
				sql = fmt.Sprintf("timestamp(%d)", p)
			}
			return diffType{sql: sql, name: "ts", vals: []string{"'2024-03-01 10:00:00.123456'", "'1970-01-01 00:00:00'", "'1969-12-31 23:59:59.999999'",
				"'infinity'", "'-infinity'", "'4713-01-01 00:00:00 BC'", "'0001-01-01 00:00:00'", "'294276-12-31 23:59:59.999999'"},
				key: func(n int) string { return fmt.Sprintf("'2000-01-01 00:00:00'::timestamp + interval '%d seconds'", n) }}
		},
		func() diffType {
			p := g.r.IntN(8) - 1
			sql := "timestamptz"
			if p >= 0 {
				sql = fmt.Sprintf("timestamptz(%d)", p)
			}
			return diffType{sql: sql, name: "tstz", vals: []string{"'2024-03-01 10:00:00.5+02'", "'1970-01-01 00:00:00+00'", "'1969-12-31 23:59:59.999999-01:30'",
				"'294276-12-31 23:59:59.999999+00'", "'infinity'", "'-infinity'", "'4713-01-01 00:00:00+00 BC'", "'2024-03-31 02:30:00 Europe/Berlin'"},
				key: func(n int) string {
					return fmt.Sprintf("'2000-01-01 00:00:00+00'::timestamptz + interval '%d seconds'", n)
				}}
		},
		func() diffType {
			// Beyond ±2^63 µs both saturate. Not more than 2^31 hours
			// ('2562047787:59:59'): Debezium fails its connector on them
			// (docs/postgresql.md), so there is nothing to compare.
			return diffType{sql: "interval", name: "interval", vals: []string{"'0'", "'1 year 2 mons 3 days 04:05:06.789'", "'-1 mons 3 days'",
				"'1 microsecond'", "'596523:14:07'", "'-106751991 days'", "'178000000 years'", "'-178000000 years'", "'2147483647 days'",
				"'-2147483648 days'", "'2147483647:59:59.999999'", "'-2147483647:00:54.775807'"}}
		},
		func() diffType {
			return diffType{sql: "uuid", name: "uuid", vals: []string{"'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"},
				key: func(n int) string { return fmt.Sprintf("'%08x-0000-4000-8000-%012x'", n, n) }}
		},
		func() diffType {
			return diffType{sql: "json", name: "json", vals: []string{"'{}'", "'[]'", "'null'", `'{"a": 1, "b": [true, null, 1.5e300]}'`, `'"\u0000"'`, `'{"é": "✓", "k": "\ud83d\ude00"}'`, `'  {"spaces" :  1}  '`}}
		},
		func() diffType {
			return diffType{sql: "jsonb", name: "jsonb", vals: []string{"'{}'", "'[1, 2.50, 1e-7]'", `'{"b": 1, "a": {"c": null}}'`, `'"str"'`, "'1e1000'", `'{"é": "✓"}'`},
				toast: `(SELECT jsonb_agg(md5(g::text)) FROM generate_series(1, 300) g)`}
		},
		func() diffType {
			return diffType{sql: "xml", name: "xml", vals: []string{"'<a>x</a>'", "'<r/>'", "''", `'<a b="c">é</a>'`, "'plain text'"}}
		},
		func() diffType {
			return diffType{sql: "inet", name: "inet", vals: []string{"'::1'", "'192.168.0.1/24'", "'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128'", "'0.0.0.0'"},
				key: func(n int) string { return fmt.Sprintf("'10.%d.%d.%d'", n>>16&255, n>>8&255, n&255) }}
		},
		func() diffType {
			return diffType{sql: "cidr", name: "cidr", vals: []string{"'10.0.0.0/8'", "'2001:db8::/32'", "'0.0.0.0/0'", "'192.168.1.1/32'"}}
		},
		func() diffType {
			return diffType{sql: "macaddr", name: "macaddr", vals: []string{"'08:00:2b:01:02:03'", "'ff:ff:ff:ff:ff:ff'", "'00:00:00:00:00:00'"}}
		},
		func() diffType {
			return diffType{sql: "macaddr8", name: "macaddr8", vals: []string{"'08:00:2b:01:02:03:04:05'", "'ff:ff:ff:ff:ff:ff:ff:ff'"}}
		},
		func() diffType {
			n := 1 + g.r.IntN(70)
			bits := func(one bool) string {
				b := make([]byte, n)
				for i := range b {
					b[i] = '0'
					if one || g.chance(0.5) {
						b[i] = '1'
					}
				}
				return "B'" + string(b) + "'"
			}
			return diffType{sql: fmt.Sprintf("bit(%d)", n), name: "bit", vals: []string{"B'" + strings.Repeat("0", n) + "'", bits(true), bits(false)}}
		},
		func() diffType {
			n := 1 + g.r.IntN(70)
			if n == 1 || g.chance(0.25) {
				// A boolean for Debezium, as bit(1). Its empty value
				// Debezium writes as null, and its connector stops on
				// one in a NOT NULL column (Tributary writes false).
				return diffType{sql: "varbit(1)", name: "varbit", vals: []string{"B'0'", "B'1'"}, nullable: []string{"B''"}}
			}
			return diffType{sql: fmt.Sprintf("varbit(%d)", n), name: "varbit", vals: []string{"B''", "B'1'", "B'" + strings.Repeat("1", n) + "'", "B'" + strings.Repeat("10", n/2) + "'"}}
		},
		func() diffType {
			return diffType{sql: `"char"`, name: "char1", vals: []string{`'x'`, `'"'`, `'\'`, `''`, `' '`}}
		},
		func() diffType {
			return diffType{sql: "citext", name: "citext", vals: strVals(d, 0), key: strKey}
		},
		func() diffType {
			return diffType{sql: "hstore", name: "hstore", vals: []string{"''", `'a=>1, "b c"=>NULL'`, `'"é"=>"✓", "k"=>""'`}}
		},
		func() diffType {
			return diffType{sql: "ltree", name: "ltree", vals: []string{"''", "'Top.Science'", "'a.b.c_d'"}}
		},
		func() diffType {
			return diffType{sql: "tsvector", name: "tsvector", vals: []string{"''", "'a:1 b:2'", "to_tsvector('simple', 'hello wide world')", `'''quoted'' é'`}}
		},
		func() diffType {
			r := []string{"int4range", "int8range", "numrange", "tsrange", "tstzrange", "daterange"}[g.r.IntN(6)]
			vals := map[string][]string{
				"int4range": {"'[1,10)'", "'empty'", "'(,)'", "'[-2147483648,2147483647)'"},
				"int8range": {"'(9007199254740993,9007199254740999]'", "'empty'", "'[,0)'"},
				"numrange":  {"'[1.5,2.25]'", "'(-Infinity,NaN]'", "'empty'"},
				"tsrange":   {"'[2024-01-01 10:00:00.123456,2024-01-02 00:00:00)'", "'[-infinity,infinity]'"},
				"tstzrange": {"'[2024-01-01 10:00:00+02,2024-01-02 00:00:00+00)'", "'(,2024-06-01 00:00:00.5-03:30)'"},
				"daterange": {"'[2024-02-29,2024-03-05]'", "'[2024-01-01,)'", "'empty'"},
			}[r]
			return diffType{sql: r, name: r, vals: vals}
		},
		func() diffType {
			return diffType{sql: "point", name: "point", vals: []string{"'(1.5,-2.25)'", "'(1e300,-0)'", "'(0,0)'"}}
		},
		func() diffType {
			return diffType{sql: "geometry", name: "geom", vals: []string{"'POINT(1 2)'", "'SRID=4326;POINT(13.4 52.52)'", "'POLYGON EMPTY'", "'SRID=3857;LINESTRING(0 0,1 1)'", "'POINT Z(1 2 3)'"}}
		},
		func() diffType {
			return diffType{sql: "geography", name: "geog", vals: []string{"'POINT(-71.06 42.36)'", "'SRID=4326;LINESTRING(-71.06 42.36,-0.12 51.5)'"}}
		},
	}
	for {
		t := kinds[g.r.IntN(len(kinds))]()
		if !key || t.key != nil {
			return t
		}
	}
}

// pgEnumLabels are enum labels with punctuation.
var pgEnumLabels = []string{"a", "b c", "x,y", "it's", `"q"`, "é", "", "😀", "UPPER", "-", "a=b", "{brace}", `back\slash`, "NULL"}

// pgType is a random column type of table tb: a scalar, an enum, a
// domain over a scalar, or an array.
func (g *diffGen) pgType(tb string, n *int, key bool) diffType {
	*n++
	switch p := g.r.Float64(); {
	case p < 0.08:
		return g.pgEnum(tb, *n)
	case p < 0.16:
		base := g.pgScalar(key)
		name := fmt.Sprintf("%s_d%d", tb, *n)
		base.ddl = append(base.ddl, "CREATE DOMAIN "+name+" AS "+base.sql)
		base.sql, base.name = name, "dom_"+base.name
		return base
	case !key && g.chance(map[bool]float64{false: 0.03, true: 0.15}[g.unknown]):
		return g.pgUnknown()
	case p < 0.3 && !key:
		el := g.pgArrayElement(tb, n)
		t := diffType{sql: el.sql + "[]", name: "arr_" + el.name, ddl: el.ddl, vals: []string{"'{}'"}}
		for i := 0; i < 4; i++ {
			var xs []string
			null := false
			for j := g.r.IntN(4); j >= 0; j-- {
				if g.chance(0.2) {
					xs = append(xs, "NULL")
					null = true
				} else {
					xs = append(xs, g.pick(g.arrayElements(el)))
				}
			}
			v := "ARRAY[" + strings.Join(xs, ", ") + "]::" + t.sql
			if null && el.name == "enum" {
				// A NULL element of an enum array makes the field null
				// on both sides; a NOT NULL one fails both.
				t.nullable = append(t.nullable, v)
			} else {
				t.vals = append(t.vals, v)
			}
		}
		switch el.sql {
		case "text", "varchar":
			t.toast = "(SELECT array_agg(md5(g::text)) FROM generate_series(1, 300) g)"
		case "integer":
			t.toast = "(SELECT array_agg(hashtext(g::text)) FROM generate_series(1, 1200) g)"
		}
		return t
	default:
		return g.pgScalar(key)
	}
}

// arrayElements are the values of el fit for an array: without the dates,
// times and timestamps Debezium converts differently in arrays
// (diffKnown.pgArrayTemporal).
func (g *diffGen) arrayElements(el diffType) []string {
	if !g.known.pgArrayTemporal {
		return el.vals
	}
	var out []string
	for _, v := range el.vals {
		switch el.name {
		case "date", "ts", "tstz":
			if strings.Contains(v, "BC") || strings.Contains(v, "0001-") || strings.Contains(v, "24:00") || strings.Contains(v, "1582-") ||
				strings.Contains(v, "23:59:59.999999") || strings.Contains(v, "infinity") {
				continue
			}
		}
		out = append(out, v)
	}
	return out
}

// pgEnum is a new enum type of 1 to 5 labels with punctuation.
func (g *diffGen) pgEnum(tb string, n int) diffType {
	d := pgDialect{}
	var lits []string
	for _, i := range g.r.Perm(len(pgEnumLabels))[:1+g.r.IntN(5)] {
		lits = append(lits, d.quote(pgEnumLabels[i]))
	}
	name := fmt.Sprintf("%s_e%d", tb, n)
	return diffType{sql: name, name: "enum", vals: lits, ddl: []string{"CREATE TYPE " + name + " AS ENUM (" + strings.Join(lits, ", ") + ")"},
		key: func(i int) string { return lits[i%len(lits)] }, // repeats: never the first key column
	}
}

// pgArrayElement is an element type Debezium publishes arrays of
// (README.md, "Type coverage").
func (g *diffGen) pgArrayElement(tb string, n *int) diffType {
	for {
		t := g.pgScalar(false)
		if g.chance(0.1) {
			*n++
			t = g.pgEnum(tb, *n)
		}
		switch t.name {
		case "time":
			if !g.known.pgArrayTemporal {
				return t
			}
		case "int2", "int4", "int8", "text", "varchar", "numeric", "dec", "float4", "float8", "bool", "date", "tstz", "ts", "uuid", "jsonb", "json", "enum", "bytea", "citext", "inet":
			return t
		}
	}
}

func (pgDialect) table(g *diffGen, i int) *diffTable {
	tb := &diffTable{name: fmt.Sprintf("t%d", i+1)}
	nkey := []int{0, 1, 1, 1, 2, 3}[g.r.IntN(6)]
	n := 0
	tb.cols = g.columns(nkey, func(key bool) diffType { return g.pgType(tb.name, &n, key) })
	tb.nkey = nkey
	// An enum as the only key column repeats: keep it unique with a
	// second column, or replace it.
	if nkey == 1 && tb.cols[0].typ.name == "enum" {
		t := g.pgScalar(true)
		tb.cols[0] = diffColumn{name: "k1_" + t.name, typ: t}
	}
	if nkey > 1 && tb.cols[0].typ.name == "enum" {
		tb.cols[0], tb.cols[1] = tb.cols[1], tb.cols[0]
		if tb.cols[0].typ.name == "enum" {
			t := g.pgScalar(true)
			tb.cols[0] = diffColumn{name: "k1_" + t.name, typ: t}
		}
	}
	for j := nkey; j < len(tb.cols); j++ {
		switch c := &tb.cols[j]; {
		case g.chance(0.04):
			// A serial column: the sequence writes it.
			c.typ = diffType{sql: "bigserial", name: "serial"}
			c.name, c.nullable, c.def, c.omit = fmt.Sprintf("c%d_serial", j), false, "", true
		case g.chance(0.04):
			c.typ = diffType{sql: "integer GENERATED BY DEFAULT AS IDENTITY", name: "identity", vals: []string{"1", "-5"}}
			c.name, c.nullable, c.def = fmt.Sprintf("c%d_identity", j), false, ""
		}
	}
	for j := range tb.cols {
		c := &tb.cols[j]
		if g.known.pgDefaultQuote && strings.Contains(c.def, "''") {
			c.def = ""
		}
	}
	for _, c := range tb.cols {
		tb.ddl = append(tb.ddl, c.typ.ddl...)
	}
	var by string
	var parts []string
	if nkey > 0 && g.chance(0.3) {
		by, parts = g.pgPartition(tb)
	}
	tb.ddl = append(tb.ddl, "CREATE TABLE "+tb.name+" (\n  "+columnsDDL(tb, "PRIMARY KEY")+")"+by)
	tb.ddl = append(tb.ddl, parts...)
	tb.identity = "DEFAULT"
	switch p := g.r.Float64(); {
	case tb.partitioned:
		// A partition's replica identity is its own (ALTER TABLE on the
		// root does not recurse), and its deletes carry it
		// (docs/postgresql.md): FULL on every one, DEFAULT on every one, or
		// FULL on one partition only.
		var alter []string
		switch {
		case p < 0.4:
			tb.identity = "FULL"
			alter = append(alter, tb.name)
			for i := range parts {
				alter = append(alter, fmt.Sprintf("%s_p%d", tb.name, i+1))
			}
		case p < 0.6: // one partition FULL under a DEFAULT root (TestPGPartitionFullUnderDefaultRoot)
			alter = append(alter, fmt.Sprintf("%s_p%d", tb.name, 1+g.r.IntN(len(parts))))
		}
		for _, name := range alter {
			tb.ddl = append(tb.ddl, "ALTER TABLE "+name+" REPLICA IDENTITY FULL")
		}
		return tb
	case nkey == 0 && (p < 0.7 || g.known.pgNoIdentity):
		tb.identity = "FULL"
	case nkey == 0:
		tb.identity = []string{"DEFAULT", "NOTHING"}[g.r.IntN(2)]
		tb.insertOnly = true
	case p < 0.3:
		tb.identity = "FULL"
	case p < 0.35 && !g.known.pgNoIdentity:
		tb.identity = "NOTHING"
		tb.insertOnly = true
	case p < 0.45 && !g.known.pgUsingIndex:
		var k []string
		for _, c := range tb.cols[:nkey] {
			k = append(k, c.name)
		}
		tb.ddl = append(tb.ddl, fmt.Sprintf("CREATE UNIQUE INDEX %s_ri ON %s (%s)", tb.name, tb.name, strings.Join(slicesReverse(k), ", ")))
		tb.identity = "USING INDEX " + tb.name + "_ri"
	}
	if tb.identity != "DEFAULT" {
		tb.ddl = append(tb.ddl, "ALTER TABLE "+tb.name+" REPLICA IDENTITY "+tb.identity)
	}
	return tb
}

// pgPartitionKeys are the key types a table is partitioned by: every key
// type but enums (their values repeat) and domains.
var pgPartitionKeys = map[string]bool{"int2": true, "int4": true, "int8": true, "oid": true, "numeric": true, "dec": true,
	"text": true, "varchar": true, "bpchar": true, "bytea": true, "date": true, "time": true, "ts": true, "tstz": true,
	"uuid": true, "inet": true, "citext": true}

// pgPartition partitions tb by one of its key columns (none: tb stays as it
// is): the PARTITION BY clause and the partitions, two or three, RANGE
// and LIST with a DEFAULT one (RANGE now and then up to MAXVALUE
// instead), so that the key values 0, 1, 2, … (diffType.key) land in each:
// 0 and 1 in the first (with 4, of LIST), 2 to 4 in the second, the rest,
// which inserts and key changes write, in the last. HASH spreads them.
func (g *diffGen) pgPartition(tb *diffTable) (string, []string) {
	var cand []int
	for i, c := range tb.cols[:tb.nkey] {
		if pgPartitionKeys[c.typ.name] {
			cand = append(cand, i)
		}
	}
	if len(cand) == 0 {
		return "", nil
	}
	tb.partitioned, tb.partKey = true, cand[g.r.IntN(len(cand))]
	c := tb.cols[tb.partKey]
	k := c.typ.key
	var bounds []string
	kind := []string{"RANGE", "LIST", "HASH"}[g.r.IntN(3)]
	switch kind {
	case "RANGE":
		bounds = []string{"FROM (MINVALUE) TO (" + k(2) + ")", "FROM (" + k(2) + ") TO (" + k(5) + ")", "DEFAULT"}
		if g.chance(0.5) {
			bounds[2] = "FROM (" + k(5) + ") TO (MAXVALUE)"
		}
	case "LIST":
		bounds = []string{"IN (" + k(0) + ", " + k(1) + ", " + k(4) + ")", "IN (" + k(2) + ", " + k(3) + ")", "DEFAULT"}
	case "HASH":
		m := 2 + g.r.IntN(2)
		for i := 0; i < m; i++ {
			bounds = append(bounds, fmt.Sprintf("WITH (MODULUS %d, REMAINDER %d)", m, i))
		}
	}
	var parts []string
	for i, b := range bounds {
		if b != "DEFAULT" {
			b = "FOR VALUES " + b
		}
		parts = append(parts, fmt.Sprintf("CREATE TABLE %s_p%d PARTITION OF %s %s", tb.name, i+1, tb.name, b))
	}
	g.covered["partitioned by "+kind]++
	return fmt.Sprintf(" PARTITION BY %s (%s)", kind, c.name), parts
}

// pgArrayUnmapped are the arrays of diffKnown.pgArrayUnmapped.
var pgArrayUnmapped = map[string]bool{"money[]": true, "interval[]": true, "xml[]": true, "varbit[]": true}

// pgUnknown is a type Debezium's PostgreSQL connector has no converter
// for (PostgresValueConverter's schemaBuilder knows neither the geometric
// types but point nor tsquery, pg_lsn, the snapshots or the extensions'
// of pgExtensions but citext, hstore, ltree and PostGIS): Tributary
// publishes them as the bytes of PostgreSQL's text form with
// source.include_unknown_types (docs/types.md), and both leave them out
// otherwise. And arrays Debezium leaves out in any case
// (diffKnown.pgArrayUnmapped) and values of more than one dimension
// (diffKnown.pgArrayMultiDim).
func (g *diffGen) pgUnknown() diffType {
	kinds := []diffType{
		{sql: "box", vals: []string{"'((1,2),(3,4))'", "'(0,0),(0,0)'", "'((-1.5,1e300),(2.25,-0))'"}},
		{sql: "circle", vals: []string{"'<(1,2),3>'", "'<(0,0),0.5>'", "'<(-1e-300,1.25),1e10>'"}},
		{sql: "line", vals: []string{"'{1,-1,0}'", "'{0,1,2.5}'", "'[(0,0),(1,1)]'"}},
		{sql: "lseg", vals: []string{"'[(1,2),(3,4)]'", "'[(0,0),(0,0)]'"}},
		{sql: "path", vals: []string{"'[(1,2),(3,4),(5,6)]'", "'((0,0),(1,1),(1,0))'"}},
		{sql: "polygon", vals: []string{"'((0,0),(1,1),(1,0))'", "'((1.5,2.5))'"}},
		{sql: "tsquery", vals: []string{"'a & b'", "'fat:ab & !cat'", `'''quoted'' | é'`, "'x <-> y'"}},
		{sql: "pg_lsn", vals: []string{"'0/0'", "'16/B374D848'", "'FFFFFFFF/FFFFFFFF'"}},
		{sql: "txid_snapshot", vals: []string{"'10:20:10,14,15'", "'1:1:'"}},
		{sql: "pg_snapshot", vals: []string{"'10:20:10,14,15'", "'3:3:'"}},
		{sql: "cube", vals: []string{"'(1,2),(3,4)'", "'(1e300)'", "'(0.5, -1, 2)'"}},
		{sql: "seg", vals: []string{"'5.0 .. 7.0'", "'<5'", "'~6.25'"}},
		{sql: "isbn13", vals: []string{"'978-0-393-04002-9'", "'9780393040029'"}},
		{sql: "money[]", vals: []string{"'{}'", "'{1.50,-2}'", "ARRAY[NULL, 3.25]::money[]"}},
		{sql: "interval[]", vals: []string{"'{}'", `'{"1 day","-01:02:03.5"}'`}},
		{sql: "xml[]", vals: []string{"'{}'", `ARRAY['<a>x</a>'::xml, NULL]`}},
		{sql: "varbit[]", vals: []string{"'{}'", `'{101,""}'`}},
		{sql: "integer[][]", vals: []string{"'{{1,2},{3,4}}'", "'{}'", "'{{NULL,-1}}'"}},
		{sql: "text[][]", vals: []string{`'{{"a","b c"},{"é",NULL}}'`}},
	}
	kinds = slices.DeleteFunc(kinds, func(t diffType) bool {
		return g.known.pgArrayUnmapped && pgArrayUnmapped[t.sql] ||
			g.known.pgArrayMultiDim && strings.HasSuffix(t.sql, "[][]")
	})
	t := kinds[g.r.IntN(len(kinds))]
	t.name = "u_" + strings.NewReplacer("[]", "arr", " ", "").Replace(t.sql)
	t.unknown = true
	return t
}

func slicesReverse(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[len(s)-1-i] = x
	}
	return out
}

// pgSpecial is the round's side table for what Debezium cannot read: NaN
// and ±Infinity in NOT NULL numeric, numeric(p,s) and numeric[] columns,
// which stop Debezium's connector (decimal.handling.mode=precise) and
// which Tributary records as row.skipped and goes on (docs/types.md). A
// second Tributary pipeline captures it alone (in the compared pipeline
// it would move the snapshot's first/last markers); the round checks
// each change against that documented behaviour: a row image holding a
// special value is recorded, with its op and key, every other change is
// published, and nothing else is.
type pgSpecial struct {
	ddl      []string
	snapshot []string
	stream   [][]string
	// published and skipped count the expected "<op><k>" of each change.
	published, skipped map[string]int
}

const pgSpecialTable = "zz_special"

func (g *diffGen) pgSpecial(rows, ops int) *pgSpecial {
	s := &pgSpecial{published: map[string]int{}, skipped: map[string]int{},
		ddl: []string{`CREATE TABLE ` + pgSpecialTable + ` (k integer PRIMARY KEY, a numeric NOT NULL, b numeric(10,2) NOT NULL, c numeric[] NOT NULL)`}}
	cols := [3]struct{ plain, special []string }{
		{[]string{"'1.5'", "'-2'", "0"}, []string{"'NaN'", "'Infinity'", "'-Infinity'"}},
		{[]string{"'1.25'", "'-3.00'"}, []string{"'NaN'"}}, // a constrained numeric holds no infinity
		{[]string{"'{1,2.5}'", "'{}'"}, []string{"'{1,NaN}'", "'{-Infinity}'", "'{NaN,Infinity}'"}},
	}
	image := func() (vals [3]string, special bool) {
		for i, c := range cols {
			vals[i] = g.pick(c.plain)
		}
		if g.chance(0.4) {
			i := g.r.IntN(3)
			vals[i], special = g.pick(cols[i].special), true
		}
		return vals, special
	}
	expect := func(op string, k int, special bool) {
		if special {
			s.skipped[fmt.Sprintf("%s%d", op, k)]++
		} else {
			s.published[fmt.Sprintf("%s%d", op, k)]++
		}
	}
	var live []int
	next := 1
	insert := func(op string) string {
		v, special := image()
		k := next
		next++
		live = append(live, k)
		expect(op, k, special)
		return fmt.Sprintf("INSERT INTO %s VALUES (%d, %s, %s, %s)", pgSpecialTable, k, v[0], v[1], v[2])
	}
	for range rows {
		s.snapshot = append(s.snapshot, insert("r"))
	}
	for range ops {
		var stmt string
		switch {
		case len(live) == 0 || g.chance(0.4):
			stmt = insert("c")
		case g.chance(0.8):
			k := live[g.r.IntN(len(live))]
			v, special := image()
			expect("u", k, special)
			stmt = fmt.Sprintf("UPDATE %s SET a = %s, b = %s, c = %s WHERE k = %d", pgSpecialTable, v[0], v[1], v[2], k)
		default:
			// The old row is the key alone (REPLICA IDENTITY DEFAULT):
			// a delete is published whatever the row held.
			i := g.r.IntN(len(live))
			k := live[i]
			live = slices.Delete(live, i, i+1)
			expect("d", k, false)
			stmt = fmt.Sprintf("DELETE FROM %s WHERE k = %d", pgSpecialTable, k)
		}
		s.stream = append(s.stream, []string{stmt})
	}
	return s
}

// interleave puts s's transactions among the round's at random places,
// in their order.
func (s *pgSpecial) interleave(g *diffGen, w *diffWorkload) { diffInterleave(g, w, s.stream) }

// diffInterleave puts the transactions of stream among w's at random
// places, in their order.
func diffInterleave(g *diffGen, w *diffWorkload, stream [][]string) {
	at := make([]int, len(stream)) // how many of the round's go before each
	for j := range at {
		at[j] = g.r.IntN(len(w.stream) + 1)
	}
	slices.Sort(at)
	out := make([][]string, 0, len(w.stream)+len(stream))
	i := 0
	for j, tx := range stream {
		out = append(append(out, w.stream[i:at[j]]...), tx)
		i = at[j]
	}
	w.stream = append(out, w.stream[i:]...)
}

// beside runs the side pipeline of s on e's database: started before the
// stream, ready once its snapshot is read, checked after the round.
func (s *pgSpecial) beside(e *itest.Env) *diffBeside {
	side := *e
	side.Name, side.Prefix = e.Name+"_nan", e.Prefix+"-nan"
	cfg := side.WritePipeline(itest.PipelineConfig{Source: "  tables: [public." + pgSpecialTable + "]\n", File: "special.yaml"})
	topic := side.Prefix + ".public." + pgSpecialTable
	count := func(m map[string]int, op string) (n int) {
		for k, c := range m {
			if op == "" || strings.HasPrefix(k, op) {
				n += c
			}
		}
		return n
	}
	var p *itest.Proc
	b := &diffBeside{}
	b.start = func(t *testing.T) {
		t.Cleanup(func() {
			if t.Failed() && p != nil {
				t.Logf("the side pipeline (%s) output:\n%s", pgSpecialTable, p.Out)
			}
		})
		p = side.Start("run", "--config", cfg)
	}
	b.ready = func(t *testing.T) bool {
		if p.Exited() {
			t.Fatalf("the side pipeline (%s) exited:\n%s", pgSpecialTable, p.Out)
		}
		return int(itest.TopicEnd(topic)) >= count(s.published, "r") && len(side.SkippedLines(t)) >= count(s.skipped, "r") &&
			backfilled(p.Out.String(), "public."+pgSpecialTable)
	}
	b.check = func(t *testing.T) {
		itest.WaitOrDump(t, p, 120*time.Second, "the side pipeline's changes", func() bool {
			return int(itest.TopicEnd(topic)) >= count(s.published, "") && len(side.SkippedLines(t)) >= count(s.skipped, "")
		})
		if code := p.Stop(t); code != 0 {
			t.Errorf("the side pipeline (%s): exit %d after SIGTERM", pgSpecialTable, code)
		}
		published, skipped := map[string]int{}, map[string]int{}
		for _, m := range itest.ReadTopicIfAny(t, topic) {
			if m.Value != nil {
				published[fmt.Sprint(m.Payload()["op"], m.Key["payload"].(map[string]any)["k"])]++
			}
		}
		for _, rs := range itest.ReadSkipped(t, &side) {
			skipped[fmt.Sprint(rs.Extra["op"], rs.PrimaryKey["k"])]++
			if !strings.Contains(rs.Reason, `column "`) || !strings.Contains(rs.Reason, "decimal_handling") {
				t.Errorf("%s: row.skipped reason %q names neither the column nor decimal_handling", pgSpecialTable, rs.Reason)
			}
		}
		for _, c := range []struct {
			what      string
			got, want map[string]int
		}{{"published", published, s.published}, {"recorded as row.skipped", skipped, s.skipped}} {
			if !maps.Equal(c.got, c.want) {
				t.Errorf("%s (NOT NULL numerics holding NaN/±Infinity, Tributary alone): changes %s %v, want %v (documented in docs/types.md)",
					pgSpecialTable, c.what, c.got, c.want)
			}
		}
		t.Logf("%s: %d changes published and %d recorded as row.skipped, as documented", pgSpecialTable, count(published, ""), count(skipped, ""))
	}
	return b
}
