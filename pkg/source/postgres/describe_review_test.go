package postgres

import (
	"context"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"
)

// describeOne is the catalog read of one table as it was before tables
// were described together: a reference describeAll must agree with, which
// describe, now describeAll of one, cannot be.
func describeOne(ctx context.Context, t *testing.T, conn *pgx.Conn, r *relation) {
	t.Helper()
	const cols = `
SELECT a.attname, a.atttypid, a.atttypmod, a.attnotnull, ` + typeColumns + `,
  COALESCE(pg_get_expr(d.adbin, d.adrelid), ''), d.adbin IS NOT NULL
FROM pg_attribute a ` + typeJoins + `
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
ORDER BY a.attnum`
	rows, err := conn.Query(ctx, cols, r.oid)
	if err != nil {
		t.Fatal(err)
	}
	r.columns = nil
	for rows.Next() {
		var c catalogColumn
		if err := rows.Scan(append([]any{&c.name, &c.typOID, &c.typmod, &c.notNull}, append(c.typeFields(), &c.defaultExpr, &c.hasDefault)...)...); err != nil {
			t.Fatal(err)
		}
		r.columns = append(r.columns, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if r.key, err = keyColumns(ctx, conn, r.oid, r.fullName()); err != nil {
		t.Fatal(err)
	}
}

// The tables a many-table start describes together get the columns and
// key each would get alone, whatever their shape: namesakes in several
// schemas, quoted mixed-case names, every replica identity, nested
// partitions, a key whose column order differs from the table's, a
// dropped column before the key, enums, domains and arrays of them,
// defaults, a generated column, and a table dropped between the listing
// and the description (no columns, no key, no error).
func TestDescribeAllMatchesOneByOne(t *testing.T) {
	conn, _ := testDB(t, "")
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `
CREATE SCHEMA s1; CREATE SCHEMA "Mixed Case";
CREATE TABLE public.same (id int PRIMARY KEY, v text DEFAULT 'p');
CREATE TABLE s1.same (k text, id bigint NOT NULL, PRIMARY KEY (k));
CREATE TABLE "Mixed Case"."Same" ("ID" int, "Val" numeric(5,2) DEFAULT 1.5 NOT NULL, PRIMARY KEY ("Val", "ID"));
CREATE TABLE s1.dropped_first (gone int, a int, b int NOT NULL);
ALTER TABLE s1.dropped_first DROP COLUMN gone;
CREATE UNIQUE INDEX dfi ON s1.dropped_first (b);
ALTER TABLE s1.dropped_first REPLICA IDENTITY USING INDEX dfi;
CREATE TABLE s1.full_pk (id int PRIMARY KEY, x int);
ALTER TABLE s1.full_pk REPLICA IDENTITY FULL;
CREATE TABLE s1.nothing_pk (id int PRIMARY KEY, x int);
ALTER TABLE s1.nothing_pk REPLICA IDENTITY NOTHING;
CREATE TABLE s1.nokey (x int, y int);
CREATE TABLE s1.uniq_not_pk (x int NOT NULL UNIQUE, y int);
CREATE TABLE s1.root (id int, at int, sub int, PRIMARY KEY (id, at, sub)) PARTITION BY RANGE (at);
CREATE TABLE s1.mid PARTITION OF s1.root FOR VALUES FROM (0) TO (100) PARTITION BY LIST (sub);
CREATE TABLE s1.leaf PARTITION OF s1.mid FOR VALUES IN (1);
CREATE TABLE s1.doomed (id int PRIMARY KEY);
CREATE TYPE s1.mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN s1.price AS numeric(10,2) CHECK (VALUE >= 0);
CREATE TABLE s1.typed (id int, m s1.mood DEFAULT 'ok', p s1.price, tags text[], ms s1.mood[], d timestamptz DEFAULT now());
ALTER TABLE s1.typed DROP COLUMN tags;
CREATE TABLE s1.generated (id int PRIMARY KEY, v int, w int GENERATED ALWAYS AS (v * 2) STORED, s varchar(12) DEFAULT 'x''y');
`); err != nil {
		t.Fatal(err)
	}
	list := func() []*relation {
		rows, err := conn.Query(ctx, `SELECT c.oid, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname IN ('public', 's1', 'Mixed Case') AND c.relkind IN ('r', 'p') ORDER BY n.nspname, c.relname`)
		if err != nil {
			t.Fatal(err)
		}
		var rels []*relation
		for rows.Next() {
			r := &relation{}
			if err := rows.Scan(&r.oid, &r.schema, &r.name); err != nil {
				t.Fatal(err)
			}
			rels = append(rels, r)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return rels
	}
	one, all := list(), list()
	if len(one) != 14 {
		t.Fatalf("%d tables, want 14", len(one))
	}
	if _, err := conn.Exec(ctx, `DROP TABLE s1.doomed`); err != nil {
		t.Fatal(err)
	}
	for _, r := range one {
		describeOne(ctx, t, conn, r)
	}
	if err := describeAll(ctx, conn, all); err != nil {
		t.Fatal(err)
	}
	for i := range one {
		if !reflect.DeepEqual(one[i], all[i]) {
			t.Errorf("%s:\n one by one %+v\n together   %+v", one[i].fullName(), *one[i], *all[i])
		}
		if one[i].name == "doomed" && (len(all[i].columns) != 0 || len(all[i].key) != 0) {
			t.Errorf("a dropped table described as %+v", *all[i])
		}
	}
}
