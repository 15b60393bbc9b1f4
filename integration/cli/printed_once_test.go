package cli_test

import (
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestFailurePrintedOnce: a failed check of test-connection, or the
// problem `tables` lists, is in the command's output once; the exit code
// says it failed, and no error log line repeats it.
func TestFailurePrintedOnce(t *testing.T) {
	e := itest.NewEnv(t, "printonce")
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY)`)
	cfg := e.WritePipeline(itest.PipelineConfig{Source: "  tables: ['public\\.nothing_.*']\n"})
	out, code := e.Run("test-connection", "--config", cfg)
	if code != 1 || strings.Count(out, "no table would be captured") != 1 || strings.Contains(out, `"level":"ERROR"`) || strings.Contains(out, "level=ERROR") {
		t.Errorf("test-connection: exit %d, want 1 with the failed check once and no error line:\n%s", code, out)
	}
	out, code = e.Run("tables", "--config", cfg)
	if code != 1 || !strings.Contains(out, "0 tables would be captured") || strings.Contains(out, "no table would be captured") {
		t.Errorf("tables: exit %d, want 1 saying 0 tables once:\n%s", code, out)
	}
}
