package itest

import (
	"os/exec"
	"testing"

	_ "github.com/tributary-cdc/tributary/pkg/source/postgres" // source.type postgres
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

// OutTail is the end of a process's output, for failure messages.
func OutTail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}
