package postgres_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGSecondReaderRefused: two tasks with the same pipeline name but
// different file checkpoint stores (another path: another machine, as far
// as the file lock knows). The second must not end the first's
// replication connection (only a lease may fence another reader): it
// exits saying who reads the slot (pid, address) and how to stop it, and
// the first keeps publishing, without a second backfill.
func TestPGSecondReaderRefused(t *testing.T) {
	e := itest.NewEnv(t, "pgreader")
	e.Exec(`CREATE TABLE a (k int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO a SELECT g, 'a' || g FROM generate_series(1, 10) g`)
	e.Exec(itest.SentinelTable)
	first := e.Start("run", "--config", e.WriteTablesConfig())
	e.PGCaughtUp(first, 1)

	other := t.TempDir()
	cfg2 := filepath.Join(other, "pipeline.yaml")
	b, err := os.ReadFile(filepath.Join(e.Dir, "pipeline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), filepath.Join(e.Dir, "checkpoints"), filepath.Join(other, "checkpoints"), 1))
	if err := os.WriteFile(cfg2, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := e.Conn.QueryRow(t.Context(), `SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1`, "tributary_"+e.Name).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	second := e.Start("run", "--config", cfg2)
	select {
	case <-second.Done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the second reader still runs after 60 s; output:\n%s", second.Out)
	}
	if code := second.Cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("the second reader exited 0; output:\n%s", second.Out)
	}
	out := second.Out.String()
	for _, want := range []string{fmt.Sprintf("read by pid %d from 127.0.0.1:", pid), "pg_terminate_backend", "Stop the other task"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q; output:\n%s", want, out)
		}
	}
	if first.Exited() {
		t.Fatalf("the first task was knocked out; output:\n%s", first.Out)
	}
	e.Exec(`INSERT INTO a VALUES (11, 'still running')`)
	e.PGCaughtUp(first, 2)
	if code := first.Stop(t); code != 0 {
		t.Fatalf("first task exit %d; output:\n%s", code, first.Out)
	}
	if n := itest.TopicEnd(e.Prefix + ".public.a"); n != 11 {
		t.Errorf("topic a has %d messages, want 11 (10 backfilled once, 1 insert)", n)
	}
}
