package mysql_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// The initial snapshot's held row and a dropped table (a position is sealed
// when the stream hands it over, source.Handoff, docs/hot-path.md): an
// initial snapshot of a and b; a is read (its last row held
// for its marker while b is pending), b is dropped, and a change of a
// follows. snapshot_mode initial_only stops at the DROP's position; a run
// with snapshot_mode initial after it must still publish a's last row.
func TestMySQLHeldRowTableDroppedInitialOnly(t *testing.T) {
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) { heldRowDrop(t) })
	}
}

func heldRowDrop(t *testing.T) {
	e := itest.NewMyEnv(t, "myheld")
	e.Exec(`CREATE TABLE a (k INT PRIMARY KEY, v INT)`)
	e.Exec(`INSERT INTO a VALUES (1,1),(2,2),(3,3)`)
	e.Exec(`CREATE TABLE b (k INT PRIMARY KEY, v INT)`)
	e.Exec(`INSERT INTO b VALUES (1,1)`)
	locker, err := client.Connect(itest.MariadbAddr, "root", "root", e.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	writer, err := client.Connect(itest.MariadbAddr, "root", "root", e.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	if _, err := locker.Execute("LOCK TABLES b WRITE"); err != nil {
		t.Fatal(err)
	}
	topic := e.Prefix + "." + e.DB + ".a"
	p := e.StartWith([]string{"GOMAXPROCS=1"}, "run", "--config", e.WriteConfig("  snapshot_mode: initial_only\n"))
	itest.WaitFor(t, 60*time.Second, "a's first two rows", func() bool { return itest.TopicEnd(topic) >= 2 })
	time.Sleep(time.Second)
	if n := itest.TopicEnd(topic); n != 2 {
		t.Fatalf("a has %d records, want 2 (its last row held)", n)
	}
	if _, err := writer.Execute("BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Execute("INSERT INTO a VALUES (4,4)"); err != nil {
		t.Fatal(err)
	}
	if _, err := locker.Execute("DROP TABLE b"); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Execute("COMMIT"); err != nil {
		t.Fatal(err)
	}
	if code := itest.ExitWithin(t, p, 60*time.Second, "initial_only"); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	first := p.Out.String()
	p = e.StartWith([]string{"GOMAXPROCS=1"}, "run", "--config", e.WriteConfig("  snapshot_mode: initial\n"))
	itest.WaitFor(t, 60*time.Second, "k=4 streamed", func() bool { return itest.TopicEnd(topic) >= 3 && hasKey(t, topic, 4) })
	time.Sleep(2 * time.Second)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	var got []string
	for _, m := range itest.ReadTopic(t, topic) {
		pl := m.Payload()
		after, _ := pl["after"].(map[string]any)
		got = append(got, fmt.Sprintf("%v:k=%v", pl["op"], after["k"]))
	}
	t.Logf("topic a: %s", strings.Join(got, " "))
	if !hasKey(t, topic, 3) {
		t.Errorf("row k=3 of a was never published\nfirst run:\n%s\nsecond run:\n%s", lines(first, "checkpoint", "backfilled", "resuming", "snapshot"), lines(p.Out.String(), "resuming", "snapshot"))
	}
}

func hasKey(t *testing.T, topic string, k int) bool {
	for _, m := range itest.ReadTopicIfAny(t, topic) {
		if after, ok := m.Payload()["after"].(map[string]any); ok && fmt.Sprint(after["k"]) == fmt.Sprint(k) {
			return true
		}
	}
	return false
}

func lines(out string, words ...string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				b.WriteString(l + "\n")
				break
			}
		}
	}
	return b.String()
}
