package cli_test

import (
	"fmt"
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

// TestReportLogLinesOnce: test-connection and tables ask the source the
// same questions several times; a driver's note about a table (MariaDB:
// a table without a primary key) is logged once, not once per question.
func TestReportLogLinesOnce(t *testing.T) {
	e := itest.NewMyEnv(t, "logonce")
	e.Exec("CREATE TABLE nopk (v VARCHAR(10))")
	e.Exec("CREATE TABLE keyed (id INT PRIMARY KEY)")
	cfg := e.WriteConfig(fmt.Sprintf("  tables: [%s.nopk, %s.keyed]\n", e.DB, e.DB))
	for _, cmd := range []string{"test-connection", "tables"} {
		out, code := e.Run(cmd, "--config", cfg)
		if n := strings.Count(out, "capturing a table without a primary key"); code != 0 || n != 1 {
			t.Errorf("%s: exit %d, the note on the keyless table %d times, want 0 and once:\n%s", cmd, code, n, out)
		}
	}
}
