package mysql

import "testing"

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
