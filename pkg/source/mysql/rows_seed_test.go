package mysql

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// TestCaptureRowsSeeds writes FuzzRowsDecode's seed corpus from a real
// server's binlog: with CAPTURE_ROWS_SEEDS=root:password@127.0.0.1:3306
// (the MariaDB of integration/services), it creates the fidelity tests'
// tables (integration/mysql) in the database rowsdec_seed, writes full,
// NULL, edge and zero rows, updates and deletes them under the full,
// minimal and noblob row images, and turns each rows event into a seed.
func TestCaptureRowsSeeds(t *testing.T) {
	dsn := os.Getenv("CAPTURE_ROWS_SEEDS")
	if dsn == "" {
		t.Skip("CAPTURE_ROWS_SEEDS not set")
	}
	cred, addr, _ := strings.Cut(dsn, "@")
	user, password, _ := strings.Cut(cred, ":")
	conn, err := client.Connect(addr, user, password, "")
	must(t, err)
	defer conn.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := conn.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	r, err := conn.Execute("SHOW MASTER STATUS")
	must(t, err)
	file, _ := r.GetString(0, 0)
	start, _ := r.GetInt(0, 1)
	for _, q := range seedStatements {
		exec(q)
	}
	r, err = conn.Execute("SHOW MASTER STATUS")
	must(t, err)
	end, _ := r.GetInt(0, 1)

	host, port, _ := strings.Cut(addr, ":")
	var portN uint16
	fmt.Sscan(port, &portN)
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{ServerID: 4242, Flavor: flavorMariaDB, Host: host, Port: portN, User: user, Password: password})
	defer syncer.Close()
	bs, err := syncer.StartSync(gomysql.Position{Name: file, Pos: uint32(start)})
	must(t, err)
	dir := filepath.Join("testdata", "fuzz", "FuzzRowsDecode")
	must(t, os.MkdirAll(dir, 0o755))
	collations := map[uint64]string{8: "latin1", 9: "latin2", 13: "sjis", 33: "utf8mb3", 45: "utf8mb4", 46: "utf8mb4", 51: "cp1251", 54: "utf16", 63: "binary", 224: "utf8mb4"}
	seeds := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ev, err := bs.GetEvent(ctx)
		cancel()
		must(t, err)
		if ev.Header.LogPos >= uint32(end) || ev.Header.EventType == replication.ROTATE_EVENT && ev.Header.Timestamp != 0 {
			break
		}
		e, ok := ev.Event.(*replication.RowsEvent)
		if !ok || string(e.Table.Schema) != "rowsdec_seed" {
			continue
		}
		var kind uint8
		switch ev.Header.EventType {
		case replication.UPDATE_ROWS_EVENTv1:
			kind = 1
		case replication.DELETE_ROWS_EVENTv1:
			kind = 2
		}
		spec := seedSpec(e.Table, collations)
		bitmaps := append(slices.Clone(e.ColumnBitmap1), e.ColumnBitmap2...)
		body := ev.RawData[replication.EventHeaderSize : len(ev.RawData)-replication.BinlogChecksumLength]
		rows := body[len(body)-seedRowsLen(body, e):]
		for _, k := range []uint8{kind, kind | 4} {
			seed := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n[]byte(%q)\n[]byte(%q)\nbyte(%q)\n", spec, bitmaps, rows, k)
			name := fmt.Sprintf("seed-%s-%d-%d", e.Table.Table, ev.Header.LogPos, k)
			must(t, os.WriteFile(filepath.Join(dir, name), []byte(seed), 0o644))
			seeds++
		}
	}
	t.Logf("%d seeds", seeds)
}

// seedRowsLen is the length of a rows event body's row images.
func seedRowsLen(body []byte, e *replication.RowsEvent) int {
	pos := 6 + 2
	pos += lenencSize(body[pos:]) + len(e.ColumnBitmap1) + len(e.ColumnBitmap2)
	return len(body) - pos
}

