package cli_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

func writeText(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestOneLoggerCarriesThePipeline: with log_format json every line the
// process writes, the MySQL source's own included, is a JSON object with
// the pipeline's name; the first says which version started; log_level
// warn silences info lines.
func TestOneLoggerCarriesThePipeline(t *testing.T) {
	e := itest.NewMyEnv(t, "clilog")
	e.Exec("CREATE TABLE t (id int PRIMARY KEY)")
	e.Exec("INSERT INTO t VALUES (1), (2)")
	cfg := e.WriteConfig("")
	doc, _ := os.ReadFile(cfg)
	writeText(t, cfg, string(doc)+"log_format: json\n")
	t.Setenv("TRIBUTARY_METRICS", "none")

	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the source to log that it streams", func() bool {
		if p.Exited() {
			t.Fatalf("run exited:\n%s", p.Out)
		}
		// and the snapshot of t done (status checks it below)
		return strings.Contains(p.Out.String(), "streaming binlog") && strings.Contains(p.Out.String(), "snapshot: table done")
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}
	lines := strings.Split(strings.TrimSpace(p.Out.String()), "\n")
	var sawSource, sawVersion bool
	for _, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("not a JSON line: %q", line)
			continue
		}
		if rec["pipeline"] != e.Name {
			t.Errorf("line without pipeline %s: %s", e.Name, line)
		}
		if rec["source"] == "mysql" {
			sawSource = true
		}
		if rec["msg"] == "tributary starting" && rec["version"] != nil && rec["commit"] != nil {
			sawVersion = true
		}
	}
	if !sawSource || !sawVersion {
		t.Errorf("source line seen %v, version logged at start %v:\n%s", sawSource, sawVersion, p.Out)
	}

	// status on a MySQL pipeline reports the binlog bytes after the checkpoint.
	if r, raw := itest.StatusJSON(t, e.Env, cfg); r.LagBytes == nil || r.Backfill == nil || !r.Backfill.Done {
		t.Errorf("mysql status lacks lag bytes (%s) or backfill done:\n%s", r.LagBytesError, raw)
	}

	// --log-level overrides: a run at warn writes no info line.
	e.Exec("INSERT INTO t VALUES (3)")
	p = e.Start("run", "--config", cfg, "--log-level", "warn", "--log-format", "text")
	time.Sleep(3 * time.Second)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}
	if out := p.Out.String(); strings.Contains(out, "level=INFO") || strings.Contains(out, `"level":"INFO"`) {
		t.Errorf("info lines at --log-level warn:\n%s", out)
	}
}
