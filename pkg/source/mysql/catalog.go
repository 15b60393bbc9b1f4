package mysql

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// table is one captured table and its current shape.
type table struct {
	db, name string
	mariadb  bool // the server is MariaDB: information_schema quotes default literals
	cols     []column
	dflts    []*change.Value // the columns' defaults (change.Column.Default)
	key      []int           // indexes into cols of the primary key, in key order
	t        *change.Table
	// earlier holds the columns of the shapes describe read before the
	// current one, newest first, with their defaults: a past shape takes
	// its defaults from there when the catalog has moved on (shapeFor).
	earlier []knownColumn
}

// knownColumn is a column of an earlier shape with its default.
type knownColumn struct {
	column
	dflt *change.Value
}

// maxEarlier bounds table.earlier.
const maxEarlier = 512

func (t *table) id() string { return t.db + "." + t.name }

// quoted returns `db`.`name`.
func (t *table) quoted() string { return quoteIdent(t.db) + "." + quoteIdent(t.name) }

// column is what information_schema says about one column.
type column struct {
	name       string
	dataType   string // DATA_TYPE, lower case: "int", "varchar", ...
	columnType string // COLUMN_TYPE: "int(10) unsigned", "enum('a','b')", ...
	nullable   bool
	precision  int    // NUMERIC_PRECISION, or -1
	scale      int    // NUMERIC_SCALE, or -1
	fsp        int    // DATETIME_PRECISION, or 0
	charset    string // CHARACTER_SET_NAME of text columns, lower case; "" otherwise
	octets     int    // CHARACTER_OCTET_LENGTH (BINARY(n): n), or -1
	typ        change.Type
	// text converts the column's text (charset) to UTF-8; nil when it
	// has no character set, or one without a converter (charset.go).
	text *charsetDecoder
	// members are an ENUM's or SET's members in declaration order (the
	// binlog holds an ENUM's 1-based index, a SET's bitmap). A list: a
	// member may hold a comma; typ.Values is Debezium's "allowed"
	// (allowed).
	members []string
	// dfltRaw and extra are COLUMN_DEFAULT (nil: SQL NULL) and EXTRA as
	// information_schema writes them, kept for the schema history
	// (history.go), which rebuilds the default from them.
	dfltRaw []byte
	extra   string
}

func (c *column) unsigned() bool { return strings.Contains(c.columnType, "unsigned") }

// systemDBs are never captured.
var systemDBs = map[string]bool{"mysql": true, "information_schema": true, "performance_schema": true, "sys": true}

