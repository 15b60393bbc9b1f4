package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// relation is what the catalog says about one table.
type relation struct {
	oid     uint32
	schema  string
	name    string
	columns []catalogColumn // in attnum order: the order pgoutput sends
	key     []string        // the key columns in key order (see describe)
	// noIdentity, set by listTables, names the relation (or partitions)
	// on which PostgreSQL refuses UPDATE and DELETE once it is in a
	// publication, and why; "" when it has a replica identity.
	noIdentity string
	replident  string // pg_class.relreplident: d(efault), n(othing), f(ull), i(ndex)
	// gone: the catalog no longer has the table (dropped while its
	// changes were still in the slot's WAL); its shape comes from the
	// Relation message alone (see goneColumns).
	gone bool
	// proj is which columns the table has and which are masked, set by
	// table (columns.go).
	proj source.Projection
}

type catalogColumn struct {
	name    string
	typOID  uint32
	typmod  int32
	typName string
	notNull bool

	// What the catalog says about the type beyond its OID: for a domain,
	// the base type and its typmod; typType is pg_type.typtype of that
	// (base) type ('b' base, 'e' enum, ...); for an array, its element
	// type; labels are an enum's (or an enum array's) labels in order.
	baseOID    uint32
	baseTypmod int32
	baseName   string
	typType    string
	elemOID    uint32
	elemName   string
	elemType   string
	labels     string
	// defaultExpr is pg_get_expr of the column default; "" when none.
	defaultExpr string
	hasDefault  bool
}

// withMessageType applies the type a pgoutput Relation message gives a
// column. When it is the type the catalog described, the catalog's details
// (domain base, enum labels, element type) stay; when the catalog has moved
// on (another ALTER since), the message wins and only built-in knowledge of
// its OID remains.
func (c catalogColumn) withMessageType(name string, oid uint32, typmod int32) catalogColumn {
	if c.typOID == oid && c.typmod == typmod && c.name == name {
		return c
	}
	return catalogColumn{name: name, typOID: oid, typmod: typmod, typName: c.typName, notNull: c.notNull,
		baseOID: oid, baseTypmod: typmod, defaultExpr: c.defaultExpr, hasDefault: c.hasDefault}
}

// changeType resolves c to the neutral type: domains as their base type,
// enums with their labels, hstore as JSON, arrays of any of these.
func (c *catalogColumn) changeType() change.Type {
	oid, typmod, name := c.baseOID, c.baseTypmod, c.baseName
	if oid == 0 {
		oid, typmod, name = c.typOID, c.typmod, c.typName
	}
	if c.elemOID != 0 {
		elem := scalarType(c.elemOID, typmod, c.elemName, c.elemType, c.labels)
		t := change.Type{Kind: change.KindArray, Name: name, Precision: -1, Scale: -1, Length: -1}
		if elem.Kind == change.KindUnknown {
			t.Kind = change.KindUnknown
			return t
		}
		t.Elem = &elem
		return t
	}
	return scalarType(oid, typmod, name, c.typType, c.labels)
}

func scalarType(oid uint32, typmod int32, name, typType, labels string) change.Type {
	t := columnType(oid, typmod, name)
	if t.Kind != change.KindUnknown {
		return withEncoding(t)
	}
	switch {
	case typType == "e":
		t.Kind, t.Values = change.KindEnum, labels
	case name == "hstore":
		t.Kind = change.KindJSON
	}
	return withEncoding(t)
}

