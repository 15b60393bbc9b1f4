package itest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary is the tributary binary under test, built once by Main.
var Binary string

// RaceBuilt: Main built Binary with the race detector (GOFLAGS=-race, make
// race), whose shadow memory is a multiple of the process's own: a bound
// on its resident memory does not apply then.
var RaceBuilt = slices.Contains(strings.Fields(os.Getenv("GOFLAGS")), "-race")

// Proc is a running tributary.
type Proc struct {
	Cmd  *exec.Cmd
	Out  *SyncBuffer
	Done chan struct{}
	Err  error
}

// SyncBuffer is a process's output, written and read from several
// goroutines.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Start starts the binary with args in the test's directory; it is
// killed when the test ends.
func (e *Env) Start(args ...string) *Proc {
	e.T.Helper()
	return e.StartWith(nil, args...)
}

// StartWith starts the binary with extra environment variables.
func (e *Env) StartWith(extraEnv []string, args ...string) *Proc {
	e.T.Helper()
	p := &Proc{Cmd: exec.Command(Binary, args...), Out: &SyncBuffer{}, Done: make(chan struct{})}
	p.Cmd.Stdout, p.Cmd.Stderr = p.Out, p.Out
	p.Cmd.Dir = e.Dir
	p.Cmd.Env = append(os.Environ(), extraEnv...)
	if err := p.Cmd.Start(); err != nil {
		e.T.Fatal(err)
	}
	go func() { p.Err = p.Cmd.Wait(); close(p.Done) }()
	e.T.Cleanup(func() {
		select {
		case <-p.Done:
		default:
			p.Cmd.Process.Kill()
			<-p.Done
		}
	})
	return p
}

// Stop sends SIGTERM and returns the exit code.
func (p *Proc) Stop(t *testing.T) int {
	t.Helper()
	p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.Done:
	case <-time.After(60 * time.Second):
		p.Cmd.Process.Kill()
		t.Fatalf("tributary did not stop within 60 s of SIGTERM; output:\n%s", p.Out)
	}
	return p.Cmd.ProcessState.ExitCode()
}

// Kill SIGKILLs the process and waits for it.
func (p *Proc) Kill() {
	p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.Done
}

// Freeze SIGSTOPs the process and returns once every thread of it has
// stopped. kill(2) returns when the signal is queued, not when the process
// has stopped: the kernel wakes one thread to start the group stop, which
// then stops the others, and on a loaded host the process runs on for
// milliseconds meanwhile (the clean-clone CI saw a frozen pipeline read and
// produce rows inserted after the kill returned). Linux only (/proc).
func (p *Proc) Freeze(t *testing.T) {
	t.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	dir := fmt.Sprintf("/proc/%d/task", p.Cmd.Process.Pid)
	deadline := time.Now().Add(10 * time.Second)
	for !allStopped(dir) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d not stopped 10 s after SIGSTOP", p.Cmd.Process.Pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// allStopped reports whether every thread under dir (/proc/PID/task) is
// stopped (state T, or t under a tracer).
func allStopped(dir string) bool {
	tasks, err := os.ReadDir(dir)
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, task.Name(), "stat"))
		if err != nil {
			return false
		}
		// "tid (comm) state …": comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
			return false
		}
	}
	return true
}

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.Done:
		return true
	default:
		return false
	}
}

// KilledBy reports whether the process ended by SIGKILL.
func (p *Proc) KilledBy(sig syscall.Signal) bool {
	ws, ok := p.Cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// WaitFor is the function WaitFor that fails at once, with the output, when the
// process exits meanwhile.
func (p *Proc) WaitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	WaitFor(t, timeout, what, func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited (%v) while waiting for %s; output:\n%s", p.Err, what, p.Out)
		}
		return cond()
	})
}

// Run runs tributary to its end (at most 90 s) and returns its output
// and exit code.
func (e *Env) Run(args ...string) (string, int) {
	e.T.Helper()
	p := e.Start(args...)
	select {
	case <-p.Done:
	case <-time.After(90 * time.Second):
		p.Kill()
		e.T.Fatalf("%v still running after 90 s:\n%s", args, p.Out)
	}
	return p.Out.String(), p.Cmd.ProcessState.ExitCode()
}

// WaitFor polls cond until it holds or the timeout passes.
func WaitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// WaitOrDump is WaitFor that shows the pipeline's output (its tail) when
// the wait fails or the pipeline exits.
func WaitOrDump(t *testing.T, p *Proc, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if p.Exited() || time.Now().After(deadline) {
			out := p.Out.String()
			if len(out) > 8000 {
				out = out[len(out)-8000:]
			}
			t.Fatalf("waiting for %s: timed out after %s or tributary exited; output (tail):\n%s", what, timeout, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ExitWithin waits for p to end and returns its exit code.
func ExitWithin(t *testing.T, p *Proc, d time.Duration, what string) int {
	t.Helper()
	select {
	case <-p.Done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %s; output:\n%s", what, d, p.Out)
	}
	return p.Cmd.ProcessState.ExitCode()
}