// selectTables lists the tables to capture: source.tables ("db.table"), or
// every base table with a primary key in the URL's database (every
// non-system database when the URL names none).
func (s *Source) selectTables(conn *client.Conn) ([]*table, error) {
	if db := s.conn.Database; db != "" {
		r, err := conn.Execute("SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = " + quoteString(db))
		if err != nil {
			return nil, fmt.Errorf("look up database %q: %w", db, err)
		}
		if len(r.Values) == 0 {
			return nil, fmt.Errorf("source.url: database %q does not exist on the server at %s: create it, or name an existing database in the URL", db, s.conn.Addr())
		}
	}
	// Two flat queries limited to the schemas that can hold a captured
	// table, not one with a correlated EXISTS over information_schema: that
	// re-filled TABLE_CONSTRAINTS (opening every table of the server) once
	// per table, took minutes on a busy server, ran on after its client was
	// killed, and MariaDB 10.11 crashed with signal 11 in
	// Create_tmp_table::cleanup_on_failure when such a connection ended
	// (seen in the 60-minute soak, which SIGKILLs Tributary every few seconds).
	// KEY_COLUMN_USAGE, not TABLE_CONSTRAINTS: MariaDB's TABLE_CONSTRAINTS
	// leaves out the tables a user reads by column privileges or through
	// a database pattern (GRANT SELECT ON `shop\_%`.*), which then had "no
	// primary key" and were not captured, while every check said ok.
	keyed, err := conn.Execute(`SELECT DISTINCT t.TABLE_SCHEMA, t.TABLE_NAME FROM information_schema.KEY_COLUMN_USAGE t WHERE t.CONSTRAINT_NAME = 'PRIMARY'` + s.schemaFilter())
	if err != nil {
		return nil, fmt.Errorf("list primary keys: %w", err)
	}
	hasKey := map[string]bool{}
	for i := range keyed.Values {
		db, _ := keyed.GetString(i, 0)
		name, _ := keyed.GetString(i, 1)
		hasKey[db+"."+name] = true
	}
	r, err := conn.Execute(`SELECT t.TABLE_SCHEMA, t.TABLE_NAME FROM information_schema.TABLES t WHERE t.TABLE_TYPE = 'BASE TABLE'` + s.schemaFilter())
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	found := map[string]bool{}
	inDB := map[string]int{} // base tables per database, for describeAll
	var tables []*table
	var noKey []string // tables in scope without a primary key, for nothingToCapture
	for i := range r.Values {
		db, _ := r.GetString(i, 0)
		name, _ := r.GetString(i, 1)
		db, name = strings.Clone(db), strings.Clone(name)
		id := db + "." + name
		found[id] = true
		inDB[db]++
		if !s.wants(db, name) {
			continue
		}
		if !s.sel.Listed() && !hasKey[id] {
			noKey = append(noKey, id)
			continue
		}
		tables = append(tables, &table{db: db, name: name, mariadb: s.flavor == flavorMariaDB})
	}
	var missing []string
	for _, t := range s.sel.PlainNames() {
		if !found[t] {
			missing = append(missing, t)
		}
	}
	var ids []string
	for _, t := range tables {
		ids = append(ids, t.id())
	}
	for _, p := range s.sel.Unmatched(ids) {
		s.log.Warn("source.tables: the regular expression matches no table; tables that match it are captured from their first row when they are created", "pattern", p)
	}
	if len(missing) > 0 {
		// Like Debezium's include list: an entry that matches nothing is
		// not fatal (the table may have been dropped or renamed, or not be
		// created yet); it is captured from its first row if it appears.
		s.log.Warn("source.tables lists tables that do not exist (dropped or renamed?); they are captured from their first row if they are created",
			"missing", strings.Join(missing, ", "))
	}
	if len(tables) == 0 {
		return nil, s.nothingToCapture(conn, missing, noKey)
	}
	if len(noKey) > 0 {
		s.log.Warn("tables without a primary key are not captured; list them in source.tables to capture them (with null message keys)",
			"tables", strings.Join(noKey, ", "))
	}
	sort.Slice(tables, func(i, j int) bool { return tables[i].id() < tables[j].id() })
	gone, err := describeAll(conn, tables, inDB)
	if err != nil {
		return nil, err
	}
	if len(gone) > 0 {
		return nil, fmt.Errorf("describe %s: table not found", gone[0].id())
	}
	var unconvertible []string
	for _, t := range tables {
		unconvertible = append(unconvertible, t.unconvertible()...)
		s.tables[t.id()] = t
		if len(t.key) == 0 {
			s.log.Info("capturing a table without a primary key: its messages have a null key and full before images", "table", t.id())
		}
	}
	if len(unconvertible) > 0 {
		return nil, fmt.Errorf("%w: the binlog carries text in its column's character set, and Tributary has no converter to UTF-8 for %s; convert the column (ALTER TABLE … MODIFY … CHARACTER SET utf8mb4) or leave the table out of source.tables",
			ErrPrerequisite, strings.Join(unconvertible, "; "))
	}
	if s.collations == nil {
		if s.collations, err = collations(conn); err != nil {
			return nil, err
		}
	}
	return tables, nil
}

