package integration

import (
	"fmt"
	"testing"
	"time"
)

// TestPgArrayMultiDim: PostgreSQL does not enforce an array column's
// declared dimensions, so any array column can hold a value of two or
// more. The pipeline keeps running and every such row is published, in the
// snapshot and in the stream, its elements flattened in storage order
// (docs/types.md). Not side by side: Debezium 3.6 garbles these values
// (an int[] '{{1,2},{3,4}}' is [null,null], a text[] one Java object names,
// "[Ljava.lang.String;@7a317607"; seen with its harness).
func TestPgArrayMultiDim(t *testing.T) {
	e := newEnv(t, "pgmd")
	e.exec(`CREATE TABLE md_t (id int PRIMARY KEY, a int[], s text[], n int)`)
	e.exec(`INSERT INTO md_t VALUES (1, '{{1,2},{3,4}}', '{{"a","b c"},{"{é}",NULL}}', 1), (2, '{5,6}', '{x}', 2)`)
	cfg := e.writeConfig("")
	topic := e.prefix + ".public.md_t"
	p := e.start("run", "--config", cfg)
	waitFor(t, 60*time.Second, "2 backfilled rows", func() bool { return topicEnd(topic) >= 2 || p.exited() })
	e.exec(`INSERT INTO md_t VALUES (3, '[0:0][1:2]={{NULL,-1}}', '{{{"q"}}}', 3)`)
	e.exec(`UPDATE md_t SET a = '{{7},{8}}' WHERE id = 2`)
	e.exec(`INSERT INTO md_t VALUES (4, '{9}', '{y}', 4)`)
	waitFor(t, 60*time.Second, "5 messages", func() bool { return topicEnd(topic) >= 5 || p.exited() })
	if p.exited() {
		t.Fatalf("the pipeline stopped; output:\n%s", p.out)
	}
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0; output:\n%s", code, p.out)
	}
	want := map[string]string{
		"r 1": "[1 2 3 4] [a b c {é} <nil>]", "r 2": "[5 6] [x]",
		"c 3": "[<nil> -1] [q]", "u 2": "[7 8] [x]", "c 4": "[9] [y]",
	}
	got := map[string]string{}
	for _, m := range readTopic(t, topic) {
		after, _ := m.payload()["after"].(map[string]any)
		got[fmt.Sprintf("%v %v", m.payload()["op"], after["id"])] = fmt.Sprintf("%v %v", after["a"], after["s"])
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
