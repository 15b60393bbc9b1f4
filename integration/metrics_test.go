package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMetrics runs the binary with --metrics-addr and EMF on, makes a
// backfill and c/u/d changes, and checks the counts per op on /metrics
// and in the EMF lines, and that the source password is in neither; on
// every source.
func TestMetrics(t *testing.T) {
	forEachBackend(t, "metrics", func(t *testing.T, b backend) {
		const canary = "canary-Metr1cs-5ecret-c0d3"
		user := fmt.Sprintf("metrics_%d", rand.IntN(1_000_000))
		b.createLogin(t, user, canary)
		e := b.env()
		createTables(t, b, "orders")
		mustExecOn(t, b, `INSERT INTO orders (k, seq, v) VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c')`)
		cfg := b.config(nil, "")
		doc, _ := os.ReadFile(cfg)
		withCanary := strings.Replace(string(doc), b.adminUserinfo()+"@", user+":"+canary+"@", 1)
		if withCanary == string(doc) {
			t.Fatal("no source URL to put the canary in")
		}
		os.WriteFile(cfg, []byte(withCanary), 0o600)

		addr := freeAddr(t)
		t.Setenv("TRIBUTARY_METRICS", "emf")
		p := e.start("run", "--config", cfg, "--metrics-addr", addr)

		table := `table="` + b.tableID("orders") + `"`
		var body string
		published := func() map[string]float64 {
			body = scrape(t, addr)
			return samples(body, "tributary_rows_published_total", table)
		}
		waitOrDump(t, p, 60*time.Second, "3 backfilled rows on /metrics", func() bool { return published()["r"] == 3 })
		mustExecOn(t, b, `INSERT INTO orders (k, seq, v) VALUES (4, 4, 'd'), (5, 5, 'e')`)
		mustExecOn(t, b, `UPDATE orders SET v = 'x' WHERE k = 1`)
		mustExecOn(t, b, `DELETE FROM orders WHERE k = 2`)
		waitOrDump(t, p, 30*time.Second, "c/u/d on /metrics", func() bool {
			got := published()
			return got["c"] == 2 && got["u"] == 1 && got["d"] == 1
		})
		if got := published(); got["r"] != 3 || got["c"] != 2 || got["u"] != 1 || got["d"] != 1 {
			t.Errorf("rows published per op %v, want r=3 c=2 u=1 d=1", got)
		}
		if n := samples(body, "tributary_source_to_publish_latency_seconds_count", ""); n[""] != 4 {
			t.Errorf("latency observations %v, want 4 (c/u/d only)\n%s", n, body)
		}
		for _, name := range []string{"tributary_source_lag_seconds{", `tributary_errors_total{pipeline="` + e.name + `",kind="publish"} 0`} {
			if !strings.Contains(body, name) {
				t.Errorf("/metrics lacks %s:\n%s", name, body)
			}
		}
		if strings.Contains(body, canary) || strings.Contains(body, user+":") {
			t.Fatalf("the source password appears on /metrics:\n%s", body)
		}

		if code := p.stop(t); code != 0 {
			t.Fatalf("exit code %d, want 0; output:\n%s", code, p.out)
		}
		out := p.out.String()
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
			if l.Pipeline != e.name || len(l.AWS.CloudWatchMetrics) != 1 || l.AWS.CloudWatchMetrics[0].Namespace != "Tributary" {
				t.Errorf("EMF line %s", sc.Bytes())
			}
			if l.Table == b.tableID("orders") {
				emf[l.Op] += l.RowsPublished
			}
		}
		if lines == 0 || emf["r"] != 3 || emf["c"] != 2 || emf["u"] != 1 || emf["d"] != 1 {
			t.Errorf("%d EMF lines with rows %v, want r=3 c=2 u=1 d=1; output:\n%s", lines, emf, out)
		}
	})
}

// freeAddr returns a 127.0.0.1 address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// scrape returns the body of GET /metrics ("" while nothing listens).
func scrape(t *testing.T, addr string) string {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	return string(b)
}

// samples returns the values of name's series whose labels contain
// filter, by their op label ("" when there is none).
func samples(body, name, filter string) map[string]float64 {
	out := map[string]float64{}
	for _, l := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(l, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') || !strings.Contains(rest, filter) {
			continue
		}
		i := strings.LastIndexByte(rest, ' ')
		v, err := strconv.ParseFloat(rest[i+1:], 64)
		if err != nil {
			continue
		}
		op := ""
		if j := strings.Index(rest, `op="`); j >= 0 {
			op = rest[j+4 : j+5]
		}
		out[op] += v
	}
	return out
}