// nothingToCapture is the error of an empty captured set, saying why:
// the listed tables do not exist, the tables have no primary key, or the
// user sees none (information_schema shows a user only the tables it
// has a privilege on; a role counts only as the user's default role).
func (s *Source) nothingToCapture(conn *client.Conn, missing, noKey []string) error {
	user := quoteString(s.conn.User)
	var why []string
	switch {
	case len(missing) > 0:
		why = append(why, "none of source.tables exists or is visible to "+user+": "+strings.Join(missing, ", "))
	case len(noKey) > 0:
		sort.Strings(noKey)
		for _, id := range noKey {
			why = append(why, id+" has no primary key (list it in source.tables to capture it without one)")
		}
	case s.conn.Database != "":
		why = append(why, fmt.Sprintf("%s sees no table in database %s", user, s.conn.Database))
	default:
		why = append(why, user+" sees no table outside the system databases")
	}
	scope := "<database>"
	if s.conn.Database != "" {
		scope = quoteIdent(s.conn.Database)
	}
	fix := fmt.Sprintf("GRANT SELECT ON %s.* TO %s (or on each table); privileges of a role count only when it is the user's default role", scope, user)
	if r, err := conn.Execute("SELECT ROLE_NAME FROM information_schema.APPLICABLE_ROLES WHERE IS_DEFAULT = 'NO'"); err == nil && len(r.Values) > 0 {
		role, _ := r.GetString(0, 0)
		fix += fmt.Sprintf(" (the user has role %s, which is not its default role: if the role holds the grant, SET DEFAULT ROLE %s FOR %s)", quoteIdent(role), quoteIdent(role), user)
	}
	return fmt.Errorf("%w: nothing to capture: %s; %s. docs/mysql.md lists the privileges", ErrPrerequisite, strings.Join(why, ", "), fix)
}

// unconvertible lists t's columns whose character set has no converter
// (charset.go), as "table db.t column c (charset x)".
func (t *table) unconvertible() []string {
	var out []string
	for _, c := range t.cols {
		if c.charset != "" && c.charset != "binary" && c.text == nil {
			out = append(out, fmt.Sprintf("table %s column %s (character set %s)", t.id(), c.name, c.charset))
		}
	}
	return out
}

// collations maps the server's collation ids to their character sets.
func collations(conn *client.Conn) (map[uint64]string, error) {
	r, err := conn.Execute("SELECT ID, LOWER(CHARACTER_SET_NAME) FROM information_schema.COLLATIONS")
	if err != nil {
		return nil, fmt.Errorf("list collations: %w", err)
	}
	m := make(map[uint64]string, len(r.Values))
	for i := range r.Values {
		id, _ := r.GetUint(i, 0)
		cs, _ := r.GetString(i, 1)
		m[id] = strings.Clone(cs)
	}
	return m, nil
}

// describe (re)reads t's columns and primary key from information_schema
// and makes a new change.Table when the shape differs from prev.
func describe(conn *client.Conn, t *table, prev *change.Table) error {
	shapes, err := readShapes(conn, fmt.Sprintf("TABLE_SCHEMA = %s AND TABLE_NAME = %s", quoteString(t.db), quoteString(t.name)))
	if err != nil {
		return fmt.Errorf("describe %s: %w", t.id(), err)
	}
	sh := shapes[tableName{t.db, t.name}]
	if sh == nil {
		return fmt.Errorf("describe %s: table not found", t.id())
	}
	t.describeAs(sh, prev)
	return nil
}

// describeAll describes every table of ts, all new. The tables of a
// database of which a fair share is described are read in two queries for
// the database whatever their number (a start capturing 10,000 tables
// spent seconds in two round trips per table); those of a database of
// which only a small share is described are read one by one, since
// information_schema reads every table of the database for a query that
// names only the database (ten tables captured of a database of 10,000
// read all 10,000, and held their columns). tablesIn counts the base
// tables of each database of ts (nil: ts holds them all). The tables
// information_schema no longer has (dropped since they were listed) are
// returned, not described.
func describeAll(conn *client.Conn, ts []*table, tablesIn map[string]int) (gone []*table, err error) {
	of := map[string]int{}
	for _, t := range ts {
		of[t.db]++
	}
	whole := func(db string) bool {
		return of[db] > 1 && (tablesIn == nil || of[db]*describeShare >= tablesIn[db])
	}
	shapes := map[tableName]*shape{}
	for db := range of {
		if !whole(db) {
			continue
		}
		// One database at a time: information_schema opens only the
		// tables of the database an equality names (an IN list opens
		// every database's).
		in, err := readShapes(conn, "TABLE_SCHEMA = "+quoteString(db))
		if err != nil {
			return nil, fmt.Errorf("describe the tables of %s: %w", db, err)
		}
		maps.Copy(shapes, in)
	}
	for _, t := range ts {
		if !whole(t.db) {
			if err := describe(conn, t, nil); err != nil {
				if !strings.Contains(err.Error(), "table not found") {
					return nil, err
				}
				gone = append(gone, t)
			}
			continue
		}
		if sh := shapes[tableName{t.db, t.name}]; sh != nil {
			t.describeAs(sh, nil)
		} else {
			gone = append(gone, t)
		}
	}
	return gone, nil
}

