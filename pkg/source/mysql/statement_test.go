package mysql

import (
	"strings"
	"testing"
)

// TestDMLTable: the table a data-changing statement logged as text
// changes, for each statement form; other statements are none.
func TestDMLTable(t *testing.T) {
	for _, c := range []struct{ q, db, name string }{
		{"INSERT INTO t VALUES (1, 2)", "d", "t"},
		{"insert low_priority ignore into `my db`.`t 1` (a) values (1)", "my db", "t 1"},
		{"/* app */ REPLACE t SELECT * FROM u", "d", "t"},
		{"INSERT t SET a = 1", "d", "t"},
		{"UPDATE IGNORE x.t SET a = 1 WHERE b = 2", "x", "t"},
		{"UPDATE t, u SET t.a = u.a", "d", "t"},
		{"DELETE FROM t WHERE id = 1", "d", "t"},
		{"DELETE QUICK IGNORE FROM `t` WHERE id = 1", "d", "t"},
		{"DELETE t, u FROM t JOIN u USING (id)", "d", "t"},
		{"LOAD DATA LOCAL INFILE '/tmp/SQL_LOAD-1-2-3.data' IGNORE INTO TABLE `d2`.`t` FIELDS TERMINATED BY ','", "d2", "t"},
		{"LOAD DATA INFILE 'it''s.csv' INTO TABLE t", "d", "t"},
		{"INSERT /* app */ INTO t VALUES (1)", "d", "t"},
		{"UPDATE /*+ NO_RANGE_OPTIMIZATION(t) */ t SET a = 1", "d", "t"},
		{"DELETE /* x */ FROM # why\n `t` WHERE a = '/*'", "d", "t"},
		{"INSERT /*! IGNORE */ INTO -- the table\n x.t VALUES ('--', \"#\")", "x", "t"},
		{"REPLACE /*M!100500 LOW_PRIORITY */ INTO t VALUES (1)", "d", "t"},
	} {
		db, name, ok := dmlTable(c.q, "d")
		if !ok || db != c.db || name != c.name {
			t.Errorf("%q: %q.%q %v, want %q.%q", c.q, db, name, ok, c.db, c.name)
		}
	}
	for _, q := range []string{"BEGIN", "COMMIT", "CREATE TABLE t (a int)", "ALTER TABLE t ADD c INT", "SELECT 1", "TRUNCATE t", "SAVEPOINT a", "DROP TABLE t", "INSERTX INTO t VALUES (1)"} {
		if db, name, ok := dmlTable(q, "d"); ok {
			t.Errorf("%q: a data-changing statement on %s.%s", q, db, name)
		}
	}
}

// TestLoadQuery: an Execute_load_query event's schema and text.
func TestLoadQuery(t *testing.T) {
	q := "LOAD DATA INFILE '/tmp/x' INTO TABLE t"
	raw := make([]byte, 19+26)
	raw[19+8] = 2                  // db length
	raw[19+11] = 3                 // status vars length
	raw = append(raw, 1, 2, 3)     // status vars
	raw = append(raw, 'd', 'b', 0) // db, NUL
	raw = append(raw, q...)
	schema, got, ok := loadQuery(raw)
	if !ok || schema != "db" || got != q {
		t.Errorf("%q %q %v", schema, got, ok)
	}
	if _, _, ok := loadQuery(raw[:30]); ok {
		t.Error("a short event decoded")
	}
}

// TestDMLTables: a multi-table UPDATE or DELETE changes every table its
// table references name, whatever their order, quoting or aliases.
func TestDMLTables(t *testing.T) {
	has := func(ids [][2]string, db, name string) bool {
		for _, id := range ids {
			if id == [2]string{db, name} {
				return true
			}
		}
		return false
	}
	for _, c := range []struct{ q, db, name string }{
		{"UPDATE n, c SET c.v = 'x' WHERE n.id = c.id", "d", "c"},
		{"UPDATE n JOIN c ON n.id = c.id SET c.v = 'x'", "d", "c"},
		{"update n o join `x y`.`c` i on o.id = i.id set i.v = 'x'", "x y", "c"},
		{"UPDATE n INNER JOIN x . c AS i USING (id) SET i.v = 1", "x", "c"},
		{"/* app */ UPDATE n, /* c2 */ c SET c.v = 'x'", "d", "c"},
		{"DELETE o, i FROM n AS o JOIN c AS i ON o.id = i.id WHERE o.id = 3", "d", "c"},
		{"DELETE FROM n, c USING n JOIN c WHERE n.id = c.id", "d", "c"},
		{"DELETE i FROM n LEFT JOIN (SELECT 1) s ON 1 JOIN c i ON 1", "d", "c"},
	} {
		ids, ok := dmlTables(c.q, "d")
		if !ok || !has(ids, c.db, c.name) {
			t.Errorf("%q: %v %v, want %s.%s among them", c.q, ids, ok, c.db, c.name)
		}
	}
	// Tables a statement only reads in a subquery or a SET or WHERE
	// clause are not taken for changed.
	for _, q := range []string{
		"UPDATE n SET v = (SELECT v FROM c LIMIT 1)",
		"UPDATE n SET v = 'c' WHERE id IN (SELECT id FROM c)",
		"DELETE FROM n WHERE id IN (SELECT id FROM c)",
		"INSERT INTO n SELECT * FROM c",
		"UPDATE n SET v = 1 WHERE c = 2",
	} {
		if ids, _ := dmlTables(q, "d"); has(ids, "d", "c") {
			t.Errorf("%q: %v takes c for changed", q, ids)
		}
	}
}

// TestNamesIn: the dotted names of a view's definition or a trigger's
// body, at any depth, quotes and comments aside.
func TestNamesIn(t *testing.T) {
	got := namesIn("select `d`.`items`.`id` AS `id` from (`d`.`items` join x) where y = 'd.fake' /* d.no */ and z in (select 1 from w)")
	want := map[string]bool{"d.items.id": false, "d.items": false, "x": false, "w": false}
	for _, n := range got {
		k := strings.Join(n, ".")
		if _, ok := want[k]; ok {
			want[k] = true
		}
		if k == "d.fake" || k == "d.no" {
			t.Errorf("%q taken from a string or comment", k)
		}
	}
	for k, seen := range want {
		if !seen {
			t.Errorf("%q not found in %v", k, got)
		}
	}
}
