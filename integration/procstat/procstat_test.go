package procstat

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestPSSSharesTheBinary: two processes of one binary hold its code pages
// once between them, so each one's PSS is below its RSS, and RSS and PSS of
// a process that holds pages are both above zero.
func TestPSSSharesTheBinary(t *testing.T) {
	var cmds []*exec.Cmd
	for range 2 {
		c := exec.Command("sleep", "30")
		if err := c.Start(); err != nil {
			t.Skipf("no sleep to run: %v", err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		cmds = append(cmds, c)
	}
	for _, c := range cmds {
		// Start returns once exec has begun, before the loader has faulted
		// in the binary's pages (CI saw an RSS of 16 KiB): measure once the
		// process sleeps.
		waitAsleep(t, c.Process.Pid)
	}
	for _, c := range cmds {
		rss, err := RSSMB(c.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		pss, err := PSSMB(c.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if rss <= 0 || pss <= 0 || pss >= rss {
			t.Errorf("pid %d: RSS %.3f MiB, PSS %.3f MiB; want 0 < PSS < RSS for a binary two processes share", c.Process.Pid, rss, pss)
		}
	}
	if _, err := PSSMB(os.Getpid() + 1<<22); err == nil {
		t.Error("a process that does not exist has a PSS")
	}
}

// waitAsleep waits until /proc/<pid>/stat says the process is sleeping (S).
func waitAsleep(t *testing.T, pid int) {
	t.Helper()
	path := fmt.Sprintf("/proc/%d/stat", pid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// The state follows the command name's last closing parenthesis.
		if i := strings.LastIndex(string(b), ") "); i >= 0 && strings.HasPrefix(string(b[i+2:]), "S") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d did not reach sleep in 10 s: %s", pid, b)
		}
	}
}