// columnDefault evaluates a default expression the way Debezium's
// PostgresDefaultValueConverter can: a literal, optionally quoted and cast
// ('x'::character varying, 42, -1.5, true). Anything else (nextval(...),
// now()) is a default it cannot evaluate: a Null value.
func columnDefault(t change.Type, expr string) *change.Value {
	null := &change.Value{}
	if t.Kind == change.KindArray || !defaultConverted(t) {
		// Debezium's default-value converter has no mapper for the type
		// (none for arrays either): no schema default, even when NOT
		// NULL, and a key-only old image keeps its null.
		return nil
	}
	lit, ok := defaultLiteral(expr)
	if !ok {
		return null
	}
	if strings.ContainsAny(lit, "\n\r") {
		// Debezium has none for a literal across lines (its
		// LITERAL_DEFAULT_PATTERN '(.*?)' does not match one).
		return nil
	}
	if lit == "infinity" || lit == "-infinity" {
		return infinityDefault(t, lit == "infinity")
	}
	switch t.Kind {
	case change.KindBool:
		switch lit {
		case "true":
			lit = "t"
		case "false":
			lit = "f"
		}
	}
	v, err := decodeText(t, []byte(lit))
	if err != nil {
		return null
	}
	if t.Kind == change.KindTime && v.Int == 86400e6 {
		v.Int = 86399999999 // 24:00:00 is LocalTime.MAX for Debezium's default
	}
	if v.Bytes != nil {
		v.Bytes = append([]byte(nil), v.Bytes...)
	}
	return &v
}

// infinityDefault is Debezium's schema default for DEFAULT 'infinity'
// (pos) or '-infinity' (verified side by side:
// integration/fidelity_pgedges_test.go). Its default-value converter
// parses the literal with pgjdbc, which gives LocalDate.MAX/MIN and
// LocalDateTime.MAX/MIN, not the sentinels of a streamed value
// (decode.go), and converts those as any value:
//   - date: LocalDate.toEpochDay cast to an int, wrapped;
//   - timestamp: µs as Conversions.toEpochMicros computes them (seconds
//     saturated to a long, plus the nanoseconds' µs, wrapped), which
//     change.FarTimestamp carries to the encoder; the millisecond forms
//     (timestamp(0..3), time_precision connect) overflow
//     Instant.toEpochMilli and have none;
//   - timestamptz: none (the conversion fails).
func infinityDefault(t change.Type, pos bool) *change.Value {
	switch t.Kind {
	case change.KindDate:
		days := int64(-365243219162) // LocalDate.MIN.toEpochDay()
		if pos {
			days = 365241780471 // LocalDate.MAX.toEpochDay()
		}
		v := change.IntValue(int64(int32(days)))
		return &v
	case change.KindTimestamp:
		// LocalDateTime.MIN and MAX in seconds since the epoch, and µs.
		v := change.FarTimestamp(-31557014167219200, 0)
		if pos {
			v = change.FarTimestamp(31556889864403199, 999999)
		}
		return &v
	}
	return nil
}

