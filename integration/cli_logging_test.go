package integration

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
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
	e := newMyEnv(t, "clilog")
	e.exec("CREATE TABLE t (id int PRIMARY KEY)")
	e.exec("INSERT INTO t VALUES (1), (2)")
	cfg := e.writeConfig("")
	doc, _ := os.ReadFile(cfg)
	writeText(t, cfg, string(doc)+"log_format: json\n")
	t.Setenv("TRIBUTARY_METRICS", "none")

	p := e.start("run", "--config", cfg)
	waitFor(t, 60*time.Second, "the source to log that it streams", func() bool {
		if p.exited() {
			t.Fatalf("run exited:\n%s", p.out)
		}
		// and the snapshot of t done (status checks it below)
		return strings.Contains(p.out.String(), "streaming binlog") && strings.Contains(p.out.String(), "snapshot: table done")
	})
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.out)
	}
	lines := strings.Split(strings.TrimSpace(p.out.String()), "\n")
	var sawSource, sawVersion bool
	for _, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("not a JSON line: %q", line)
			continue
		}
		if rec["pipeline"] != e.name {
			t.Errorf("line without pipeline %s: %s", e.name, line)
		}
		if rec["source"] == "mysql" {
			sawSource = true
		}
		if rec["msg"] == "tributary starting" && rec["version"] != nil && rec["commit"] != nil {
			sawVersion = true
		}
	}
	if !sawSource || !sawVersion {
		t.Errorf("source line seen %v, version logged at start %v:\n%s", sawSource, sawVersion, p.out)
	}

	// status on a MySQL pipeline reports the binlog bytes after the checkpoint.
	if r, raw := statusJSON(t, e.env, cfg); r.LagBytes == nil || r.Backfill == nil || !r.Backfill.Done {
		t.Errorf("mysql status lacks lag bytes (%s) or backfill done:\n%s", r.LagBytesError, raw)
	}

	// --log-level overrides: a run at warn writes no info line.
	e.exec("INSERT INTO t VALUES (3)")
	p = e.start("run", "--config", cfg, "--log-level", "warn", "--log-format", "text")
	time.Sleep(3 * time.Second)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.out)
	}
	if out := p.out.String(); strings.Contains(out, "level=INFO") || strings.Contains(out, `"level":"INFO"`) {
		t.Errorf("info lines at --log-level warn:\n%s", out)
	}
}
