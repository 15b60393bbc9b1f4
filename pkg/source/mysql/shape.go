package mysql

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// A binlog row must be decoded with the table's shape at the row's
// position, which information_schema (the shape now) does not give when
// the pipeline replays binlog written before a schema change. The table
// map event in front of every rows event carries the column types; with
// binlog_row_metadata = FULL (MySQL ≥ 8.0.1, MariaDB ≥ 10.5) it also
// carries the names, signedness, character sets, ENUM/SET values and the
// primary key, enough to rebuild the shape. shapeFor compares that logged
// shape with the catalog's: equal, the catalog's table (with its column
// defaults, which no event carries) is used; different, a table built from
// the event. Without the names a difference in types is detected and
// refused, never guessed.

// errShapeUnknown marks a row whose shape cannot be reconstructed.
var errShapeUnknown = errors.New("binlog row shape unknown")

// shapeFor returns the table to decode a rows event of t with.
func (st *streamer) shapeFor(t *table, tm *replication.TableMapEvent, at string) (*table, error) {
	logged := loggedColumns(tm, st.src.flavor, st.src.collations)
	full := len(tm.ColumnName) == int(tm.ColumnCount)
	if full && sameColumns(logged, t.cols, true) {
		return t, nil
	}
	if !full {
		if len(logged) == len(t.cols) && sameColumns(logged, t.cols, false) {
			return t, nil
		}
		return nil, fmt.Errorf("%s at %s: the binlog row has %d columns (%s), the table has %d now (%s): its shape changed after this row was written, and the server does not log column names with rows (binlog_row_metadata is not FULL), so the row cannot be decoded without guessing; set binlog_row_metadata = FULL (SET GLOBAL and the server configuration; on RDS/Aurora, the DB parameter group) so that later changes decode, and backfill again from now: %w: %w",
			t.id(), at, len(logged), typeList(logged), len(t.cols), typeList(t.cols), errShapeUnknown, source.ErrResnapshotRequired)
	}
	// A past shape: rebuild it from the event, once per distinct shape so
	// that its change.Table stays one value (schemas are cached by it).
	sig := t.id() + "\x00" + signature(logged)
	if h := st.history[sig]; h != nil {
		return h, nil
	}
	h := &table{db: t.db, name: t.name, mariadb: t.mariadb}
	for _, c := range logged {
		c, dflt := t.known(c)
		h.cols, h.dflts = append(h.cols, c), append(h.dflts, dflt)
	}
	if len(tm.PrimaryKey) > 0 {
		for _, k := range tm.PrimaryKey {
			h.key = append(h.key, int(k))
		}
	} else {
		for _, k := range t.key { // the key columns by name, if they are still there
			for j := range h.cols {
				if h.cols[j].name == t.cols[k].name {
					h.key = append(h.key, j)
				}
			}
		}
	}
	h.t = &change.Table{ID: t.t.ID, Key: h.key, Version: t.t.Version}
	for i, c := range h.cols {
		h.t.Columns = append(h.t.Columns, change.Column{Name: c.name, Type: c.typ, Optional: c.nullable, Default: h.dflts[i]})
	}
	if st.history == nil {
		st.history = map[string]*table{}
	}
	st.history[sig] = h
	st.src.log.Info("decoding binlog rows with the shape they were written under (binlog_row_metadata = FULL)",
		"table", t.id(), "at", at, "columns", typeList(h.cols), "current", typeList(t.cols))
	return h, nil
}

// known returns the catalog's column equal to logged, which knows more
// (FLOAT(M,D), the default), and its default: from the current shape, else
// from the newest earlier shape that had it. The binlog logs no defaults,
// and a stream that lags re-reads a catalog that may already be past a
// later DDL; the shapes read before it still hold the column as it was.
// Without any, the logged column and no default.
func (t *table) known(logged column) (column, *change.Value) {
	for j := range t.cols {
		if sameColumns([]column{logged}, t.cols[j:j+1], true) {
			return t.cols[j], t.dflts[j]
		}
	}
	for _, k := range t.earlier {
		if sameColumns([]column{logged}, []column{k.column}, true) {
			return k.column, k.dflt
		}
	}
	return logged, nil
}