// defaultLiteral extracts the literal of a constant default expression.
func defaultLiteral(expr string) (string, bool) {
	e := strings.TrimSpace(expr)
	if strings.HasPrefix(e, "(") && strings.HasSuffix(e, ")") {
		e = e[1 : len(e)-1]
	}
	var lit, rest string
	if strings.HasPrefix(e, "'") {
		var b strings.Builder
		i := 1
		for ; i < len(e); i++ {
			if e[i] == '\'' {
				if i+1 < len(e) && e[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				break
			}
			b.WriteByte(e[i])
		}
		if i >= len(e) {
			return "", false
		}
		lit, rest = b.String(), e[i+1:]
	} else {
		lit, rest, _ = strings.Cut(e, "::")
		if rest != "" {
			rest = "::" + rest
		}
		if lit == "" || strings.ContainsAny(lit, "()' ") || strings.EqualFold(lit, "NULL") {
			return "", false
		}
	}
	// Only casts may follow: "::type", "::type[]", "::character varying".
	if rest != "" && (!strings.HasPrefix(rest, "::") || strings.ContainsAny(rest, "()'")) {
		return "", false
	}
	return lit, true
}

// qualified returns the quoted "schema"."name".
func (r *relation) qualified() string {
	return pgx.Identifier{r.schema, r.name}.Sanitize()
}

// What the catalog says about a column's type (a.atttypid, a.atttypmod:
// a column's, or a type's alone, see goneColumns), as catalogColumn holds
// it: typeColumns are read into typeFields, typeJoins join them.
const (
	typeColumns = `t.typname, bt.oid, CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END, bt.typname, bt.typtype,
  COALESCE(et.oid, 0), COALESCE(et.typname, ''), COALESCE(et.typtype, ''),
  COALESCE((SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e
            WHERE e.enumtypid = COALESCE(et.oid, bt.oid)), '')`
	typeJoins = `
JOIN pg_type t ON t.oid = a.atttypid
JOIN pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
LEFT JOIN pg_type et ON bt.typcategory = 'A' AND et.oid = bt.typelem`
)

func (c *catalogColumn) typeFields() []any {
	return []any{&c.typName, &c.baseOID, &c.baseTypmod, &c.baseName, &c.typType, &c.elemOID, &c.elemName, &c.elemType, &c.labels}
}

// describe fills r's columns and key from the catalog.
func describe(ctx context.Context, conn *pgx.Conn, r *relation) error {
	if err := describeAll(ctx, conn, []*relation{r}); err != nil {
		return fmt.Errorf("describe %s.%s: %w", r.schema, r.name, err)
	}
	return nil
}

// describeAll fills the columns and key of every relation of rels from
// the catalog, in two queries whatever their number: one round trip per
// table made a schema of thousands of tables take tens of seconds to
// start. The key is the primary key, or, under REPLICA IDENTITY USING
// INDEX, that index's columns: the only ones every old image carries, so a
// delete or a change of them is published under the real key
// (docs/postgresql.md).
func describeAll(ctx context.Context, conn *pgx.Conn, rels []*relation) error {
	if len(rels) == 0 {
		return nil
	}
	byOID := make(map[uint32]*relation, len(rels))
	oids := make([]uint32, 0, len(rels))
	for _, r := range rels {
		r.columns, r.key = r.columns[:0], []string{}
		byOID[r.oid] = r
		oids = append(oids, r.oid)
	}
	const cols = `
SELECT a.attrelid, a.attname, a.atttypid, a.atttypmod, a.attnotnull, ` + typeColumns + `,
  COALESCE(pg_get_expr(d.adbin, d.adrelid), ''), d.adbin IS NOT NULL
FROM pg_attribute a ` + typeJoins + `
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
ORDER BY a.attrelid, a.attnum`
	rows, err := conn.Query(ctx, cols, oids)
	if err != nil {
		return fmt.Errorf("columns: %w", err)
	}
	for rows.Next() {
		var oid uint32
		var c catalogColumn
		if err := rows.Scan(append([]any{&oid, &c.name, &c.typOID, &c.typmod, &c.notNull}, append(c.typeFields(), &c.defaultExpr, &c.hasDefault)...)...); err != nil {
			return err
		}
		if r := byOID[oid]; r != nil {
			r.columns = append(r.columns, c)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("columns: %w", err)
	}
	// keyColumns's query, for every table at once.
	const keys = `
SELECT c.oid, a.attname
FROM pg_class c, pg_index i, unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attnum = k.attnum
WHERE c.oid = ANY($1::oid[]) AND i.indrelid = c.oid AND a.attrelid = c.oid
  AND CASE WHEN c.relreplident = 'i' THEN i.indisreplident ELSE i.indisprimary END
ORDER BY c.oid, k.ord`
	rows, err = conn.Query(ctx, keys, oids)
	if err != nil {
		return fmt.Errorf("key columns: %w", err)
	}
	for rows.Next() {
		var oid uint32
		var name string
		if err := rows.Scan(&oid, &name); err != nil {
			return err
		}
		if r := byOID[oid]; r != nil {
			r.key = append(r.key, name)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("key columns: %w", err)
	}
	return nil
}

// keyColumns lists the key columns of table oid (name, for errors) in
// order: its primary key, or, under REPLICA IDENTITY USING INDEX, that
// index's.
func keyColumns(ctx context.Context, conn *pgx.Conn, oid uint32, name string) ([]string, error) {
	const q = `
SELECT a.attname
FROM pg_class c, pg_index i, unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attnum = k.attnum
WHERE c.oid = $1 AND i.indrelid = $1 AND a.attrelid = $1
  AND CASE WHEN c.relreplident = 'i' THEN i.indisreplident ELSE i.indisprimary END
ORDER BY k.ord`
	rows, err := conn.Query(ctx, q, oid)
	if err != nil {
		return nil, fmt.Errorf("primary key of %s: %w", name, err)
	}
	key, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("primary key of %s: %w", name, err)
	}
	return key, nil
}

// table builds the neutral table for r, its columns as sel leaves and
// masks them (r.proj), reusing prev when nothing changed so that encoders
// keep their cached schema.
func (r *relation) table(db string, prev *change.Table, sel *config.Selection) *change.Table {
	t := &change.Table{ID: change.TableID{DB: db, Schema: r.schema, Name: r.name}}
	r.project(sel)
	for j, i := range r.proj.Kept {
		c := &r.columns[i]
		col := change.Column{Name: c.name, Type: c.changeType(), Optional: !c.notNull}
		switch {
		case c.hasDefault && c.baseName != "" && c.baseName != c.typName:
			col.Default = nil // a domain: Debezium has no default (debeziumDefaults)
		case c.hasDefault:
			col.Default = columnDefault(col.Type, c.defaultExpr)
		}
		if r.proj.Masks[j] != nil {
			col = source.MaskedColumn(col)
		}
		t.Columns = append(t.Columns, col)
	}
	for _, k := range r.key {
		for i, c := range t.Columns {
			if c.Name == k {
				t.Key = append(t.Key, i)
			}
		}
	}
	if prev != nil {
		if sameShape(prev, t) {
			return prev
		}
		t.Version = prev.Version + 1
	}
	return t
}

func sameShape(a, b *change.Table) bool {
	if a.ID != b.ID || len(a.Columns) != len(b.Columns) || len(a.Key) != len(b.Key) {
		return false
	}
	for i := range a.Columns {
		if !sameColumn(&a.Columns[i], &b.Columns[i]) {
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

// sameColumn compares columns by value (Type.Elem and Default are pointers).
func sameColumn(a, b *change.Column) bool {
	if a.Name != b.Name || a.Optional != b.Optional || a.Masked != b.Masked || !sameType(&a.Type, &b.Type) {
		return false
	}
	if (a.Default == nil) != (b.Default == nil) {
		return false
	}
	if a.Default != nil {
		x, y := a.Default, b.Default
		if x.Kind != y.Kind || x.Int != y.Int || x.Float != y.Float && !(x.Float != x.Float && y.Float != y.Float) ||
			string(x.Bytes) != string(y.Bytes) || x.String() != y.String() {
			return false
		}
	}
	return true
}

func sameType(a, b *change.Type) bool {
	if a.Kind != b.Kind || a.Name != b.Name || a.Precision != b.Precision || a.Scale != b.Scale ||
		a.Length != b.Length || a.Values != b.Values || (a.Elem == nil) != (b.Elem == nil) {
		return false
	}
	return a.Elem == nil || sameType(a.Elem, b.Elem)
}

// slotState is a replication slot as pg_replication_slots shows it.
type slotState struct {
	exists       bool
	plugin       string
	confirmedLSN uint64
	// consistent: its creation finished. A slot being created is listed
	// with no confirmed position until its consistent point is found, and
	// is gone again if the connection creating it ends first (a start
	// killed while it created the slot).
	consistent bool
	lost       bool
	// elsewhere names where a slot of this name is when it is not a
	// logical slot of this database (slot names are server-wide): another
	// database's, or a physical slot. It is never this pipeline's, and
	// exists is false.
	elsewhere string
}

func lookupSlot(ctx context.Context, conn *pgx.Conn, name string) (slotState, error) {
	var s slotState
	var confirmed *string
	var walStatus *string
	var db *string
	var here bool
	err := conn.QueryRow(ctx, `SELECT plugin, confirmed_flush_lsn::text, wal_status, database, database IS NOT DISTINCT FROM current_database()
		FROM pg_replication_slots WHERE slot_name = $1`, name).
		Scan(&s.plugin, &confirmed, &walStatus, &db, &here)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("look up replication slot %s: %w", name, err)
	}
	if !here {
		s.elsewhere = "a physical replication slot"
		if db != nil {
			s.elsewhere = "a slot of database " + *db
		}
		return slotState{elsewhere: s.elsewhere}, nil
	}
	s.exists = true
	if confirmed != nil {
		lsn, err := parseLSN(*confirmed)
		if err != nil {
			return s, err
		}
		s.confirmedLSN, s.consistent = lsn, true
	}
	s.lost = walStatus != nil && *walStatus == "lost"
	return s, nil
}
