package mysql_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLMinimalRowImageUpdate: the server logs FULL row images (the
// pipeline checks the global setting at start), but a session may set
// binlog_row_image = MINIMAL (or NOBLOB) for itself. A MINIMAL update's
// after image holds only the columns it changed, not an unchanged key:
// the update must still be one update of its row, keyed by the row's key.
// Before, the key read as NULL made a delete of the row, then a create
// with no key, which stopped the pipeline (a review found it). An update
// of the key itself is still a delete of the old key and a create of the
// new one, as Debezium publishes it.
func TestMySQLMinimalRowImageUpdate(t *testing.T) {
	e := itest.NewMyEnv(t, "myrowimg")
	e.Exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10))")
	e.Exec("INSERT INTO t VALUES (1, 1, 'x'), (2, 2, 'y')")
	topic := e.Prefix + "." + e.DB + ".t"
	p := e.Start("run", "--config", e.WriteConfig(""))
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 2 })

	e.Exec("SET SESSION binlog_row_image = 'MINIMAL'")
	e.Exec("UPDATE t SET a = 10 WHERE id = 1")
	e.Exec("UPDATE t SET id = 5 WHERE id = 2")
	e.Exec("SET SESSION binlog_row_image = 'NOBLOB'")
	e.Exec("UPDATE t SET a = 11 WHERE id = 1")
	e.Exec("SET SESSION binlog_row_image = 'FULL'")
	e.Exec("UPDATE t SET a = 12 WHERE id = 1") // the last: once it is published, so is everything before
	itest.WaitFor(t, 60*time.Second, "the updates", func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
		}
		return itest.TopicEnd(topic) >= 2+1+2+1+1
	})
	time.Sleep(time.Second) // anything more would be a spurious record
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	// By key, in order (a key's records are in one partition, in order);
	// the backfill's reads left out. The columns a MINIMAL after image
	// leaves out (a of the row whose key changed) are null, as before.
	type rec struct {
		op     string
		afterA any
	}
	got := map[float64][]rec{}
	for _, m := range itest.ReadTopic(t, topic) {
		pl := m.Payload()
		id, ok := m.Key["payload"].(map[string]any)["id"].(float64)
		if !ok {
			t.Fatalf("record %v without a key id: key %v", pl["op"], m.Key)
		}
		if pl["op"] == "r" {
			continue
		}
		r := rec{op: pl["op"].(string)}
		if after, ok := pl["after"].(map[string]any); ok {
			r.afterA = after["a"]
		}
		got[id] = append(got[id], r)
	}
	want := map[float64][]rec{1: {{"u", float64(10)}, {"u", float64(11)}, {"u", float64(12)}}, 2: {{"d", nil}}, 5: {{"c", nil}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records by key %v, want %v", got, want)
	}
}
