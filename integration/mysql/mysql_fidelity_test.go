package mysql_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestDebeziumFidelityMySQL runs real Debezium (the embedded engine of
// integration/debezium, the MariaDB connector, its defaults) and Tributary
// against one MariaDB database and compares every key and value they
// produce, message by message: schemas must be identical and payloads
// identical except for the volatile fields above.
func TestDebeziumFidelityMySQL(t *testing.T) {
	e := itest.NewMyEnv(t, "myfid")
	// Zero dates need a sql_mode without NO_ZERO_DATE/NO_ZERO_IN_DATE and,
	// for '2024-00-10', without strict mode.
	e.Exec(`SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'`)
	e.Exec(`SET SESSION time_zone = '+00:00'`)
	e.Exec(myFidelityTable)
	e.Exec(`CREATE TABLE pair (a INT NOT NULL, b VARCHAR(10) NOT NULL, v TEXT, PRIMARY KEY (a, b))`)
	// Text in other character sets, and ENUM/SET members with commas and
	// capitals (docs/mysql.md).
	e.Exec(`CREATE TABLE texts (k VARCHAR(20) CHARACTER SET cp1251 PRIMARY KEY, s VARCHAR(20) CHARACTER SET sjis,
  u VARCHAR(20) CHARACTER SET utf16, g VARCHAR(20) CHARACTER SET latin2, e ENUM('a,b','Red','Привет') CHARACTER SET cp1251,
  st SET('x','Y','ü') CHARACTER SET latin1, q ENUM('it''s','b\\s','(p)',' sp'))`)
	kindsTopic, pairTopic, textsTopic := e.Prefix+"."+e.DB+".kinds", e.Prefix+"."+e.DB+".pair", e.Prefix+"."+e.DB+".texts"
	itest.CreateSinglePartitionTopics(t, kindsTopic, pairTopic, textsTopic)

	snapshot := []itest.FidelityStep{
		{SQL: itest.FidelityInsert("kinds", myRowFull(1)), Events: 1},
		{SQL: itest.FidelityInsert("kinds", myRowNulls(2)), Events: 1},
		{SQL: itest.FidelityInsert("kinds", myRowEdges(3)), Events: 1},
		{SQL: `INSERT INTO pair VALUES (9, 'z', 'snap')`, Events: 1},
		{SQL: `INSERT INTO texts VALUES ('Привет', 'こんにちは', 'héllo 😀', 'Zażółć', 'a,b', 'x,Y', 'b\\s')`, Events: 1},
	}
	// The stream: every statement with the number of messages it makes (a
	// delete is a 'd' and a tombstone).
	stream := []itest.FidelityStep{
		{SQL: itest.FidelityInsert("kinds", myRowFull(4)), Events: 1},
		{SQL: itest.FidelityInsert("kinds", myRowNulls(5)), Events: 1},
		{SQL: itest.FidelityInsert("kinds", myRowEdges(6)), Events: 1},
		{SQL: `INSERT INTO pair VALUES (1, 'a', 'x'), (1, 'b', 'y'), (2, 'a', NULL)`, Events: 3}, // one rows event: row 0, 1, 2
		{SQL: `UPDATE kinds SET c_int = c_int + 1, c_text = 'updated', c_json = '{"x": 2}' WHERE id = 4`, Events: 1},
		{SQL: `BEGIN`, Events: 0},
		{SQL: `UPDATE kinds SET c_enum = 'blue', c_set = 'a,b,c', c_bit5 = b'10101' WHERE id = 1`, Events: 1},
		{SQL: `DELETE FROM kinds WHERE id = 5`, Events: 2},
		{SQL: `COMMIT`, Events: 0},
		{SQL: `UPDATE kinds SET id = 100 WHERE id = 6`, Events: 3}, // key change: d, tombstone, c
		{SQL: `UPDATE pair SET v = CONCAT(IFNULL(v, ''), '!')`, Events: 4},
		{SQL: `ALTER TABLE kinds ADD COLUMN c_added INT DEFAULT 5`, Events: 0},
		{SQL: itest.FidelityInsert("kinds", myRowFull(7)), Events: 1},
		{SQL: `UPDATE kinds SET c_added = 6 WHERE id = 4`, Events: 1},
		{SQL: `DELETE FROM pair WHERE a = 1`, Events: 4},
		{SQL: `ALTER TABLE kinds DROP COLUMN c_char, MODIFY COLUMN c_small INT`, Events: 0},
		{SQL: `UPDATE kinds SET c_small = 70000 WHERE id = 7`, Events: 1},
		{SQL: `INSERT INTO texts VALUES ('Мир', '世界', 'Tiếng Việt', 'gęślą', 'Привет', 'ü', 'it''s')`, Events: 1},
		// Not the row holding 'a,b' and 'b\s': Debezium's binlog values of
		// those members are escaped as in "allowed" (a\,b, b\\s);
		// Tributary's are the members (TestMySQLEnumMembers).
		{SQL: `UPDATE texts SET s = 'カタカナ', e = 'Red', st = 'Y,ü', q = '(p)' WHERE k = 'Мир'`, Events: 1},
		{SQL: `DELETE FROM texts WHERE k = 'Мир'`, Events: 2},
		{SQL: `DELETE FROM kinds WHERE id = 1`, Events: 2},
	}
	itest.SideBySide{
		E: e.Env, Exec: func(sql string) { e.Exec(sql) }, Snapshot: snapshot, Stream: stream,
		Topics:       []string{kindsTopic, pairTopic, textsTopic},
		Debezium:     func(out string, want int) *itest.DebeziumProc { return itest.StartMariaDBDebezium(t, e, out, want) },
		Config:       e.WriteConfigWith("", "  delete_mode: record_and_tombstone\n"),
		SnapshotWait: 60 * time.Second, StreamWait: 40 * time.Second, Mariadb: true,
	}.Run(t)
}

// myFidelityTable covers the MySQL types Debezium maps,
// with column defaults of several kinds.
const myFidelityTable = `CREATE TABLE kinds (
  id INT UNSIGNED NOT NULL PRIMARY KEY,
  c_bool TINYINT(1) DEFAULT 1,
  c_boolean BOOLEAN,
  c_tiny TINYINT,
  c_utiny TINYINT UNSIGNED,
  c_small SMALLINT DEFAULT -3,
  c_usmall SMALLINT UNSIGNED,
  c_med MEDIUMINT,
  c_umed MEDIUMINT UNSIGNED,
  c_int INT NOT NULL DEFAULT 0,
  c_uint INT UNSIGNED,
  c_big BIGINT DEFAULT 42,
  c_ubig BIGINT UNSIGNED,
  c_float FLOAT,
  c_float_md FLOAT(7,3),
  c_double DOUBLE DEFAULT 2.5,
  c_dec DECIMAL(10,2) NOT NULL DEFAULT 1.50,
  c_dec0 DECIMAL(5),
  c_udec DECIMAL(8,3) UNSIGNED,
  c_bigdec DECIMAL(65,30),
  c_char CHAR(4),
  c_varchar VARCHAR(20) DEFAULT 'dflt',
  c_tinytext TINYTEXT,
  c_text TEXT,
  c_mediumtext MEDIUMTEXT,
  c_longtext LONGTEXT,
  c_latin1 VARCHAR(10) CHARACTER SET latin1,
  c_binary BINARY(4),
  c_varbinary VARBINARY(8),
  c_tinyblob TINYBLOB,
  c_blob BLOB,
  c_mediumblob MEDIUMBLOB,
  c_longblob LONGBLOB,
  c_date DATE DEFAULT '2000-01-02',
  c_dt DATETIME DEFAULT '2000-01-02 03:04:05',
  c_dt3 DATETIME(3),
  c_dt6 DATETIME(6),
  c_ts TIMESTAMP NULL,
  c_ts3 TIMESTAMP(3) NULL,
  c_ts6 TIMESTAMP(6) NULL,
  c_created TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  c_time TIME DEFAULT '01:02:03',
  c_time3 TIME(3),
  c_time6 TIME(6),
  c_year YEAR DEFAULT 2001,
  c_bit1 BIT(1) DEFAULT b'1',
  c_bit5 BIT(5),
  c_bit16 BIT(16),
  c_bit64 BIT(64),
  c_enum ENUM('red','green','blue') DEFAULT 'green',
  c_set SET('a','b','c') DEFAULT 'a,b',
  c_json JSON,
  c_zero_date DATE,
  c_zero_dt DATETIME,
  c_zero_in_date DATE,
  c_zero_nn DATETIME NOT NULL DEFAULT '0000-00-00 00:00:00'
)`

func myRowFull(id int) itest.FidelityRow {
	return itest.FidelityRow{
		"id": fmt.Sprint(id), "c_bool": "1", "c_boolean": "0", "c_tiny": "-5", "c_utiny": "200",
		"c_small": "-300", "c_usmall": "60000", "c_med": "-70000", "c_umed": "16000000",
		"c_int": "123456", "c_uint": "4000000000", "c_big": "9007199254740993", "c_ubig": "10000000000000000000",
		"c_float": "3.14", "c_float_md": "1234.567", "c_double": "2.718281828459045",
		"c_dec": "'-12345.67'", "c_dec0": "'12345'", "c_udec": "'99999.999'", "c_bigdec": "'-1234.000000000000000000000000000001'",
		"c_char": "'ab'", "c_varchar": "'hello'", "c_tinytext": "'tiny'", "c_text": `'tab	here "quoted" \\ é ✓'`,
		"c_mediumtext": "'medium'", "c_longtext": "REPEAT('long', 500)", "c_latin1": "'café'",
		"c_binary": "X'0102'", "c_varbinary": "X'00FF10'", "c_tinyblob": "X'01'", "c_blob": "X'DEADBEEF'",
		"c_mediumblob": "X'CAFE'", "c_longblob": "REPEAT(X'AB', 3000)",
		"c_date": "'2024-02-29'", "c_dt": "'2024-03-01 10:00:00'", "c_dt3": "'2024-03-01 10:00:00.123'",
		"c_dt6": "'2024-03-01 10:00:00.123456'", "c_ts": "'2024-03-01 10:00:00'", "c_ts3": "'2024-03-01 10:00:00.120'",
		"c_ts6": "'2024-03-01 10:00:00.000001'", "c_created": "'2024-01-01 00:00:00'",
		"c_time": "'13:14:15'", "c_time3": "'13:14:15.123'", "c_time6": "'-01:02:03.000004'", "c_year": "2024",
		"c_bit1": "b'1'", "c_bit5": "b'00101'", "c_bit16": "b'1000000000000001'", "c_bit64": "b'1'",
		"c_enum": "'red'", "c_set": "'a,c'", "c_json": `'{"a": 1, "b": [true, null]}'`,
		"c_zero_date": "'0000-00-00'", "c_zero_dt": "'0000-00-00 00:00:00'", "c_zero_in_date": "'2024-00-10'",
		"c_zero_nn": "'0000-00-00 00:00:00'",
	}
}

func myRowNulls(id int) itest.FidelityRow {
	return itest.FidelityRow{"id": fmt.Sprint(id), "c_created": "'2020-06-01 12:00:00'"}
}

func myRowEdges(id int) itest.FidelityRow {
	return itest.FidelityRow{
		"id": fmt.Sprint(id), "c_bool": "127", "c_boolean": "-1", "c_tiny": "-128", "c_utiny": "255",
		"c_small": "32767", "c_usmall": "65535", "c_med": "-8388608", "c_umed": "16777215",
		"c_int": "-2147483648", "c_uint": "4294967295", "c_big": "-9223372036854775808", "c_ubig": "18446744073709551615",
		"c_float": "-3.4e38", "c_float_md": "-9999.999", "c_double": "1e308",
		"c_dec": "'-99999999.99'", "c_dec0": "'-99999'", "c_udec": "0", "c_bigdec": "'12345678901234567890123456789012345.123456789012345678901234567890'",
		"c_char": "''", "c_varchar": "''", "c_tinytext": "''", "c_text": "''", "c_mediumtext": "''", "c_longtext": "''",
		"c_latin1": "''", "c_binary": "X''", "c_varbinary": "X''", "c_tinyblob": "X''", "c_blob": "X''",
		"c_mediumblob": "X''", "c_longblob": "X''",
		"c_date": "'1000-01-01'", "c_dt": "'9999-12-31 23:59:59'", "c_dt3": "'1969-12-31 23:59:59.999'",
		"c_dt6": "'9999-12-31 23:59:59.999999'", "c_ts": "'1970-01-01 00:00:01'", "c_ts3": "'2038-01-19 03:14:07.999'",
		"c_ts6": "'2038-01-19 03:14:07.999999'", "c_created": "'1999-12-31 23:59:59'",
		"c_time": "'-838:59:59'", "c_time3": "'00:00:00'", "c_time6": "'838:59:59.000000'", "c_year": "1901",
		"c_bit1": "b'0'", "c_bit5": "b'11111'", "c_bit16": "b'1111111111111111'", "c_bit64": "b'1111111111111111111111111111111111111111111111111111111111111111'",
		"c_enum": "'blue'", "c_set": "''", "c_json": `'[]'`,
		"c_zero_date": "'1970-01-01'", "c_zero_dt": "'1970-01-01 00:00:00'", "c_zero_in_date": "'2024-12-00'",
		"c_zero_nn": "'2024-06-30 00:00:00'",
	}
}
