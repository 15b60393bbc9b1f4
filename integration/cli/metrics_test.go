package cli_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMetrics runs the binary with --metrics-addr and EMF on, makes a
// backfill and c/u/d changes, and checks the counts per op on /metrics
// and in the EMF lines, and that the source password is in neither; on
// every source.
func TestMetrics(t *testing.T) {
	itest.ForEachBackend(t, "metrics", func(t *testing.T, b itest.Backend) {
		const canary = "canary-Metr1cs-5ecret-c0d3"
		user := fmt.Sprintf("metrics_%d", rand.IntN(1_000_000))
		b.CreateLogin(t, user, canary)
		e := b.Env()
		itest.CreateTables(t, b, "orders")
		itest.MustExecOn(t, b, `INSERT INTO orders (k, seq, v) VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c')`)
		cfg := b.Config(nil, "")
		doc, _ := os.ReadFile(cfg)
		withCanary := strings.Replace(string(doc), b.AdminUserinfo()+"@", user+":"+canary+"@", 1)
		if withCanary == string(doc) {
			t.Fatal("no source URL to put the canary in")
		}
		os.WriteFile(cfg, []byte(withCanary), 0o600)

		addr := itest.FreeAddr(t)
		t.Setenv("TRIBUTARY_METRICS", "emf")
		p := e.Start("run", "--config", cfg, "--metrics-addr", addr)

		table := `table="` + b.TableID("orders") + `"`
		var body string
		published := func() map[string]float64 {
			body = itest.Scrape(t, addr)
			return itest.Samples(body, "tributary_rows_published_total", table)
		}
		itest.WaitOrDump(t, p, 60*time.Second, "3 backfilled rows on /metrics", func() bool { return published()["r"] == 3 })
		itest.MustExecOn(t, b, `INSERT INTO orders (k, seq, v) VALUES (4, 4, 'd'), (5, 5, 'e')`)
		itest.MustExecOn(t, b, `UPDATE orders SET v = 'x' WHERE k = 1`)
		itest.MustExecOn(t, b, `DELETE FROM orders WHERE k = 2`)
		itest.WaitOrDump(t, p, 30*time.Second, "c/u/d on /metrics", func() bool {
			got := published()
			return got["c"] == 2 && got["u"] == 1 && got["d"] == 1
		})
		if got := published(); got["r"] != 3 || got["c"] != 2 || got["u"] != 1 || got["d"] != 1 {
			t.Errorf("rows published per op %v, want r=3 c=2 u=1 d=1", got)
		}
		if n := itest.Samples(body, "tributary_source_to_publish_latency_seconds_count", ""); n[""] != 4 {
			t.Errorf("latency observations %v, want 4 (c/u/d only)\n%s", n, body)
		}
		for _, name := range []string{"tributary_source_lag_seconds{", `tributary_errors_total{pipeline="` + e.Name + `",kind="publish"} 0`} {
			if !strings.Contains(body, name) {
				t.Errorf("/metrics lacks %s:\n%s", name, body)
			}
		}
		if strings.Contains(body, canary) || strings.Contains(body, user+":") {
			t.Fatalf("the source password appears on /metrics:\n%s", body)
		}

		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit code %d, want 0; output:\n%s", code, p.Out)
		}
		out := p.Out.String()
		if strings.Contains(out, canary) {
			t.Fatal("the source password appears in the output")
		}
		// The EMF lines (stdout) add up to the same counts.
		emf := map[string]float64{}
		lines := 0
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l struct {
				AWS *struct {
					CloudWatchMetrics []struct{ Namespace string }
				} `json:"_aws"`
				Pipeline, Table, Op string
				RowsPublished       float64
			}
			if json.Unmarshal(sc.Bytes(), &l) != nil || l.AWS == nil {
				continue
			}
			lines++
			if l.Pipeline != e.Name || len(l.AWS.CloudWatchMetrics) != 1 || l.AWS.CloudWatchMetrics[0].Namespace != "Tributary" {
				t.Errorf("EMF line %s", sc.Bytes())
			}
			if l.Table == b.TableID("orders") {
				emf[l.Op] += l.RowsPublished
			}
		}
		if lines == 0 || emf["r"] != 3 || emf["c"] != 2 || emf["u"] != 1 || emf["d"] != 1 {
			t.Errorf("%d EMF lines with rows %v, want r=3 c=2 u=1 d=1; output:\n%s", lines, emf, out)
		}
	})
}
