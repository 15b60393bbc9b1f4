package mysql_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLNonBMPBytesAgainstDebezium: utf8mb4 text outside the Basic
// Multilingual Plane (emoji and other supplementary characters), in a key
// and in values, is written with the very bytes Debezium's MariaDB
// connector writes: Jackson escapes each such character as a UTF-16
// surrogate pair with upper-case hex (\uD83D\uDE00) and writes BMP text
// raw. Decoded, the two are the same, so the differential tests could not
// see it; this one compares each field's JSON text, for a snapshot row and
// a binlog row. (MariaDB identifiers cannot hold supplementary
// characters: no column name here.)
func TestMySQLNonBMPBytesAgainstDebezium(t *testing.T) {
	e := itest.NewMyEnv(t, "mynonbmp")
	e.Exec(`CREATE TABLE t (k VARCHAR(32) CHARACTER SET utf8mb4 NOT NULL PRIMARY KEY,
  v TEXT CHARACTER SET utf8mb4, c VARCHAR(64) CHARACTER SET utf8mb4) DEFAULT CHARSET=utf8mb4`)
	const value = "emoji \U0001F600, gothic \U00010348, pile \U0001F4A9; é 中 \uFFFD"
	e.Exec(`INSERT INTO t VALUES ('k` + "\U0001F600" + `', '` + value + `', 'x` + "\U0001F4A9" + `')`)
	topic := e.Prefix + "." + e.DB + ".t"
	itest.CreateSinglePartitionTopics(t, topic)
	out := filepath.Join(e.Dir, "debezium.jsonl")
	dbz := itest.StartMariaDBDebezium(t, e, out, 0)
	defer dbz.Stop()
	p := e.Start("run", "--config", e.WriteConfig(""))
	itest.WaitOrDump(t, p, 120*time.Second, "the snapshot row from each", func() bool {
		return itest.CountLines(out) >= 1 && itest.TopicEnd(topic) >= 1
	})
	e.Exec(`INSERT INTO t VALUES ('` + "\U00010348\U0001F4A9" + ` key', '` + value + `', NULL)`)
	itest.WaitOrDump(t, p, 120*time.Second, "the binlog row from each", func() bool {
		return itest.CountLines(out) >= 2 && itest.TopicEnd(topic) >= 2
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}
	itest.CompareFieldBytes(t, itest.DebeziumRecordBytes(t, out, true), itest.TopicRecordBytes(t, topic, true), 2)
}
