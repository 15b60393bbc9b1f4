package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tributary-cdc/tributary/integration/procstat"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat; 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// cpuSeconds is user + system CPU time of the process (all its threads) so far.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces and parentheses: fields start after the last ')'.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(fields[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return float64(utime+stime) / clockTicks, nil
}

// child is a publisher process the benchmark started and owns.
type child struct {
	cmd  *exec.Cmd
	log  string // combined output file
	done chan struct{}
	err  error
}

func startChild(cmd *exec.Cmd, logPath string) (*child, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	if cmd.Stderr == nil {
		cmd.Stderr = f
	}
	if cmd.Stdout == nil {
		cmd.Stdout = f
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	c := &child{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		f.Close()
		close(c.done)
	}()
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// stop sends SIGTERM, waits up to grace, then kills.
func (c *child) stop(grace time.Duration) error {
	select {
	case <-c.done:
		return c.err
	default:
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		return nil
	case <-time.After(grace):
		c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("%s did not stop within %s of SIGTERM", c.cmd.Path, grace)
	}
}

// tail is the end of the child's log, for error messages.
func (c *child) tail() string {
	b, _ := os.ReadFile(c.log)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// runPeak runs cmd to its end and returns its combined output and peak RSS in MB: VmHWM,
// read every 50 ms while it runs. Not rusage's ru_maxrss: Linux folds into it the
// high-water mark of the address space the child was forked in, the harness's.
func runPeak(cmd *exec.Cmd) ([]byte, float64, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	peak := 0.0
	for {
		if mb, err := procstat.PeakRSSMB(cmd.Process.Pid); err == nil && mb > peak {
			peak = mb
		}
		select {
		case err := <-done:
			return out.Bytes(), peak, err
		case <-tick.C:
		}
	}
}
