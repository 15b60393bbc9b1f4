package itest

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

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

// StatusText runs `tributary status` and returns its page.
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

// MissingReported waits until the running p reports each of tables (a
// source.tables entry) as missing where an operator looks, not only in
// the log: status --json, the human status and the
// tributary_table_missing gauge on addr (run's --http-addr).
func MissingReported(t *testing.T, e *Env, p *Proc, cfg, addr string, tables ...string) {
	t.Helper()
	p.WaitFor(t, 60*time.Second, "status and metrics to report "+strings.Join(tables, ", ")+" missing", func() bool {
		r, _ := StatusJSON(t, e, cfg)
		if r.Live == nil {
			return false
		}
		for _, table := range tables {
			if !slices.Contains(r.Live.MissingTables, table) {
				return false
			}
		}
		body := Scrape(t, addr)
		for _, table := range tables {
			if Samples(body, "tributary_table_missing", `table="`+table+`"`)[""] != 1 {
				return false
			}
		}
		return true
	})
	text := StatusText(t, e, cfg)
	for _, table := range tables {
		if !strings.Contains(text, "missing tables") || !strings.Contains(text, table) {
			t.Errorf("the human status does not name the missing table %s:\n%s", table, text)
		}
	}
}
