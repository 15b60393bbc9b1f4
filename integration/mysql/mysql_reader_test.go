package mysql_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLSecondReaderRefused: two tasks with the same pipeline name (so
// the same binlog server_id) but different file checkpoint stores. MariaDB
// ends the older dump connection when a replica registers with a server_id
// already streaming, so before the fix the two knocked each other out in
// turn. The second must refuse, naming the other reader's connection and
// how to stop it; the first keeps publishing, without a second backfill.
func TestMySQLSecondReaderRefused(t *testing.T) {
	e := itest.NewMyEnv(t, "myreader")
	e.Exec("CREATE TABLE a (id INT PRIMARY KEY, v TEXT)")
	e.Exec("INSERT INTO a VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	cfg := e.WriteConfig("")
	topic := e.Prefix + "." + e.DB + ".a"
	first := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 3 })
	e.Exec("INSERT INTO a VALUES (4, 'streamed')")
	itest.WaitFor(t, 60*time.Second, "the first streamed row", func() bool { return itest.TopicEnd(topic) >= 4 })

	other := t.TempDir()
	cfg2 := filepath.Join(other, "pipeline.yaml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), filepath.Join(e.Dir, "checkpoints"), filepath.Join(other, "checkpoints"), 1))
	if err := os.WriteFile(cfg2, b, 0o600); err != nil {
		t.Fatal(err)
	}
	second := e.Start("run", "--config", cfg2)
	select {
	case <-second.Done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the second reader still runs after 60 s; output:\n%s\nfirst:\n%s", second.Out, first.Out)
	}
	if code := second.Cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("the second reader exited 0; output:\n%s", second.Out)
	}
	out := second.Out.String()
	for _, want := range []string{fmt.Sprintf("tributary pid %d on ", first.Cmd.Process.Pid), "Binlog Dump", "from 127.0.0.1:", "KILL <id>", "Stop the other task"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q; output:\n%s", want, out)
		}
	}
	if first.Exited() {
		t.Fatalf("the first task was knocked out; output:\n%s", first.Out)
	}
	e.Exec("INSERT INTO a VALUES (5, 'still running')")
	itest.WaitFor(t, 60*time.Second, "the row after the refusal", func() bool { return itest.TopicEnd(topic) >= 5 })
	time.Sleep(time.Second)
	if code := first.Stop(t); code != 0 {
		t.Fatalf("first task exit %d; output:\n%s", code, first.Out)
	}
	if n := itest.TopicEnd(topic); n != 5 {
		t.Errorf("topic a has %d messages, want 5 (3 backfilled once, 2 inserts)", n)
	}
	if strings.Contains(first.Out.String(), "reconnect") {
		t.Errorf("the first task lost its binlog connection; output:\n%s", first.Out)
	}
}

// TestMySQLCleanStopEndsDumpThread: a task that stops cleanly ends the
// server's dump thread of its binlog connection at once (KILL from a
// second connection, pkg/source/mysql/binlog.go), so SHOW SLAVE HOSTS no
// longer lists it and a task started right after streams without waiting
// for it. Closing the socket alone left the thread, and the task in that
// list, until a heartbeat failed to go out: 5 to 10 s, which the next
// task's reader check waited out before it streamed.
func TestMySQLCleanStopEndsDumpThread(t *testing.T) {
	e := itest.NewMyEnv(t, "mystop")
	e.Exec("CREATE TABLE a (id INT PRIMARY KEY)")
	cfg := e.WriteConfig("")
	topic := e.Prefix + "." + e.DB + ".a"
	p := e.Start("run", "--config", cfg)
	e.Exec("INSERT INTO a VALUES (1)")
	itest.WaitFor(t, 60*time.Second, "the streamed row", func() bool { return itest.TopicEnd(topic) >= 1 })
	tag := fmt.Sprintf("tributary pid %d on ", p.Cmd.Process.Pid)
	listed := func() bool {
		r := e.Exec("SHOW SLAVE HOSTS")
		for i := range r.Values {
			host, _ := r.GetString(i, 1)
			if strings.HasPrefix(host, tag) {
				return true
			}
		}
		return false
	}
	if !listed() {
		t.Fatalf("SHOW SLAVE HOSTS does not list the running task (%q)", tag)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	stopped := time.Now()
	itest.WaitFor(t, 20*time.Second, "the stopped task's dump thread to end", func() bool { return !listed() })
	if d := time.Since(stopped); d > 2*time.Second {
		t.Errorf("the stopped task's dump thread was listed %v after it exited, want under 2 s", d.Round(100*time.Millisecond))
	}
	next := e.Start("run", "--config", cfg)
	e.Exec("INSERT INTO a VALUES (2)")
	itest.WaitFor(t, 60*time.Second, "the row after the restart", func() bool { return itest.TopicEnd(topic) >= 2 })
	if code := next.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, next.Out)
	}
}
