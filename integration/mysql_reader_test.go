package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMySQLSecondReaderRefused: two tasks with the same pipeline name (so
// the same binlog server_id) but different file checkpoint stores. MariaDB
// ends the older dump connection when a replica registers with a server_id
// already streaming, so before the fix the two knocked each other out in
// turn. The second must refuse, naming the other reader's connection and
// how to stop it; the first keeps publishing, without a second backfill.
func TestMySQLSecondReaderRefused(t *testing.T) {
	e := newMyEnv(t, "myreader")
	e.exec("CREATE TABLE a (id INT PRIMARY KEY, v TEXT)")
	e.exec("INSERT INTO a VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	cfg := e.writeConfig("")
	topic := e.prefix + "." + e.db + ".a"
	first := e.start("run", "--config", cfg)
	waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= 3 })
	e.exec("INSERT INTO a VALUES (4, 'streamed')")
	waitFor(t, 60*time.Second, "the first streamed row", func() bool { return topicEnd(topic) >= 4 })

	other := t.TempDir()
	cfg2 := filepath.Join(other, "pipeline.yaml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), filepath.Join(e.dir, "checkpoints"), filepath.Join(other, "checkpoints"), 1))
	if err := os.WriteFile(cfg2, b, 0o600); err != nil {
		t.Fatal(err)
	}
	second := e.start("run", "--config", cfg2)
	select {
	case <-second.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the second reader still runs after 60 s; output:\n%s\nfirst:\n%s", second.out, first.out)
	}
	if code := second.cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("the second reader exited 0; output:\n%s", second.out)
	}
	out := second.out.String()
	for _, want := range []string{fmt.Sprintf("tributary pid %d on ", first.cmd.Process.Pid), "Binlog Dump", "from 127.0.0.1:", "KILL <id>", "Stop the other task"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q; output:\n%s", want, out)
		}
	}
	if first.exited() {
		t.Fatalf("the first task was knocked out; output:\n%s", first.out)
	}
	e.exec("INSERT INTO a VALUES (5, 'still running')")
	waitFor(t, 60*time.Second, "the row after the refusal", func() bool { return topicEnd(topic) >= 5 })
	time.Sleep(time.Second)
	if code := first.stop(t); code != 0 {
		t.Fatalf("first task exit %d; output:\n%s", code, first.out)
	}
	if n := topicEnd(topic); n != 5 {
		t.Errorf("topic a has %d messages, want 5 (3 backfilled once, 2 inserts)", n)
	}
	if strings.Contains(first.out.String(), "reconnect") {
		t.Errorf("the first task lost its binlog connection; output:\n%s", first.out)
	}
}
