package itest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/webhook"
)

// ReadSkipped reads e's local row.skipped records (no webhook URL is set).
func ReadSkipped(t *testing.T, e *Env) []webhook.RowSkipped {
	fh, err := os.Open(filepath.Join(e.Dir, "checkpoints", e.Name+".row-skipped.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []webhook.RowSkipped
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var rs webhook.RowSkipped
		if err := json.Unmarshal(sc.Bytes(), &rs); err != nil {
			t.Fatalf("row-skipped record %q: %v", sc.Text(), err)
		}
		out = append(out, rs)
	}
	return out
}

// SkippedLines reads e's local row.skipped records like ReadSkipped, for
// a pipeline still running: a line it is writing, not yet whole, is left
// for the next read.
func (e *Env) SkippedLines(t *testing.T) []webhook.RowSkipped {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.Dir, "checkpoints", e.Name+".row-skipped.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []webhook.RowSkipped
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var ev webhook.RowSkipped
		if len(line) > 0 && json.Unmarshal(line, &ev) == nil {
			out = append(out, ev)
		}
	}
	return out
}