// loggedColumns reads the columns a table map event describes. Names,
// signedness, character sets and ENUM/SET values are there only with
// binlog_row_metadata = FULL; without them names are "" and text and
// binary columns are told apart only by the catalog. charsets maps the
// server's collation ids to character sets; ENUM/SET values, logged in
// the column's character set, are converted to UTF-8 as the catalog
// writes them.
func loggedColumns(tm *replication.TableMapEvent, flavor string, charsets map[uint64]string) []column {
	names := tm.ColumnNameString()
	unsigned := unsignedMap(tm, flavor)
	collations, enumCollations := tm.CollationMap(), tm.EnumSetCollationMap()
	enums, sets := tm.EnumStrValueMap(), tm.SetStrValueMap()
	charset := func(coll uint64) string {
		if cs, ok := charsets[coll]; ok {
			return cs
		}
		return unknownCollation + strconv.FormatUint(coll, 10) // refused when decoded, unless the catalog's column stands
	}
	cols := make([]column, tm.ColumnCount)
	for i := range cols {
		c := &cols[i]
		if i < len(names) {
			c.name = names[i]
		}
		c.precision, c.scale, c.octets = -1, -1, -1
		if ok, null := tm.Nullable(i); ok {
			c.nullable = null
		}
		binary := false
		if coll, ok := collations[i]; ok {
			if coll == 63 {
				binary = true
			} else {
				c.charset = charset(coll)
			}
		}
		if coll, ok := enumCollations[i]; ok {
			c.charset = charset(coll)
		}
		meta := tm.ColumnMeta[i]
		switch typ := tm.ColumnType[i]; typ {
		case gomysql.MYSQL_TYPE_TINY:
			c.dataType = "tinyint"
		case gomysql.MYSQL_TYPE_SHORT:
			c.dataType = "smallint"
		case gomysql.MYSQL_TYPE_INT24:
			c.dataType = "mediumint"
		case gomysql.MYSQL_TYPE_LONG:
			c.dataType = "int"
		case gomysql.MYSQL_TYPE_LONGLONG:
			c.dataType = "bigint"
		case gomysql.MYSQL_TYPE_NEWDECIMAL:
			c.dataType, c.precision, c.scale = "decimal", int(meta>>8), int(meta&0xff)
		case gomysql.MYSQL_TYPE_FLOAT:
			c.dataType = "float"
		case gomysql.MYSQL_TYPE_DOUBLE:
			c.dataType = "double"
		case gomysql.MYSQL_TYPE_BIT:
			c.dataType, c.precision = "bit", int(meta>>8)*8+int(meta&0xff)
		case gomysql.MYSQL_TYPE_DATE, gomysql.MYSQL_TYPE_NEWDATE:
			c.dataType = "date"
		case gomysql.MYSQL_TYPE_TIME, gomysql.MYSQL_TYPE_TIME2:
			c.dataType, c.fsp = "time", int(meta)
		case gomysql.MYSQL_TYPE_DATETIME, gomysql.MYSQL_TYPE_DATETIME2:
			c.dataType, c.fsp = "datetime", int(meta)
		case gomysql.MYSQL_TYPE_TIMESTAMP, gomysql.MYSQL_TYPE_TIMESTAMP2:
			c.dataType, c.fsp = "timestamp", int(meta)
		case gomysql.MYSQL_TYPE_YEAR:
			c.dataType = "year"
		case gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_VAR_STRING:
			c.dataType = pick(binary, "varbinary", "varchar")
		case gomysql.MYSQL_TYPE_STRING:
			switch rt := byte(meta >> 8); rt {
			case gomysql.MYSQL_TYPE_ENUM:
				c.dataType = "enum"
			case gomysql.MYSQL_TYPE_SET:
				c.dataType = "set"
			default:
				// CHAR(n) / BINARY(n): the length's two high bits hide in
				// the real type byte.
				n := int(meta&0xff) | int((rt&0x30)^0x30)<<4
				c.dataType = pick(binary, "binary", "char")
				if binary {
					c.octets = n
				}
			}
		case gomysql.MYSQL_TYPE_BLOB:
			sizes := []string{"tiny", "", "medium", "long"}
			size := ""
			if meta >= 1 && meta <= 4 {
				size = sizes[meta-1]
			}
			c.dataType = size + pick(binary, "blob", "text")
		case gomysql.MYSQL_TYPE_JSON:
			c.dataType = "json"
		case gomysql.MYSQL_TYPE_GEOMETRY:
			c.dataType = "geometry"
		default:
			c.dataType = fmt.Sprintf("binlog type %d", typ)
		}
		c.columnType = c.dataType
		if unsigned[i] && c.dataType != "year" { // MariaDB's YEAR is an unsigned TINYINT inside
			c.columnType += " unsigned"
		}
		c.typ = columnType(c)
		if v, ok := enums[i]; ok {
			c.members = v
		}
		if v, ok := sets[i]; ok {
			c.members = v
		}
		if c.members != nil && c.text != nil {
			for j, m := range c.members {
				if b, err := c.text.decode([]byte(m)); err == nil {
					c.members[j] = string(b)
				}
			}
		}
		if c.members != nil {
			c.typ.Values = allowed(c.members)
		}
	}
	return cols
}

