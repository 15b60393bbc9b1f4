package mysql_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLTypesAndDDL backfills and streams a table covering the MySQL
// types, then changes its shape mid-stream (ADD, MODIFY, DROP COLUMN,
// RENAME COLUMN): rows after each DDL are published with the new columns.
func TestMySQLTypesAndDDL(t *testing.T) {
	e := itest.NewMyEnv(t, "mytypes")
	e.Exec(`CREATE TABLE kinds (
  id INT UNSIGNED PRIMARY KEY,
  flag TINYINT(1), small SMALLINT UNSIGNED, med MEDIUMINT, big BIGINT UNSIGNED,
  f FLOAT, d DOUBLE, amount DECIMAL(10,2) NOT NULL,
  name VARCHAR(20), body TEXT, raw VARBINARY(8), blb BLOB,
  day DATE, at DATETIME, at3 DATETIME(3), ts TIMESTAMP(6) NULL, tm TIME(6), yr YEAR,
  b1 BIT(1), b12 BIT(12), e ENUM('red','green'), s SET('a','b','c'), j JSON)`)
	e.Exec(`INSERT INTO kinds VALUES (1, 1, 65535, -8388608, 18446744073709551615, 1.5, 2.25, 12.30,
  'héllo', 'text', X'00FF', X'DEADBEEF', '2024-02-29', '2024-02-29 23:59:59', '2024-02-29 23:59:59.123',
  '2024-02-29 23:59:59.000001', '-838:59:59', 2024, b'1', b'100000000001', 'green', 'a,c', '{"k": [1, 2]}')`)
	e.Exec(`INSERT INTO kinds (id, amount, day) VALUES (2, 0, '0000-00-00')`)
	cfg := e.WriteConfig("")
	topic := e.Prefix + "." + e.DB + ".kinds"
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 2 })

	e.Exec(`INSERT INTO kinds (id, amount, at3, e) VALUES (3, 1.5, '2000-01-01 00:00:00.5', 'red')`)
	e.Exec(`ALTER TABLE kinds ADD COLUMN note VARCHAR(10) DEFAULT 'n'`)
	e.Exec(`INSERT INTO kinds (id, amount, note) VALUES (4, 4, 'hi')`)
	e.Exec(`ALTER TABLE kinds MODIFY COLUMN note VARCHAR(40) NOT NULL DEFAULT 'm'`)
	e.Exec(`UPDATE kinds SET note = 'after modify' WHERE id = 4`)
	// The column default of u4 ('m') is not in the binlog: it is read from
	// the catalog when the MODIFY streams by. Let the stream reach u4 before
	// the next DDL changes the catalog again (a lagging stream publishes u4
	// with its logged shape, without the default; see the README).
	itest.WaitFor(t, 60*time.Second, "u4 on the topic", func() bool { return itest.TopicEnd(topic) >= 5 })
	e.Exec(`ALTER TABLE kinds CHANGE COLUMN note remark VARCHAR(40)`)
	e.Exec(`INSERT INTO kinds (id, amount, remark) VALUES (5, 5, 'renamed')`)
	e.Exec(`ALTER TABLE kinds DROP COLUMN remark, DROP COLUMN j`)
	e.Exec(`INSERT INTO kinds (id, amount) VALUES (6, 6)`)
	e.Exec(`DELETE FROM kinds WHERE id = 1`)
	itest.WaitFor(t, 60*time.Second, "the streamed changes", func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
		}
		return itest.TopicEnd(topic) >= 8
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	byOp := map[string]map[string]any{} // "<op><id>" → payload
	schemas := map[string]string{}      // "<op><id>" → value schema JSON
	for _, m := range itest.ReadTopic(t, topic) {
		pl := m.Payload()
		row, _ := pl["after"].(map[string]any)
		if row == nil {
			row, _ = pl["before"].(map[string]any)
		}
		k := pl["op"].(string) + jsonString(row["id"])
		byOp[k] = pl
		schemas[k] = jsonString(m.Value["schema"])
	}
	r1 := byOp["r1"]
	if r1 == nil {
		t.Fatalf("no read event for id 1; have %v", payloadKeys(byOp))
	}
	after := r1["after"].(map[string]any)
	for field, want := range map[string]string{
		"flag": `1`, "small": `65535`, "med": `-8388608`, "big": `-1`, "f": `1.5`, "d": `2.25`,
		"amount": `"BM4="`, "name": `"héllo"`, "raw": `"AP8="`, "blb": `"3q2+7w=="`,
		"day": `19782`, "at": `1709251199000`, "at3": `1709251199123`,
		"ts": `"2024-02-29T23:59:59.000001Z"`, "tm": `-3020399000000`, "yr": `2024`,
		"b1": `true`, "b12": `"AQg="`, "e": `"green"`, "s": `"a,c"`,
	} {
		if got := jsonString(after[field]); got != want {
			t.Errorf("r id 1 %s = %s, want %s", field, got, want)
		}
	}
	src := r1["source"].(map[string]any)
	if src["connector"] != "mariadb" || src["snapshot"] != "first" || src["db"] != e.DB || src["table"] != "kinds" {
		t.Errorf("read source block: %v", src)
	}
	if r2 := byOp["r2"]; r2 == nil || r2["after"].(map[string]any)["day"] != nil {
		t.Errorf("zero date must be null: %v", r2)
	}
	// Schemas went through map[string]any: keys are sorted.
	for _, want := range []string{
		`"name":"io.debezium.time.Year"`, `"name":"io.debezium.time.MicroTime"`, `"name":"io.debezium.time.Timestamp"`,
		`"name":"io.debezium.time.ZonedTimestamp"`, `"name":"io.debezium.connector.mariadb.Source"`,
		`{"field":"e","name":"io.debezium.data.Enum","optional":true,"parameters":{"allowed":"red,green"},"type":"string","version":1}`,
		`{"field":"s","name":"io.debezium.data.EnumSet","optional":true,"parameters":{"allowed":"a,b,c"},"type":"string","version":1}`,
		`{"field":"b12","name":"io.debezium.data.Bits","optional":true,"parameters":{"length":"12"},"type":"bytes","version":1}`,
		`{"field":"f","optional":true,"type":"float"}`, `{"field":"flag","optional":true,"type":"int16"}`,
		`{"field":"id","optional":false,"type":"int64"}`, `{"field":"b1","optional":true,"type":"boolean"}`,
	} {
		if !strings.Contains(schemas["r1"], want) {
			t.Errorf("schema of r1 lacks %s", want)
		}
	}

	c3 := byOp["c3"]
	if c3 == nil || jsonString(c3["after"].(map[string]any)["at3"]) != "946684800500" {
		t.Errorf("streamed c id 3: %v", c3)
	} else if s := c3["source"].(map[string]any); s["gtid"] == nil || s["file"] == "" || s["server_id"] != float64(1) {
		t.Errorf("streamed source block: %v", s)
	}
	if c4 := byOp["c4"]; c4 == nil || c4["after"].(map[string]any)["note"] != "hi" || !strings.Contains(schemas["c4"], `"field":"note"`) {
		t.Errorf("after ADD COLUMN: %v", c4)
	}
	if u4 := byOp["u4"]; u4 == nil || u4["after"].(map[string]any)["note"] != "after modify" ||
		!strings.Contains(schemas["u4"], `{"default":"m","field":"note","optional":false,"type":"string"}`) {
		t.Errorf("after MODIFY COLUMN: %v\n%s", u4, schemas["u4"])
	}
	if c5 := byOp["c5"]; c5 == nil || c5["after"].(map[string]any)["remark"] != "renamed" {
		t.Errorf("after CHANGE COLUMN: %v", c5)
	}
	if c6 := byOp["c6"]; c6 == nil || strings.Contains(schemas["c6"], `"field":"remark"`) || strings.Contains(schemas["c6"], `"field":"j"`) {
		t.Errorf("after DROP COLUMN: %v", c6)
	}
	if d1 := byOp["d1"]; d1 == nil || d1["before"].(map[string]any)["name"] != "héllo" {
		t.Errorf("delete of id 1 (after the DROP COLUMN): %v", d1)
	}
}

