package itest

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/status"
)

// StatusJSON runs `tributary status --json` (while run may hold the
// pipeline) and decodes its report.
func StatusJSON(t *testing.T, e *Env, cfg string) (status.Report, string) {
	t.Helper()
	cmd := exec.Command(Binary, "status", "--config", cfg, "--json")
	cmd.Dir = e.Dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("status --json: %v\n%s%s", err, out, stderr.String())
	}
	var r status.Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("status --json printed no report: %v\n%s", err, out)
	}
	return r, string(out)
}

func StatusText(t *testing.T, e *Env, cfg string) string {
	t.Helper()
	cmd := exec.Command(Binary, "status", "--config", cfg)
	cmd.Dir = e.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	return string(out)
}