// describeShare: describeAll reads a whole database when at least one in
// describeShare of its tables is described; below that, reading the
// tables it does not describe costs more than a round trip per table it
// does.
const describeShare = 16

// shape is what information_schema says of a table: its columns in order,
// their defaults as written there, and its primary key's column names.
type shape struct {
	cols  []column
	dflts [][]byte // nil: SQL NULL
	key   []string
}

// readShapes reads the columns and primary keys of the tables that where
// (a condition on information_schema's TABLE_SCHEMA and TABLE_NAME) selects.
func readShapes(conn *client.Conn, where string) (map[tableName]*shape, error) {
	shapes := map[tableName]*shape{}
	r, err := conn.Execute(`SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, LOWER(DATA_TYPE), COLUMN_TYPE, IS_NULLABLE,
  IFNULL(NUMERIC_PRECISION, -1), IFNULL(NUMERIC_SCALE, -1), IFNULL(DATETIME_PRECISION, 0), COLUMN_KEY,
  IFNULL(LOWER(CHARACTER_SET_NAME), ''), IFNULL(CHARACTER_OCTET_LENGTH, -1), COLUMN_DEFAULT, EXTRA
FROM information_schema.COLUMNS WHERE ` + where + ` ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`)
	if err != nil {
		return nil, err
	}
	for i := range r.Values {
		str := func(j int) string { v, _ := r.GetString(i, j); return strings.Clone(v) }
		num := func(j int) int { v, _ := r.GetInt(i, j); return int(v) }
		n := tableName{str(0), str(1)}
		sh := shapes[n]
		if sh == nil {
			sh = &shape{}
			shapes[n] = sh
		}
		var c column
		c.name, c.dataType, c.columnType = str(2), str(3), lowerType(str(4))
		c.nullable = str(5) == "YES"
		c.precision, c.scale, c.fsp = num(6), num(7), num(8)
		c.charset, c.octets = str(10), num(11)
		c.typ = columnType(&c)
		var dflt []byte
		if r.Values[i][12].Type != gomysql.FieldValueTypeNull {
			dflt = []byte(str(12))
		}
		c.dfltRaw, c.extra = dflt, str(13)
		sh.cols, sh.dflts = append(sh.cols, c), append(sh.dflts, dflt)
	}
	r, err = conn.Execute(`SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
WHERE ` + where + ` AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`)
	if err != nil {
		return nil, fmt.Errorf("primary keys: %w", err)
	}
	for i := range r.Values {
		str := func(j int) string { v, _ := r.GetString(i, j); return strings.Clone(v) }
		if sh := shapes[tableName{str(0), str(1)}]; sh != nil {
			sh.key = append(sh.key, str(2))
		}
	}
	return shapes, nil
}

// describeAs takes sh as t's shape and makes a new change.Table when it
// differs from prev.
func (t *table) describeAs(sh *shape, prev *change.Table) {
	t.remember()
	t.cols, t.dflts = sh.cols, make([]*change.Value, len(sh.cols))
	for i := range t.cols {
		t.dflts[i] = columnDefault(&t.cols[i], sh.dflts[i], t.cols[i].extra, t.mariadb)
	}
	t.key = t.key[:0:0]
	for _, name := range sh.key {
		for j := range t.cols {
			if t.cols[j].name == name {
				t.key = append(t.key, j)
			}
		}
	}
	ct := &change.Table{ID: change.TableID{DB: t.db, Name: t.name}, Key: t.key}
	for i, c := range t.cols {
		ct.Columns = append(ct.Columns, change.Column{Name: c.name, Type: c.typ, Optional: c.nullable, Default: t.dflts[i]})
	}
	if prev != nil && sameShape(prev, ct) {
		t.t = prev
		return
	}
	if prev != nil {
		ct.Version = prev.Version + 1
	}
	t.t = ct
}

