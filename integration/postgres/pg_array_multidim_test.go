package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPgArrayMultiDim: PostgreSQL does not enforce an array column's
// declared dimensions, so any array column can hold a value of two or
// more. The pipeline keeps running and every such row is published, in the
// snapshot and in the stream, its elements flattened in storage order
// (docs/types.md). Not side by side: Debezium 3.6 garbles these values
// (an int[] '{{1,2},{3,4}}' is [null,null], a text[] one Java object names,
// "[Ljava.lang.String;@7a317607"; seen with its harness).
func TestPgArrayMultiDim(t *testing.T) {
	e := itest.NewEnv(t, "pgmd")
	e.Exec(`CREATE TABLE md_t (id int PRIMARY KEY, a int[], s text[], n int)`)
	e.Exec(`INSERT INTO md_t VALUES (1, '{{1,2},{3,4}}', '{{"a","b c"},{"{é}",NULL}}', 1), (2, '{5,6}', '{x}', 2)`)
	cfg := e.WriteConfig("")
	topic := e.Prefix + ".public.md_t"
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "2 backfilled rows", func() bool { return itest.TopicEnd(topic) >= 2 || p.Exited() })
	e.Exec(`INSERT INTO md_t VALUES (3, '[0:0][1:2]={{NULL,-1}}', '{{{"q"}}}', 3)`)
	e.Exec(`UPDATE md_t SET a = '{{7},{8}}' WHERE id = 2`)
	e.Exec(`INSERT INTO md_t VALUES (4, '{9}', '{y}', 4)`)
	itest.WaitFor(t, 60*time.Second, "5 messages", func() bool { return itest.TopicEnd(topic) >= 5 || p.Exited() })
	if p.Exited() {
		t.Fatalf("the pipeline stopped; output:\n%s", p.Out)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0; output:\n%s", code, p.Out)
	}
	want := map[string]string{
		"r 1": "[1 2 3 4] [a b c {é} <nil>]", "r 2": "[5 6] [x]",
		"c 3": "[<nil> -1] [q]", "u 2": "[7 8] [x]", "c 4": "[9] [y]",
	}
	got := map[string]string{}
	for _, m := range itest.ReadTopic(t, topic) {
		after, _ := m.Payload()["after"].(map[string]any)
		got[fmt.Sprintf("%v %v", m.Payload()["op"], after["id"])] = fmt.Sprintf("%v %v", after["a"], after["s"])
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: a, s = %s, want %s", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("messages %v, want %v", got, want)
	}
}
