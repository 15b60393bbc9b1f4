package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// mariadbPeerVersion is the Debezium release of the MariaDB side-by-side
// test: integration/debezium/mariadb/pom.xml. The MariaDB connector is not
// on Maven Central for 3.6.x (newest: 3.5.0.Final) and the 3.6.1 MySQL
// connector refuses MariaDB, so the peer is the newest MariaDB connector
// there is; its source.version ("3.5.0.Final" where we write
// debeziumVersion) is the one expected difference, checked and then masked.
const mariadbPeerVersion = "3.5.0.Final"

// mysqlVolatileFields are the value fields that legitimately differ
// between Debezium's MariaDB connector and Tributary on every message: the
// processing times (each connector's own clock) and source.version (see
// mariadbPeerVersion).
//
// Everything else of a streamed message — schemas, keys, row images, op,
// connector, name, db, table, snapshot, server_id, gtid, file, pos, row,
// thread, query and source.ts_ms (the binlog event's time, the same for
// both) — must be identical.
var mysqlVolatileFields = []string{
	"payload.ts_ms", "payload.ts_us", "payload.ts_ns",
	"payload.source.version",
}

// mysqlSnapshotVolatileFields are volatile in snapshot ('r') messages
// only: each connector reads its own snapshot, at its own time and binlog
// position (the same position only when nothing was written in between,
// and the test MariaDB is shared with other tests).
var mysqlSnapshotVolatileFields = []string{
	"payload.source.ts_ms", "payload.source.ts_us", "payload.source.ts_ns",
	"payload.source.file", "payload.source.pos",
}

// sanitizeMySQL masks mysqlVolatileFields, and mysqlSnapshotVolatileFields
// in 'r' messages, whose ZonedTimestamp values it also normalises (see
// zonedFraction).
func sanitizeMySQL(v any) any {
	v = sanitizeFields(v, mysqlVolatileFields)
	if m, ok := v.(map[string]any); ok {
		if p, ok := m["payload"].(map[string]any); ok && p["op"] == "r" {
			v = sanitizeFields(v, mysqlSnapshotVolatileFields)
			if after, ok := p["after"].(map[string]any); ok {
				for k, x := range after {
					if s, ok := x.(string); ok {
						after[k] = zonedFraction.ReplaceAllString(s, "$1Z")
					}
				}
			}
		}
	}
	return v
}

// zonedFraction matches the fraction of an io.debezium.time.ZonedTimestamp
// with its trailing zeros. A deliberate difference: Debezium's binlog
// connectors write a TIMESTAMP(n) value with n fractional digits when it
// comes from the binlog ("2024-03-01T10:00:00.120Z" for TIMESTAMP(3)) but
// with the trailing zeros dropped when it comes from the snapshot's JDBC
// read ("2024-03-01T10:00:00.12Z"). Tributary writes n digits in both, so
// a column's values have one format; 'r' messages are compared with the
// zeros trimmed on both sides.
var zonedFraction = regexp.MustCompile(`^(\d{4,}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d*[1-9])?)\.?0*Z$`)