// remember keeps t's current columns in t.earlier before a re-read. An
// older entry of the same column (alike both ways, so that it matches
// exactly what the newer one matches) gives way to the newer one, which
// lookups take first anyway: re-reads of an unchanged shape do not fill
// the bound.
func (t *table) remember() {
	if len(t.cols) == 0 {
		return
	}
	known := make([]knownColumn, 0, len(t.cols)+len(t.earlier))
	for i, c := range t.cols {
		known = append(known, knownColumn{c, t.dflts[i]})
	}
	for _, k := range t.earlier {
		alike := func(c column) bool {
			a, b := []column{c}, []column{k.column}
			return sameColumns(a, b, true) && sameColumns(b, a, true)
		}
		if !slices.ContainsFunc(t.cols, alike) {
			known = append(known, k)
		}
	}
	t.earlier = known[:min(len(known), maxEarlier)]
}

func sameShape(a, b *change.Table) bool {
	if len(a.Columns) != len(b.Columns) || len(a.Key) != len(b.Key) {
		return false
	}
	for i := range a.Columns {
		x, y := a.Columns[i], b.Columns[i]
		if !sameValue(x.Default, y.Default) {
			return false
		}
		x.Default, y.Default = nil, nil
		if x != y {
			return false
		}
	}
	for i := range a.Key {
		if a.Key[i] != b.Key[i] {
			return false
		}
	}
	return true
}

// columnType maps a MySQL column to the neutral type (and sets c.text from
// c.charset, and an ENUM's or SET's c.members from its COLUMN_TYPE),
// following Debezium's
// defaults (BinlogValueConverters, time.precision.mode=adaptive_time_microseconds,
// decimal.handling.mode=precise, bigint.unsigned.handling.mode=long).
// Types without a mapping (MySQL 9's and MariaDB 11.7's VECTOR) get KindUnknown: left out of messages
// and reported, or published as bytes with source.include_unknown_types.
func columnType(c *column) change.Type {
	t := change.Type{Name: c.dataType, Precision: -1, Scale: -1, Length: -1}
	c.text = charsetFor(c.charset)
	unsigned := c.unsigned()
	switch c.dataType {
	case "tinyint":
		t.Kind = change.KindInt16
	case "smallint":
		t.Kind = change.KindInt16
		if unsigned {
			t.Kind = change.KindInt32
		}
	case "mediumint":
		t.Kind = change.KindInt32
	case "int", "integer":
		t.Kind = change.KindInt32
		if unsigned {
			t.Kind = change.KindInt64
		}
	case "bigint":
		t.Kind = change.KindInt64
	case "decimal", "numeric":
		t.Kind = change.KindDecimal
		t.Precision, t.Scale = c.precision, max(c.scale, 0)
	case "float":
		// FLOAT(M,D) is a double for Debezium; plain FLOAT a float.
		t.Kind = change.KindFloat32
		if strings.Contains(c.columnType, ",") {
			t.Kind = change.KindFloat64
		}
	case "double", "real", "double precision":
		t.Kind = change.KindFloat64
	case "bit":
		n := c.precision
		if n <= 1 {
			t.Kind = change.KindBool
		} else {
			t.Kind, t.Length = change.KindBits, n
		}
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext":
		t.Kind = change.KindString
	case "json":
		t.Kind = change.KindJSON
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		t.Kind = change.KindBytes
	case "date":
		t.Kind = change.KindDate
	case "time":
		// adaptive_time_microseconds: MicroTime whatever the precision.
		t.Kind, t.Precision = change.KindTime, 6
	case "datetime":
		t.Kind, t.Precision = change.KindTimestamp, c.fsp
	case "timestamp":
		t.Kind, t.Precision = change.KindTimestampTZ, c.fsp
	case "year":
		t.Kind = change.KindYear
	case "enum", "set":
		t.Kind = change.KindEnum
		if c.dataType == "set" {
			t.Kind = change.KindSet
		}
		c.members = enumValues(c.columnType)
		t.Values = allowed(c.members)
	case "uuid":
		// MariaDB 10.7+: a string named io.debezium.data.Uuid, as
		// Debezium's MariaDB connector publishes it (fixedbinary.go).
		t.Kind = change.KindUUID
	case "inet4", "inet6":
		// MariaDB 10.5+/10.10+: their text, a plain string; Debezium's
		// DDL parser refuses the types (docs/types.md).
		t.Kind = change.KindString
	case "point":
		t.Kind = change.KindPoint
	case "geometry", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
		"geometrycollection", "geomcollection":
		t.Kind = change.KindGeometry
	}
	return t
}

