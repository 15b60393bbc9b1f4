package scenario_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestBackfillRequestOfTableAddedWhileStopped, on every source, with
// snapshot_mode no_data (no snapshot of its own, only those asked for): a
// table added to source.tables while the pipeline is stopped, and a
// `tributary backfill --table` of it requested then, has every row it
// held published with op r by the next run. The table is one the
// checkpoint's captured set lacks (added while down), which the next run
// must not treat as a snapshot of a table that was replaced.
func TestBackfillRequestOfTableAddedWhileStopped(t *testing.T) {
	itest.ForEachBackend(t, "bfadd", func(t *testing.T, b itest.Backend) {
		const rows = 300
		itest.CreateTables(t, b, "items", "extra")
		itest.MustExecOn(t, b, b.BulkInsert("extra", 0, 0, rows))
		e := b.Env()
		cfgFor := func(tables ...string) string {
			path := b.Config(tables, "")
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			doc := strings.Replace(string(raw), "\nsource:\n", "\nsource:\n  snapshot_mode: no_data\n", 1)
			if doc == string(raw) {
				t.Fatalf("no source section in\n%s", raw)
			}
			if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			return path
		}
		cfg := cfgFor("items")
		p := e.Start("run", "--config", cfg)
		// A row each poll: one written before the stream began is not
		// published (no_data).
		k := 0
		itest.WaitOrDump(t, p, 60*time.Second, "the first row", func() bool {
			k++
			itest.MustExecOn(t, b, fmt.Sprintf(`INSERT INTO items (k, seq, v) VALUES (%d, %d, 'one')`, k, k))
			return len(itest.ReadTopicIfAny(t, b.Topic("items"))) > 0
		})
		time.Sleep(2 * time.Second) // a checkpoint after it
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
		}

		cfg = cfgFor("items", "extra")
		if code, out := itest.BackfillCLI(t, e, "--config", cfg, "--table", b.TableID("extra")); code != 0 {
			t.Fatalf("tributary backfill: exit %d\n%s", code, out)
		}
		p = e.Start("run", "--config", cfg)
		defer p.Stop(t)
		reads := 0
		itest.WaitOrDump(t, p, 60*time.Second, "the requested backfill of the added table", func() bool {
			reads = 0
			for _, m := range itest.ReadTopicIfAny(t, b.Topic("extra")) {
				if m.Value != nil && m.Payload()["op"] == "r" {
					reads++
				}
			}
			return reads >= rows
		})
	})
}