// TestMySQLResnapshotRequired: a checkpoint whose unread transactions
// were purged with their binlog file fails the start with "resnapshot
// required" instead of starting from now.
func TestMySQLResnapshotRequired(t *testing.T) {
	e := itest.FaultMyEnv(t, "mypurge") // a server of its own: the purge below takes every reader's position
	e.Exec(`CREATE TABLE t (id INT PRIMARY KEY)`)
	e.Exec(`INSERT INTO t VALUES (1)`)
	cfg := e.WriteConfig("")
	topic := e.Prefix + "." + e.DB + ".t"
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 1 })
	time.Sleep(1500 * time.Millisecond) // a checkpoint
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	e.Exec(`INSERT INTO t VALUES (2)`) // not read: purged below
	e.Exec(`FLUSH BINARY LOGS`)
	r := e.Exec(`SHOW MASTER STATUS`)
	file, _ := r.GetString(0, 0)
	// The server keeps a file another binlog reader on this shared server
	// still reads (PURGE only warns): purge until the older files are gone.
	itest.WaitFor(t, 60*time.Second, "the older binlog files purged", func() bool {
		e.Exec(`PURGE BINARY LOGS TO '` + file + `'`)
		first, _ := e.Exec(`SHOW BINARY LOGS`).GetString(0, 0)
		return first == file
	})
	p = e.Start("run", "--config", cfg)
	select {
	case <-p.Done:
	case <-time.After(30 * time.Second):
		t.Fatalf("tributary kept running on a purged binlog:\n%s", p.Out)
	}
	if code := p.Cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(p.Out.String(), "resnapshot required") {
		t.Fatalf("exit %d, want a failure naming \"resnapshot required\":\n%s", code, p.Out)
	}
	if strings.Contains(p.Out.String(), "root:root") {
		t.Error("the password appears in the output")
	}
}

func payloadKeys(m map[string]map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