// seedSpec is FuzzRowsDecode's column spec of a real table map: its types
// and metadata, and what the catalog would say of each column.
func seedSpec(tm *replication.TableMapEvent, collations map[uint64]string) []byte {
	cols := loggedColumns(tm, flavorMariaDB, collations)
	var spec []byte
	for i, c := range cols {
		meta := tm.ColumnMeta[i]
		attr, catalog := byte(0), byte(0)
		if c.unsigned() {
			attr |= 1
		}
		if j := slices.Index(fuzzCharsets, c.charset); j > 0 {
			attr |= byte(j) << 1
		}
		for j, m := range fuzzMembers {
			if m != nil && slices.Equal(m, c.members) {
				attr |= byte(j) << 4
			}
		}
		if c.dataType == "float" {
			catalog = 5 // FLOAT(7,3) or FLOAT: a float either way
		}
		if tm.ColumnType[i] == gomysql.MYSQL_TYPE_GEOMETRY {
			catalog = 2 + byte(i%2) // POINT or another geometry
		}
		if c.dataType == "binary" {
			catalog = 6
		}
		spec = append(spec, tm.ColumnType[i], byte(meta>>8), byte(meta), attr, catalog)
	}
	return spec
}

// seedStatements are the seed corpus's statements: the tables of
// integration/mysql's fidelity tests and rows of every kind.
var seedStatements = []string{
	"DROP DATABASE IF EXISTS rowsdec_seed",
	"CREATE DATABASE rowsdec_seed",
	"USE rowsdec_seed",
	"SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'",
	"SET SESSION time_zone = '+00:00'",
	`CREATE TABLE kinds (id INT UNSIGNED NOT NULL PRIMARY KEY, c_bool TINYINT(1), c_tiny TINYINT, c_utiny TINYINT UNSIGNED,
  c_small SMALLINT, c_usmall SMALLINT UNSIGNED, c_med MEDIUMINT, c_umed MEDIUMINT UNSIGNED, c_int INT, c_uint INT UNSIGNED,
  c_big BIGINT, c_ubig BIGINT UNSIGNED, c_float FLOAT, c_float_md FLOAT(7,3), c_double DOUBLE, c_dec DECIMAL(10,2),
  c_dec0 DECIMAL(5), c_udec DECIMAL(8,3) UNSIGNED, c_bigdec DECIMAL(65,30), c_char CHAR(4), c_varchar VARCHAR(20),
  c_longvarchar VARCHAR(300), c_tinytext TINYTEXT, c_text TEXT, c_mediumtext MEDIUMTEXT, c_longtext LONGTEXT,
  c_latin1 VARCHAR(10) CHARACTER SET latin1, c_binary BINARY(4), c_varbinary VARBINARY(8), c_tinyblob TINYBLOB, c_blob BLOB,
  c_mediumblob MEDIUMBLOB, c_longblob LONGBLOB, c_date DATE, c_dt DATETIME, c_dt3 DATETIME(3), c_dt6 DATETIME(6),
  c_ts TIMESTAMP NULL, c_ts3 TIMESTAMP(3) NULL, c_ts6 TIMESTAMP(6) NULL, c_time TIME, c_time3 TIME(3), c_time6 TIME(6),
  c_year YEAR, c_bit1 BIT(1), c_bit5 BIT(5), c_bit16 BIT(16), c_bit64 BIT(64), c_enum ENUM('red','green','blue'),
  c_set SET('a','b','c'), c_json JSON, c_zero_date DATE, c_zero_dt DATETIME)`,
	`INSERT INTO kinds VALUES (1, 1, -5, 200, -300, 60000, -70000, 16000000, 123456, 4000000000, 9007199254740993,
  10000000000000000000, 3.14, 1234.567, 2.718281828459045, -12345.67, 12345, 99999.999, -1234.000000000000000000000000000001,
  'ab', 'hello', REPEAT('v', 280), 'tiny', 'tab	here "quoted" \\ é ✓', 'medium', REPEAT('long', 500), 'café', X'0102', X'00FF10',
  X'01', X'DEADBEEF', X'CAFE', REPEAT(X'AB', 3000), '2024-02-29', '2024-03-01 10:00:00', '2024-03-01 10:00:00.123',
  '2024-03-01 10:00:00.123456', '2024-03-01 10:00:00', '2024-03-01 10:00:00.120', '2024-03-01 10:00:00.000001', '13:14:15',
  '13:14:15.123', '-01:02:03.000004', 2024, b'1', b'00101', b'1000000000000001', b'1', 'red', 'a,c', '{"a": 1, "b": [true, null]}',
  '0000-00-00', '0000-00-00 00:00:00')`,
	"INSERT INTO kinds (id) VALUES (2)",
	`INSERT INTO kinds VALUES (3, 127, -128, 255, 32767, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808,
  18446744073709551615, -3.4e38, -9999.999, 1e308, -99999999.99, -99999, 0, 12345678901234567890123456789012345.123456789012345678901234567890,
  '', '', '', '', '', '', '', '', X'', X'', X'', X'', X'', X'', '1000-01-01', '9999-12-31 23:59:59', '1969-12-31 23:59:59.999',
  '9999-12-31 23:59:59.999999', '1970-01-01 00:00:01', '2038-01-19 03:14:07.999', '2038-01-19 03:14:07.999999', '-838:59:59',
  '00:00:00', '838:59:59.000000', 1901, b'0', b'11111', b'1111111111111111', b'1111111111111111111111111111111111111111111111111111111111111111',
  'blue', '', '[]', '2024-00-10', '2024-12-00 00:00:00')`,
	`INSERT INTO kinds (id, c_dec, c_dt3, c_time3, c_ts, c_year, c_zero_date) VALUES (4, -0.05, '0000-00-00 00:00:00.000', '-00:00:00.5', '1970-01-01 00:00:01', 0, '2024-00-00')`,
	"UPDATE kinds SET c_int = c_int + 1, c_text = 'updated', c_json = '{\"x\": 2}' WHERE id = 1",
	"UPDATE kinds SET c_enum = 'blue', c_set = 'a,b,c', c_bit5 = b'10101' WHERE id = 2",
	"UPDATE kinds SET id = 100 WHERE id = 3",
	"DELETE FROM kinds WHERE id = 2",
	`CREATE TABLE texts (k VARCHAR(20) CHARACTER SET cp1251 PRIMARY KEY, s VARCHAR(20) CHARACTER SET sjis,
  u VARCHAR(20) CHARACTER SET utf16, g VARCHAR(20) CHARACTER SET latin2, e ENUM('a,b','Red','Привет') CHARACTER SET cp1251,
  st SET('x','Y','ü') CHARACTER SET latin1, q ENUM('it''s','b\\s','(p)',' sp'))`,
	`INSERT INTO texts VALUES ('Привет', 'こんにちは', 'héllo 😀', 'Zażółć', 'a,b', 'x,Y', 'b\\s')`,
	`INSERT INTO texts VALUES ('Мир', '世界', 'Tiếng Việt', 'gęślą', 'Привет', 'ü', 'it''s')`,
	`UPDATE texts SET s = 'カタカナ', e = 'Red', st = 'Y,ü', q = '(p)' WHERE k = 'Мир'`,
	`CREATE TABLE spatial_t (id INT NOT NULL PRIMARY KEY, c_point POINT, c_geom GEOMETRY, c_line LINESTRING, c_coll GEOMETRYCOLLECTION)`,
	`INSERT INTO spatial_t VALUES (1, ST_GeomFromText('POINT(1.5 -2.25)'), ST_GeomFromText('POLYGON((0 0,4 0,4 4,0 4,0 0))', 3857),
  ST_GeomFromText('LINESTRING(0 0,1 1,2 0)'), ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1))'))`,
	`INSERT INTO spatial_t (id) VALUES (2)`,
	`CREATE TABLE odd (id INT PRIMARY KEY, ip INET6, note VARCHAR(10))`,
	`INSERT INTO odd VALUES (1, '::1', 'one'), (2, '2001:db8::7', NULL)`,
	"SET SESSION binlog_row_image = 'MINIMAL'",
	"UPDATE kinds SET c_varchar = 'minimal', c_dt6 = NULL WHERE id = 1",
	"UPDATE texts SET g = 'ąę' WHERE k = 'Мир'",
	"DELETE FROM odd WHERE id = 2",
	"SET SESSION binlog_row_image = 'NOBLOB'",
	"UPDATE kinds SET c_double = 0.5, c_blob = X'00' WHERE id = 1",
	"UPDATE kinds SET c_tiny = 1 WHERE id = 4",
	"DELETE FROM kinds WHERE id = 4",
	"SET SESSION binlog_row_image = 'FULL'",
	"DROP DATABASE rowsdec_seed",
}
