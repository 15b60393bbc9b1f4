package mysql

import (
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// testServer connects to the test services' MariaDB (make services-up) and
// makes a database of its own, dropped after the test.
func testServer(t *testing.T) (*client.Conn, string) {
	t.Helper()
	conn, err := client.Connect("127.0.0.1:3306", "root", "root", "")
	if err != nil {
		t.Skipf("no MariaDB at 127.0.0.1:3306 (make services-up): %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	db := fmt.Sprintf("describe_%d", time.Now().UnixNano()%1_000_000_000)
	if _, err := conn.Execute("CREATE DATABASE " + db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Execute("DROP DATABASE " + db) })
	return conn, db
}

func questions(t *testing.T, conn *client.Conn) int {
	r, err := conn.Execute("SHOW SESSION STATUS LIKE 'Questions'")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := r.GetString(0, 1)
	n, _ := strconv.Atoi(v)
	return n
}

// describeAll, which describes a schema's tables in a few queries, says of
// every table what describe, one table at a time, says: columns, types,
// defaults, keys; and names the tables dropped since they were listed.
func TestDescribeAllMatchesOneByOne(t *testing.T) {
	conn, db := testServer(t)
	ddl := []string{
		"CREATE TABLE plain (id BIGINT PRIMARY KEY, v INT NOT NULL DEFAULT 7, note TEXT)",
		"CREATE TABLE keyless (a INT, b VARCHAR(10) DEFAULT 'x')",
		"CREATE TABLE composite (a INT NOT NULL, b VARCHAR(20) NOT NULL, c INT, PRIMARY KEY (b, a))",
		"CREATE TABLE typed (id INT UNSIGNED PRIMARY KEY, d DECIMAL(20,4) DEFAULT 1.5, e ENUM('x','y') DEFAULT 'y', s SET('p','q'), " +
			"ts TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3), dt DATETIME(6), j JSON, " +
			"bits BIT(12) DEFAULT b'101', bl BLOB, y YEAR DEFAULT 2024, f DOUBLE DEFAULT -0.5)",
		"CREATE TABLE latin (id INT PRIMARY KEY, name VARCHAR(30) CHARACTER SET latin1 DEFAULT 'é', u VARCHAR(5) CHARACTER SET utf8mb4)",
		"CREATE TABLE generated (id INT PRIMARY KEY, a INT, g INT AS (a * 2) VIRTUAL, h INT AS (a + 1) PERSISTENT)",
		"CREATE TABLE `Mixed Case` (`Id` INT PRIMARY KEY, `a b` INT DEFAULT NULL)",
		"CREATE TABLE keylast (v INT, w INT, id INT NOT NULL, PRIMARY KEY (id))",
		"CREATE TABLE dropped (id INT PRIMARY KEY)",
	}
	for i := range 4 {
		ddl = append(ddl, fmt.Sprintf("CREATE TABLE t%d (id INT PRIMARY KEY, v%d VARCHAR(%d) NOT NULL DEFAULT 'd%d')", i, i, 10+i, i))
	}
	for _, q := range ddl {
		if _, err := conn.Execute("USE " + db); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	names := []string{"plain", "keyless", "composite", "typed", "latin", "generated", "Mixed Case", "keylast", "dropped", "t0", "t1", "t2", "t3"}
	var one, all []*table
	for _, n := range names {
		one = append(one, &table{db: db, name: n, mariadb: true})
		all = append(all, &table{db: db, name: n, mariadb: true})
	}
	for _, tb := range one[:len(one)-4] {
		if tb.name == "dropped" {
			continue
		}
		if err := describe(conn, tb, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tb := range one[len(one)-4:] {
		if err := describe(conn, tb, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Execute("DROP TABLE " + db + ".dropped"); err != nil {
		t.Fatal(err)
	}
	before := questions(t, conn)
	gone, err := describeAll(conn, all, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q := questions(t, conn) - before - 1; q > 2 {
		t.Errorf("describing %d tables of one database took %d queries, want 2", len(all), q)
	}
	if len(gone) != 1 || gone[0].name != "dropped" {
		t.Fatalf("gone %v, want the dropped table only", gone)
	}
	for i, tb := range all {
		if tb.name == "dropped" {
			continue
		}
		w := one[i]
		if !reflect.DeepEqual(tb.cols, w.cols) {
			t.Errorf("%s: columns\n%+v\nwant\n%+v", tb.name, tb.cols, w.cols)
		}
		if !reflect.DeepEqual(tb.dflts, w.dflts) {
			t.Errorf("%s: defaults %v, want %v", tb.name, tb.dflts, w.dflts)
		}
		if !reflect.DeepEqual(tb.key, w.key) || !reflect.DeepEqual(tb.t, w.t) {
			t.Errorf("%s: key %v table %+v, want key %v table %+v", tb.name, tb.key, tb.t, w.key, w.t)
		}
	}
	if got := all[2].key; !reflect.DeepEqual(got, []int{1, 0}) {
		t.Errorf("composite key %v, want columns b, a in the key's order", got)
	}
	if len(all[1].key) != 0 || !reflect.DeepEqual(all[7].key, []int{2}) {
		t.Errorf("keyless key %v, keylast key %v", all[1].key, all[7].key)
	}
}