// TestDebeziumFidelityMySQL runs real Debezium (the embedded engine of
// integration/debezium, the MariaDB connector, its defaults) and Tributary
// against one MariaDB database and compares every key and value they
// produce, message by message: schemas must be identical and payloads
// identical except for the volatile fields above.
func TestDebeziumFidelityMySQL(t *testing.T) {
	e := newMyEnv(t, "myfid")
	// Zero dates need a sql_mode without NO_ZERO_DATE/NO_ZERO_IN_DATE and,
	// for '2024-00-10', without strict mode.
	e.exec(`SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'`)
	e.exec(`SET SESSION time_zone = '+00:00'`)
	e.exec(myFidelityTable)
	e.exec(`CREATE TABLE pair (a INT NOT NULL, b VARCHAR(10) NOT NULL, v TEXT, PRIMARY KEY (a, b))`)
	// Text in other character sets, and ENUM/SET members with commas and
	// capitals (docs/mysql.md).
	e.exec(`CREATE TABLE texts (k VARCHAR(20) CHARACTER SET cp1251 PRIMARY KEY, s VARCHAR(20) CHARACTER SET sjis,
  u VARCHAR(20) CHARACTER SET utf16, g VARCHAR(20) CHARACTER SET latin2, e ENUM('a,b','Red','Привет') CHARACTER SET cp1251,
  st SET('x','Y','ü') CHARACTER SET latin1, q ENUM('it''s','b\\s','(p)',' sp'))`)
	kindsTopic, pairTopic, textsTopic := e.prefix+"."+e.db+".kinds", e.prefix+"."+e.db+".pair", e.prefix+"."+e.db+".texts"
	createSinglePartitionTopics(t, kindsTopic, pairTopic, textsTopic)

	snapshot := []fidelityStep{
		{fidelityInsert("kinds", myRowFull(1)), 1},
		{fidelityInsert("kinds", myRowNulls(2)), 1},
		{fidelityInsert("kinds", myRowEdges(3)), 1},
		{`INSERT INTO pair VALUES (9, 'z', 'snap')`, 1},
		{`INSERT INTO texts VALUES ('Привет', 'こんにちは', 'héllo 😀', 'Zażółć', 'a,b', 'x,Y', 'b\\s')`, 1},
	}
	// The stream: every statement with the number of messages it makes (a
	// delete is a 'd' and a tombstone).
	stream := []fidelityStep{
		{fidelityInsert("kinds", myRowFull(4)), 1},
		{fidelityInsert("kinds", myRowNulls(5)), 1},
		{fidelityInsert("kinds", myRowEdges(6)), 1},
		{`INSERT INTO pair VALUES (1, 'a', 'x'), (1, 'b', 'y'), (2, 'a', NULL)`, 3}, // one rows event: row 0, 1, 2
		{`UPDATE kinds SET c_int = c_int + 1, c_text = 'updated', c_json = '{"x": 2}' WHERE id = 4`, 1},
		{`BEGIN`, 0},
		{`UPDATE kinds SET c_enum = 'blue', c_set = 'a,b,c', c_bit5 = b'10101' WHERE id = 1`, 1},
		{`DELETE FROM kinds WHERE id = 5`, 2},
		{`COMMIT`, 0},
		{`UPDATE kinds SET id = 100 WHERE id = 6`, 3}, // key change: d, tombstone, c
		{`UPDATE pair SET v = CONCAT(IFNULL(v, ''), '!')`, 4},
		{`ALTER TABLE kinds ADD COLUMN c_added INT DEFAULT 5`, 0},
		{fidelityInsert("kinds", myRowFull(7)), 1},
		{`UPDATE kinds SET c_added = 6 WHERE id = 4`, 1},
		{`DELETE FROM pair WHERE a = 1`, 4},
		{`ALTER TABLE kinds DROP COLUMN c_char, MODIFY COLUMN c_small INT`, 0},
		{`UPDATE kinds SET c_small = 70000 WHERE id = 7`, 1},
		{`INSERT INTO texts VALUES ('Мир', '世界', 'Tiếng Việt', 'gęślą', 'Привет', 'ü', 'it''s')`, 1},
		// Not the row holding 'a,b' and 'b\s': Debezium's binlog values of
		// those members are escaped as in "allowed" (a\,b, b\\s);
		// Tributary's are the members (TestMySQLEnumMembers).
		{`UPDATE texts SET s = 'カタカナ', e = 'Red', st = 'Y,ü', q = '(p)' WHERE k = 'Мир'`, 1},
		{`DELETE FROM texts WHERE k = 'Мир'`, 2},
		{`DELETE FROM kinds WHERE id = 1`, 2},
	}
	sideBySide{
		e: e.env, exec: func(sql string) { e.exec(sql) }, snapshot: snapshot, stream: stream,
		topics:       []string{kindsTopic, pairTopic, textsTopic},
		debezium:     func(out string, want int) *debeziumProc { return startMariaDBDebezium(t, e, out, want) },
		config:       e.writeConfigWith("", "  delete_mode: record_and_tombstone\n"),
		snapshotWait: 60 * time.Second, streamWait: 40 * time.Second, mariadb: true,
	}.run(t)
}

// keepFidelityOutput writes both sides of topic as JSON lines to the
// folder $FIDELITY_KEEP names, when set, for a look at whole messages.
func keepFidelityOutput(t *testing.T, topic string, dbz, trib []rawRecord) {
	dir := os.Getenv("FIDELITY_KEEP")
	if dir == "" {
		return
	}
	for side, recs := range map[string][]rawRecord{"debezium": dbz, "tributary": trib} {
		var b []byte
		for _, r := range recs {
			line, _ := json.Marshal(map[string]any{"key": r.key, "value": r.value})
			b = append(append(b, line...), '\n')
		}
		path := filepath.Join(dir, topic+"."+side+".jsonl")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Errorf("FIDELITY_KEEP: %v", err)
		}
	}
	t.Logf("FIDELITY_KEEP: both sides of %s written to %s", topic, dir)
}

// checkSourceVersions records a difference unless every Debezium message
// says mariadbPeerVersion and every Tributary message debeziumVersion.
func checkSourceVersions(d *fidelityDiffs, topic string, dbz, trib []rawRecord) {
	check := func(recs []rawRecord, want, who string) {
		for i, r := range recs {
			m, _ := r.value.(map[string]any)
			p, _ := m["payload"].(map[string]any)
			s, _ := p["source"].(map[string]any)
			if s == nil {
				continue
			}
			if got := fmt.Sprint(s["version"]); got != want {
				d.add(topic, i, "value.payload.source.version ("+who+")", want, got)
				return
			}
		}
	}
	check(dbz, mariadbPeerVersion, "debezium")
	check(trib, debeziumVersion, "tributary")
}

// myFidelityTable covers the MySQL types Debezium maps (issue 6 item 5),
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

func myRowFull(id int) fidelityRow {
	return fidelityRow{
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

func myRowNulls(id int) fidelityRow {
	return fidelityRow{"id": fmt.Sprint(id), "c_created": "'2020-06-01 12:00:00'"}
}

func myRowEdges(id int) fidelityRow {
	return fidelityRow{
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
