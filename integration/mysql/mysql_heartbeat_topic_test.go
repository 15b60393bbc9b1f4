package mysql_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMariaDBHeartbeatTopicAgainstDebezium: destination.heartbeat with a
// topic_prefix of its own (Debezium's heartbeat.interval.ms and
// topic.heartbeat.prefix) writes the heartbeat records Debezium's MariaDB
// connector writes with those settings, on the same topic: key and value
// byte for byte (ts_ms apart), and without a change in the database.
func TestMariaDBHeartbeatTopicAgainstDebezium(t *testing.T) {
	e := itest.NewMyEnv(t, "myhbtopic")
	e.Exec(`CREATE TABLE c (id INT PRIMARY KEY)`)
	out := filepath.Join(e.Dir, "debezium.jsonl")
	topic := "__tributary-hb." + e.Prefix
	since := time.Now()
	dbz := itest.StartMariaDBDebezium(t, e, out, 0, "heartbeat.interval.ms=1000\n", "topic.heartbeat.prefix=__tributary-hb\n")
	defer dbz.Stop()
	p := e.Start("run", "--config", e.WriteConfigWith("", "  heartbeat:\n    interval: 1s\n    topic_prefix: __tributary-hb\n"))
	// Tributary's beats need no change in the database.
	itest.WaitOrDump(t, p, 90*time.Second, "Tributary's heartbeats", func() bool { return itest.TopicEnd(topic) >= 3 })
	if n := itest.TopicEnd(e.Prefix + "." + e.DB + ".c"); n != 0 {
		t.Errorf("%d records on the table's topic; nothing changed", n)
	}
	// Debezium's binlog reader beats as binlog events arrive: a change a
	// second until it has.
	for i := 1; itest.DebeziumHeartbeats(t, out, topic) == 0; i++ {
		if i > 120 || dbz.Exited() {
			t.Fatalf("no heartbeat from Debezium\n%s", dbz.Out)
		}
		e.Exec(fmt.Sprintf(`INSERT INTO c VALUES (%d)`, i))
		time.Sleep(time.Second)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}
	itest.CompareHeartbeats(t, out, topic, itest.ReadRaw(t, topic), since)
}
