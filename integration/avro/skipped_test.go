package avro_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestAvroSkippedRowNamesItsKey: a row skipped with Avro keys (here its
// partition_column is null) is recorded as row.skipped with its
// primary_key read back from the Avro key, as with JSON keys.
func TestAvroSkippedRowNamesItsKey(t *testing.T) {
	e := itest.NewEnv(t, "avroskip")
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY, shard int)`)
	cfg := e.WriteConfig("  partition_column:\n    public.t: shard\n")
	itest.AppendConfig(t, cfg, "format:\n  key: avro\n  value: avro\n  schema_registry:\n    type: confluent\n    url: "+registry+"\n")
	topic := e.Prefix + ".public.t"
	p := e.Start("run", "--config", cfg)
	e.Exec(`INSERT INTO t VALUES (1, 0), (2, NULL), (3, 1)`)
	itest.WaitFor(t, 90*time.Second, "two rows and a skip", func() bool {
		return itest.TopicEnd(topic) >= 2 && len(e.SkippedLines(t)) >= 1 || p.Exited()
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}
	s := e.SkippedLines(t)
	if len(s) != 1 || fmt.Sprint(s[0].PrimaryKey) != "map[id:2]" || !strings.Contains(s[0].Reason, "partition_column shard is null") {
		t.Fatalf("row.skipped %+v, want one for id 2 with its key", s)
	}
}
