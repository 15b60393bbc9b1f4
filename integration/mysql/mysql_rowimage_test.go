package mysql_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLMinimalRowImageRefused: the pipeline checks at start that the
// server logs binlog_row_image = FULL, but a session may log MINIMAL (or
// NOBLOB) images of its own changes, which leave out columns: an update's
// unchanged columns, its key among them; a delete's columns but the key.
// The message cannot hold a value the binlog does not. Before, such a
// column read as NULL: an update became a delete of the row (published)
// and a create without a key, which stopped the pipeline, and a delete's
// before image carried each column's default or zero. Now the change is
// refused before any of it is published, with an error that names the
// table, the column and the fix. A NOBLOB image of a table without BLOB
// or TEXT columns holds every column and is published as usual.
func TestMySQLMinimalRowImageRefused(t *testing.T) {
	e := itest.NewMyEnv(t, "myrowimg")
	e.Exec("CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL DEFAULT 42, b VARCHAR(10))")
	e.Exec("INSERT INTO t VALUES (1, 1, 'x'), (2, 2, 'y')")
	topic := e.Prefix + "." + e.DB + ".t"
	p := e.Start("run", "--config", e.WriteConfig(""))
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 2 })

	e.Exec("UPDATE t SET a = 9 WHERE id = 1")
	e.Exec("SET SESSION binlog_row_image = 'NOBLOB'")
	e.Exec("UPDATE t SET a = 10 WHERE id = 1") // no BLOB: a whole image
	itest.WaitFor(t, 60*time.Second, "the FULL and NOBLOB updates", func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited before the MINIMAL update: %v\n%s", p.Err, p.Out)
		}
		return itest.TopicEnd(topic) >= 4
	})
	e.Exec("SET SESSION binlog_row_image = 'MINIMAL'")
	e.Exec("UPDATE t SET b = 'z' WHERE id = 2")
	itest.WaitFor(t, 60*time.Second, "the pipeline to stop at the MINIMAL update", p.Exited)
	for _, want := range []string{e.DB + ".t at ", "a row image of this update leaves out column a", "binlog_row_image = FULL", "backfill the table again"} {
		if !strings.Contains(p.Out.String(), want) {
			t.Errorf("output does not say %q:\n%s", want, p.Out)
		}
	}

	var got []string
	for _, m := range itest.ReadTopic(t, topic) {
		pl := m.Payload()
		if pl["op"] == "r" {
			continue
		}
		after, _ := pl["after"].(map[string]any)
		got = append(got, fmt.Sprintf("%v %v a=%v", pl["op"], m.Key["payload"], after["a"]))
	}
	if want := []string{"u map[id:1] a=9", "u map[id:1] a=10"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records after the backfill %q, want %q (nothing of the MINIMAL update)", got, want)
	}
}
