package mysql

import (
	"testing"
)

// FuzzApplyDDL: whatever statement the binlog carries (it comes from the
// server's users), applying it to the history never panics, and a shape
// it leaves behind has named, distinct columns and a key among them.
func FuzzApplyDDL(f *testing.F) {
	for _, q := range []string{
		"ALTER TABLE t ADD COLUMN z varchar(10) AFTER id, DROP COLUMN b",
		"ALTER TABLE t CHANGE a a2 ENUM('x','y') FIRST, MODIFY b BIT(3) DEFAULT b'1', RENAME COLUMN id TO k",
		"CREATE OR REPLACE TABLE t (id INT PRIMARY KEY, j JSON DEFAULT (1+1))",
		"RENAME TABLE t TO u, u TO t",
		"CREATE TABLE v LIKE t",
		"ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (a(3), b)",
		"DROP DATABASE d",
		"ALTER TABLE t ALTER COLUMN a SET DEFAULT -1.5e3",
		"ALTER TABLE t CONVERT TO CHARACTER SET latin1 COLLATE latin1_bin",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		h := testHistory(t, len(q)%2 == 0)
		_ = h.apply(q, "d", "bin.000002", 200)
		for n, ht := range h.tables {
			tb := ht.table(n, h.mariadb)
			for i, c := range tb.cols {
				if c.name == "" || colIndex(tb.cols[:i], c.name) >= 0 {
					t.Fatalf("%s: column %d named %q", n, i, c.name)
				}
			}
			if len(tb.key) != len(ht.key) {
				t.Fatalf("%s: key %v is not among the columns", n, ht.key)
			}
		}
		if _, err := decodeHistory(h.encode(), h.mariadb); err != nil {
			t.Fatalf("the history does not read back: %v", err)
		}
	})
}

// FuzzDecodeHistory: a checkpoint's history (outside bytes: the store)
// never panics the decoder, and what it accepts builds tables.
func FuzzDecodeHistory(f *testing.F) {
	h := &history{dbs: map[string]string{"d": ""}, tables: map[tableName]*histTable{}, wants: func(string, string) bool { return true }}
	_ = h.apply("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(3) DEFAULT 'x', e SET('a','b'))", "d", "bin.000001", 4)
	f.Add(h.encode())
	f.Add([]byte(`{"scope":"","seeded":"bin.1:x","tables":[]}`))
	f.Add([]byte(`{"tables":[{"db":"d","name":"t","key":["zz"],"cols":[{"n":"a","d":"int","t":"int","p":-1,"s":-1,"o":-1}]}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		h, err := decodeHistory(raw, len(raw)%2 == 0)
		if err != nil {
			return
		}
		for n, ht := range h.tables {
			tb := ht.table(n, h.mariadb)
			if len(tb.key) != len(ht.key) {
				t.Fatalf("%s: key %v is not among the columns", n, ht.key)
			}
		}
	})
}
