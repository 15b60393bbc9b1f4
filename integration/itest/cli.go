package itest

import (
	"os/exec"
	"testing"
)

// BackfillCLI runs `tributary backfill` and returns its exit code and output.
func BackfillCLI(t *testing.T, e *Env, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(Binary, append([]string{"backfill"}, args...)...)
	cmd.Dir = e.Dir
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// TestConnection runs `tributary test-connection` on cfg and returns
// its exit code and output.
func TestConnection(t *testing.T, e *Env, cfg string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(Binary, append([]string{"test-connection", "--config", cfg}, args...)...)
	cmd.Dir = e.Dir
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}

// ConnReport is what `test-connection --json` prints: Kafka's checks and
// the source's.
type ConnReport struct {
	OK     bool `json:"ok"`
	Source []struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
		Fix    string `json:"fix"`
	} `json:"source"`
	Checks []struct {
		Name string `json:"name"`
		OK   bool   `json:"ok"`
	} `json:"checks"`
}

// Drop runs `tributary drop` with args (stdin not a terminal) and
// returns its exit code and output.
func (e *Env) Drop(t *testing.T, cfg string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(Binary, append([]string{"drop", "--config", cfg}, args...)...)
	cmd.Dir = e.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		t.Fatalf("drop: %v\n%s", err, out)
	}
	return 0, string(out)
}