// enumValues reads the values of COLUMN_TYPE "enum('a','b')" or
// "set(...)", written as the server writes them (append_unescaped): a
// quote doubled, a backslash, NUL, newline, return and ^Z escaped with a
// backslash (quoteMember writes the same).
func enumValues(columnType string) []string {
	open := strings.IndexByte(columnType, '(')
	if open < 0 {
		return nil
	}
	s := columnType[open+1:]
	var vals []string
	for {
		s = strings.TrimLeft(s, " ,")
		if s == "" || s[0] != '\'' {
			return vals
		}
		var b strings.Builder
		i := 1
		for i < len(s) {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i += 2
					continue
				}
				break
			}
			if s[i] == '\\' && i+1 < len(s) {
				b.WriteByte(unescapeMember[s[i+1]])
				i += 2
				continue
			}
			b.WriteByte(s[i])
			i++
		}
		vals = append(vals, b.String())
		if i >= len(s) {
			return vals
		}
		s = s[i+1:]
	}
}

// lowerType lower-cases COLUMN_TYPE outside its quoted ENUM/SET members,
// whose case is the values' ("enum('Red')" holds Red, not red).
func lowerType(s string) string {
	b := []byte(s)
	quoted := false
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\'':
			quoted = !quoted // a doubled quote toggles twice
		case quoted && b[i] == '\\':
			i++
		case !quoted && b[i] >= 'A' && b[i] <= 'Z':
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

// unescapeMember maps the byte after a backslash in a COLUMN_TYPE member
// to the byte it stands for.
var unescapeMember = func() (m [256]byte) {
	for i := range m {
		m[i] = byte(i)
	}
	m['0'], m['n'], m['r'], m['Z'] = 0, '\n', '\r', 0x1a
	return m
}()

// allowed is the "allowed" parameter of an ENUM's or SET's schema as
// Debezium's binlog connectors write it (checked side by side in
// integration/mysql/mysql_fidelity_test.go): the members joined by ',', each
// escaped as in COLUMN_TYPE, a comma as "\,".
func allowed(members []string) string {
	esc := strings.NewReplacer(`\`, `\\`, "\x00", `\0`, "\n", `\n`, "\r", `\r`, ",", `\,`)
	out := make([]string, len(members))
	for i, m := range members {
		out[i] = esc.Replace(m)
	}
	return strings.Join(out, ",")
}

// quoteMember writes an ENUM/SET member as COLUMN_TYPE does (enumValues
// reads it).
func quoteMember(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`, "\x00", `\0`, "\n", `\n`, "\r", `\r`).Replace(v) + "'"
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// quoteString makes a string literal, for sessions without
// NO_BACKSLASH_ESCAPES (connect removes it).
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case 0:
			b.WriteString(`\0`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case 0x1a:
			b.WriteString(`\Z`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// schemaFilter limits a catalog query on information_schema alias t to the
// schemas of source.tables' plain names, or the URL's database; "" when
// every database is captured, or a regular expression may match a table
// in any.
func (s *Source) schemaFilter() string {
	var dbs []string
	for _, id := range s.sel.PlainNames() {
		if i := strings.IndexByte(id, '.'); i > 0 {
			dbs = append(dbs, quoteString(id[:i]))
		}
	}
	switch {
	case len(s.sel.Patterns()) > 0:
		return ""
	case len(dbs) > 0:
		return " AND t.TABLE_SCHEMA IN (" + strings.Join(dbs, ", ") + ")"
	case !s.sel.Listed() && s.conn.Database != "":
		return " AND t.TABLE_SCHEMA = " + quoteString(s.conn.Database)
	}
	return ""
}