// unsignedMap reads the signedness bitmap, one bit per numeric column.
// Which columns are numeric differs: MariaDB counts YEAR (its Field_year
// is an integer field), MySQL does not; go-mysql's UnsignedMap follows
// MySQL, which shifts every MariaDB column after a YEAR by one.
func unsignedMap(tm *replication.TableMapEvent, flavor string) map[int]bool {
	m := map[int]bool{}
	bit := 0
	for i, typ := range tm.ColumnType {
		switch typ {
		case gomysql.MYSQL_TYPE_TINY, gomysql.MYSQL_TYPE_SHORT, gomysql.MYSQL_TYPE_INT24, gomysql.MYSQL_TYPE_LONG,
			gomysql.MYSQL_TYPE_LONGLONG, gomysql.MYSQL_TYPE_NEWDECIMAL, gomysql.MYSQL_TYPE_DECIMAL,
			gomysql.MYSQL_TYPE_FLOAT, gomysql.MYSQL_TYPE_DOUBLE:
		case gomysql.MYSQL_TYPE_YEAR:
			if flavor != flavorMariaDB {
				continue
			}
		default:
			continue
		}
		if bit/8 < len(tm.SignednessBitmap) {
			m[i] = tm.SignednessBitmap[bit/8]&(0x80>>(bit%8)) != 0
		}
		bit++
	}
	return m
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

// sameColumns tells whether rows logged with columns a decode, and are
// described, as with the catalog's columns b. full: a carries names and
// the rest of the optional metadata; without it, only what the type bytes
// say is compared (text and binary strings are not told apart there).
func sameColumns(a, b []column, full bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if !full {
			if fy := family(y.dataType); fy != "" && family(x.dataType) != fy {
				return false
			}
			continue
		}
		if x.name != y.name {
			return false
		}
		if family(y.dataType) == "" {
			// A type the table map cannot name (MariaDB UUID, INET6…):
			// the catalog's column stands, if the name matches.
			continue
		}
		if x.dataType != y.dataType || x.unsigned() != y.unsigned() || x.nullable != y.nullable {
			return false
		}
		switch x.dataType {
		case "decimal":
			if x.precision != y.precision || x.scale != y.scale {
				return false
			}
		case "bit":
			if x.precision != y.precision {
				return false
			}
		case "time", "datetime", "timestamp":
			if x.fsp != y.fsp {
				return false
			}
		case "binary":
			if x.octets != y.octets {
				return false
			}
		case "enum", "set":
			if !slices.Equal(x.members, y.members) {
				return false
			}
		}
		if x.typ.Kind == change.KindString && x.charset != y.charset && !strings.HasPrefix(x.charset, unknownCollation) && !strings.HasPrefix(y.charset, unknownCollation) {
			return false
		}
	}
	return true
}

// unknownCollation starts the charset of a logged column whose collation
// id the server's COLLATIONS did not list: it matches any catalog column
// (the catalog's charset then stands), and has no converter otherwise.
const unknownCollation = "of collation "

// family is what the binlog's type byte alone tells of a data type.
func family(dataType string) string {
	switch dataType {
	case "varchar", "varbinary":
		return "varstring"
	case "char", "binary":
		return "string"
	case "tinytext", "tinyblob", "text", "blob", "mediumtext", "mediumblob", "longtext", "longblob":
		return "blob"
	case "integer":
		return "int"
	case "numeric":
		return "decimal"
	case "real", "double precision":
		return "double"
	case "tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "float", "double", "bit",
		"date", "time", "datetime", "timestamp", "year", "enum", "set", "json", "geometry":
		return dataType
	}
	return "" // not a type the binlog's type byte names
}

func typeList(cols []column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = strings.TrimSpace(c.name + " " + c.columnType)
	}
	return strings.Join(parts, ", ")
}

func signature(cols []column) string {
	var b strings.Builder
	for _, c := range cols {
		fmt.Fprintf(&b, "%s|%s|%s|%v|%d|%d|%d|%d|%s|%q;", c.name, c.dataType, c.columnType, c.nullable, c.precision, c.scale, c.fsp, c.octets, c.charset, c.members)
	}
	return b.String()
}
