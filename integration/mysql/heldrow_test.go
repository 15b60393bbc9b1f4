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
// while b is pending); b is dropped; a transaction of a table not
// captured, then a change of a. The task dies (SIGKILL) while a's topic
// refuses writes; the run after it must still publish a's last row.
func TestMySQLHeldRowTableDroppedCrash(t *testing.T) {
	for i := range 2 {
		t.Run(fmt.Sprint(i), func(t *testing.T) { heldRowDropCrash(t) })
	}
}

func heldRowDropCrash(t *testing.T) {
	e := itest.FaultMyEnv(t, "myheldk")
	for _, q := range []string{"SET GLOBAL binlog_commit_wait_count = 2", "SET GLOBAL binlog_commit_wait_usec = 500000"} {
		e.Exec(q)
	}
	t.Cleanup(func() {
		if c, err := client.Connect(itest.FaultMariaDBAddr, "root", "root", ""); err == nil {
			c.Execute("SET GLOBAL binlog_commit_wait_count = 0")
			c.Close()
		}
	})
	e.Exec(`CREATE TABLE a (k INT PRIMARY KEY, v INT)`)
	e.Exec(`INSERT INTO a VALUES (1,1),(2,2),(3,3)`)
	e.Exec(`CREATE TABLE b (k INT PRIMARY KEY, v INT)`)
	e.Exec(`INSERT INTO b VALUES (1,1)`)
	e.Exec(`CREATE TABLE u (k INT PRIMARY KEY)`)
	conn := func() *client.Conn {
		c, err := client.Connect(itest.FaultMariaDBAddr, "root", "root", e.DB)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	locker, wu, wa := conn(), conn(), conn()
	if _, err := locker.Execute("LOCK TABLES b WRITE"); err != nil {
		t.Fatal(err)
	}
	topic := e.Prefix + "." + e.DB + ".a"
	cfg := e.WriteConfig(fmt.Sprintf("  tables: [%s.a, %s.b]\n", e.DB, e.DB))
	env := []string{"GOMAXPROCS=2"}
	p := e.StartWith(env, "run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "a's first two rows", func() bool { return itest.TopicEnd(topic) >= 2 })
	time.Sleep(time.Second)
	if n := itest.TopicEnd(topic); n != 2 {
		t.Fatalf("a has %d records, want 2 (its last row held)", n)
	}
	adm := itest.NewAdmin(t)
	itest.RefuseWrites(t, adm, topic, true)
	time.Sleep(2 * time.Second)
	for _, q := range []struct {
		c *client.Conn
		q string
	}{{wu, "BEGIN"}, {wu, "INSERT INTO u VALUES (1)"}, {wa, "BEGIN"}, {wa, "INSERT INTO a VALUES (4,4)"},
		{locker, "DROP TABLE b"}} {
		if _, err := q.c.Execute(q.q); err != nil {
			t.Fatalf("%s: %v", q.q, err)
		}
	}
	// u's commit and a's in one binlog group commit, u's first.
	done := make(chan error, 2)
	go func() { _, err := wu.Execute("COMMIT"); done <- err }()
	time.Sleep(20 * time.Millisecond)
	go func() { _, err := wa.Execute("COMMIT"); done <- err }()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(3 * time.Second) // a checkpoint or two
	p.Cmd.Process.Kill()
	<-p.Done
	first := p.Out.String()
	itest.RefuseWrites(t, adm, topic, false)
	time.Sleep(time.Second)
	p = e.StartWith(env, "run", "--config", cfg)
	itest.WaitFor(t, 90*time.Second, "k=4 streamed", func() bool { return hasKey(t, topic, 4) })
	heldRowPublished(t, p, topic, lines(first, "dropped", "gone"), "resuming")
}

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
	heldRowPublished(t, p, topic, lines(first, "checkpoint", "backfilled", "resuming", "snapshot"), "resuming", "snapshot")
}

// heldRowPublished stops the second run p and fails unless a's held row,
// k=3, is on a's topic; first is what the first run logged of interest,
// and words pick the second run's log lines to show.
func heldRowPublished(t *testing.T, p *itest.Proc, topic, first string, words ...string) {
	t.Helper()
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
		t.Errorf("row k=3 of a was never published\nfirst run:\n%s\nsecond run:\n%s", first, lines(p.Out.String(), words...))
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
