package mysql

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// selectingSource is a Source of the test MariaDB's database db capturing
// source.tables tables, connected, as Discover runs selectTables.
func selectingSource(t *testing.T, db string, tables []string) (*Source, *client.Conn) {
	t.Helper()
	s, err := New(context.Background(), source.Options{Pipeline: "review", TopicPrefix: "review",
		Config: config.Source{Type: "mysql", URL: "mysql://root:root@127.0.0.1:3306/" + db, Tables: tables}})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := s.connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	s.flavor = flavorMariaDB
	return s, conn
}

// TestStartReadsOnlyTheCapturedTables: a start that captures a few tables
// of a database of many wide tables reads what it reads of a database of
// as many one-column tables: the captured tables' columns, not every
// table's of the database. Reading them all cost memory and time in
// proportion to the database, not to the captured set.
func TestStartReadsOnlyTheCapturedTables(t *testing.T) {
	conn, wide := testServer(t)
	time.Sleep(time.Millisecond) // another database name
	_, narrow := testServer(t)
	var listed []string
	cols := make([]string, 40)
	for i := range cols {
		cols[i] = fmt.Sprintf("column_with_a_long_name_%02d VARCHAR(200) NOT NULL DEFAULT 'some default text' COMMENT 'a comment'", i)
	}
	for _, db := range []string{wide, narrow} {
		for i := range 10 {
			if _, err := conn.Execute(fmt.Sprintf("CREATE TABLE %s.captured%d (id INT PRIMARY KEY, v VARCHAR(20))", db, i)); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 250 {
			def := "(id INT PRIMARY KEY)"
			if db == wide {
				def = "(id INT PRIMARY KEY, " + strings.Join(cols, ", ") + ")"
			}
			if _, err := conn.Execute(fmt.Sprintf("CREATE TABLE %s.other%d %s", db, i, def)); err != nil {
				t.Fatal(err)
			}
		}
	}
	alloc := func(db string) uint64 {
		listed = listed[:0]
		for i := range 10 {
			listed = append(listed, fmt.Sprintf("%s.captured%d", db, i))
		}
		s, c := selectingSource(t, db, listed)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		tables, err := s.selectTables(c)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if len(tables) != 10 {
			t.Fatalf("%d tables captured, want 10", len(tables))
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	alloc(narrow) // warms what a first start allocates once
	n, w := alloc(narrow), alloc(wide)
	t.Logf("allocated %d KiB among wide tables, %d KiB among one-column tables", w>>10, n>>10)
	if w > 2*n+(256<<10) {
		t.Errorf("a start capturing 10 tables allocated %d KiB among 250 wide tables, %d KiB among 250 one-column tables", w>>10, n>>10)
	}
}

// TestDescribeAllAsLimitedUser: for a user who sees some tables whole,
// some by column privileges, some through a database pattern and some not
// at all, describeAll says what describe, one table at a time, says.
func TestDescribeAllAsLimitedUser(t *testing.T) {
	root, db := testServer(t)
	pat := db + "_pat"
	if _, err := root.Execute("CREATE DATABASE " + pat); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Execute("DROP DATABASE " + pat) })
	user := "rv_" + strings.TrimPrefix(db, "describe_")
	if _, err := root.Execute("CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Execute("DROP USER IF EXISTS '" + user + "'@'%'") })
	var grants []string
	for _, d := range []string{db, pat} {
		for i := range 12 {
			q := fmt.Sprintf("CREATE TABLE %s.t%d (id INT NOT NULL, a INT DEFAULT %d, b VARCHAR(9) DEFAULT 'x', c INT, PRIMARY KEY (id, c))", d, i, i)
			if _, err := root.Execute(q); err != nil {
				t.Fatal(err)
			}
			if d != db {
				continue
			}
			switch {
			case i < 4: // whole table
				grants = append(grants, fmt.Sprintf("GRANT SELECT ON %s.t%d TO '%s'@'%%'", d, i, user))
			case i < 8: // some columns, the key's in part
				grants = append(grants, fmt.Sprintf("GRANT SELECT (id, b), INSERT (a) ON %s.t%d TO '%s'@'%%'", d, i, user))
			}
		}
	}
	if _, err := root.Execute(fmt.Sprintf("CREATE VIEW %s.v AS SELECT id, a FROM %s.t0", db, db)); err != nil {
		t.Fatal(err)
	}
	grants = append(grants, fmt.Sprintf("GRANT SELECT ON `%s`.* TO '%s'@'%%'", strings.ReplaceAll(pat[:len(pat)-3], "_", `\_`)+"%", user))
	for _, g := range grants {
		if _, err := root.Execute(g); err != nil {
			t.Fatalf("%s: %v", g, err)
		}
	}
	conn, err := client.Connect("127.0.0.1:3306", user, "pw", "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r, err := conn.Execute(fmt.Sprintf("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA IN ('%s', '%s') ORDER BY 1, 2", db, pat))
	if err != nil {
		t.Fatal(err)
	}
	var one, all []*table
	for i := range r.Values {
		d, _ := r.GetString(i, 0)
		n, _ := r.GetString(i, 1)
		one = append(one, &table{db: d, name: n, mariadb: true})
		all = append(all, &table{db: d, name: n, mariadb: true})
	}
	if len(all) != 8+12 {
		t.Fatalf("the user sees %d tables, want 20", len(all))
	}
	for _, tb := range one {
		if err := describe(conn, tb, nil); err != nil {
			t.Fatal(err)
		}
	}
	gone, err := describeAll(conn, all, nil)
	if err != nil || len(gone) > 0 {
		t.Fatalf("describeAll: gone %v, %v", gone, err)
	}
	for i, tb := range all {
		w := one[i]
		if !reflect.DeepEqual(tb.cols, w.cols) || !reflect.DeepEqual(tb.key, w.key) || !reflect.DeepEqual(tb.t, w.t) {
			t.Errorf("%s: columns %v key %v, one by one %v key %v", tb.id(), typeList(tb.cols), tb.key, typeList(w.cols), w.key)
		}
	}
}

// TestDescribeAllWhileTablesChurn: tables created and dropped in the
// captured tables' database while they are described (other
// applications' work tables) neither fail the description nor change it.
func TestDescribeAllWhileTablesChurn(t *testing.T) {
	conn, db := testServer(t)
	var ts []*table
	for i := range 12 {
		if _, err := conn.Execute(fmt.Sprintf("CREATE TABLE %s.t%d (id INT PRIMARY KEY, v%d INT)", db, i, i)); err != nil {
			t.Fatal(err)
		}
		ts = append(ts, &table{db: db, name: fmt.Sprintf("t%d", i), mariadb: true})
	}
	churn, err := client.Connect("127.0.0.1:3306", "root", "root", db)
	if err != nil {
		t.Fatal(err)
	}
	defer churn.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			n := fmt.Sprintf("work%d", i%5)
			churn.Execute("CREATE TABLE IF NOT EXISTS " + n + " (id INT PRIMARY KEY, x INT)")
			churn.Execute("ALTER TABLE " + n + " ADD COLUMN y INT")
			churn.Execute("DROP TABLE IF EXISTS " + n)
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	for range 40 {
		gone, err := describeAll(conn, ts, nil)
		if err != nil || len(gone) > 0 {
			t.Fatalf("describeAll while other tables churn: gone %d, %v", len(gone), err)
		}
		for i, tb := range ts {
			if len(tb.cols) != 2 || tb.cols[1].name != fmt.Sprintf("v%d", i) || !reflect.DeepEqual(tb.key, []int{0}) {
				t.Fatalf("%s: %v key %v", tb.name, typeList(tb.cols), tb.key)
			}
		}
	}
}

// TestReadCatalogMatchesOneByOne: the schema history read from the
// catalog (binlog_row_metadata not FULL) holds, for every base table of
// the tracked databases, the columns and key describe reads of it alone:
// tables whose names differ only in case, a view and a sequence among
// them, and a database of a single table.
func TestReadCatalogMatchesOneByOne(t *testing.T) {
	conn, db := testServer(t)
	small := db + "_one"
	if _, err := conn.Execute("CREATE DATABASE " + small); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Execute("DROP DATABASE " + small) })
	ddl := []string{
		"CREATE TABLE " + small + ".only (id INT PRIMARY KEY, v TEXT)",
		"CREATE TABLE " + db + ".T (a INT PRIMARY KEY, b INT DEFAULT 3)",
		"CREATE TABLE " + db + ".t (x VARCHAR(5) CHARACTER SET latin1, y INT NOT NULL, PRIMARY KEY (y))",
		"CREATE TABLE " + db + ".nokey (n INT)",
		"CREATE VIEW " + db + ".v AS SELECT a, b FROM " + db + ".T",
		"CREATE SEQUENCE " + db + ".sq",
	}
	for i := range 10 {
		ddl = append(ddl, fmt.Sprintf("CREATE TABLE %s.w%d (k%d INT NOT NULL, id BIGINT NOT NULL, d DATETIME(3) DEFAULT '2024-01-01', PRIMARY KEY (id, k%d))", db, i, i, i))
	}
	for _, q := range ddl {
		if _, err := conn.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s := &Source{flavor: flavorMariaDB}
	h := &history{mariadb: true, dbs: map[string]string{db: "", small: ""}, tables: map[tableName]*histTable{}}
	if err := s.readCatalog(conn, h); err != nil {
		t.Fatal(err)
	}
	want := []tableName{{small, "only"}, {db, "T"}, {db, "t"}, {db, "nokey"}}
	for i := range 10 {
		want = append(want, tableName{db, fmt.Sprintf("w%d", i)})
	}
	if len(h.tables) != len(want) {
		t.Errorf("%d tables in the history, want %d", len(h.tables), len(want))
	}
	for _, n := range want {
		tb := &table{db: n.db, name: n.name, mariadb: true}
		if err := describe(conn, tb, nil); err != nil {
			t.Fatal(err)
		}
		var key []string
		for _, k := range tb.key {
			key = append(key, tb.cols[k].name)
		}
		ht := h.tables[n]
		if ht == nil {
			t.Errorf("%s: not in the history", n)
			continue
		}
		if !reflect.DeepEqual(ht.cols, tb.cols) || !reflect.DeepEqual(ht.key, key) || ht.at != "catalog" {
			t.Errorf("%s: history %v key %v at %s, describe %v key %v", n, typeList(ht.cols), ht.key, ht.at, typeList(tb.cols), key)
		}
	}
}
