package itest

import (
	"os/exec"
	"testing"
)

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

func TestConnection(t *testing.T, e *Env, cfg string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(Binary, append([]string{"test-connection", "--config", cfg}, args...)...)
	cmd.Dir = e.Dir
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}
