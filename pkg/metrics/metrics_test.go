package metrics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

func TestPrometheusText(t *testing.T) {
	reg := NewRegistry()
	m := NewPipeline(reg, "shop")
	orders := m.Rows("public.orders")
	odd := m.Rows(`we"ird\` + "\n")
	commit := time.Now().Add(-30 * time.Millisecond)
	for _, op := range []change.Op{change.OpCreate, change.OpCreate, change.OpUpdate, change.OpDelete, change.OpRead} {
		orders.Sent(op, commit.UnixMicro(), commit)
		orders.Acked(op, commit.UnixMicro(), true, commit.Add(30*time.Millisecond))
	}
	odd.Sent(change.OpDelete, commit.UnixMicro(), commit)
	odd.Acked(change.OpDelete, commit.UnixMicro(), false, time.Now()) // a tombstone: not a row
	odd.Sent(change.OpCreate, commit.UnixMicro(), commit)
	odd.Failed(change.OpCreate)

	rec := httptest.NewRecorder()
	reg.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type %q", ct)
	}
	out := rec.Body.String()
	for _, want := range []string{
		"# TYPE tributary_rows_published_total counter\n",
		`tributary_rows_published_total{pipeline="shop",table="public.orders",op="c"} 2` + "\n",
		`tributary_rows_published_total{pipeline="shop",table="public.orders",op="u"} 1` + "\n",
		`tributary_rows_published_total{pipeline="shop",table="public.orders",op="r"} 1` + "\n",
		`tributary_rows_published_total{pipeline="shop",table="we\"ird\\\n",op="d"} 0` + "\n",
		"# TYPE tributary_source_to_publish_latency_seconds histogram\n",
		`tributary_source_to_publish_latency_seconds_bucket{pipeline="shop",le="0.025"} 0` + "\n",
		`tributary_source_to_publish_latency_seconds_bucket{pipeline="shop",le="0.05"} 4` + "\n",
		`tributary_source_to_publish_latency_seconds_bucket{pipeline="shop",le="+Inf"} 4` + "\n",
		`tributary_source_to_publish_latency_seconds_count{pipeline="shop"} 4` + "\n",
		"# TYPE tributary_source_lag_seconds gauge\n",
		`tributary_source_lag_seconds{pipeline="shop"} 0` + "\n",
		`tributary_errors_total{pipeline="shop",kind="publish"} 1` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	// Every line is a comment or `name{labels} value`.
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "# HELP ") || strings.HasPrefix(l, "# TYPE ") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		if i < 0 || !strings.HasPrefix(l, "tributary_") || strings.ContainsAny(l[i+1:], "{}\" ") {
			t.Errorf("malformed sample line %q", l)
		}
	}
	if got := m.Published(); got["c"] != 2 || got["r"] != 1 || got["d"] != 1 {
		t.Errorf("Published() = %v", got)
	}
}

func TestLag(t *testing.T) {
	m := NewPipeline(NewRegistry(), "p")
	now := time.Unix(1_700_000_000, 0)
	m.now = func() time.Time { return now }
	r := m.Rows("t")
	commit := now.Add(-7 * time.Second).UnixMicro()
	r.Sent(change.OpRead, now.Add(-time.Hour).UnixMicro(), now) // backfill: not lag
	if m.Lag() != 0 {
		t.Errorf("lag %v with only a backfill row in flight", m.Lag())
	}
	r.Sent(change.OpUpdate, commit, now)
	if m.Lag() != 7*time.Second {
		t.Errorf("lag %v, want 7s while a row is unacknowledged", m.Lag())
	}
	r.Acked(change.OpUpdate, commit, true, now)
	r.Acked(change.OpRead, 0, true, now)
	if m.Lag() != 0 {
		t.Errorf("lag %v once caught up, want 0", m.Lag())
	}
}

func TestEMFShape(t *testing.T) {
	m := NewPipeline(NewRegistry(), "shop")
	var buf bytes.Buffer
	e := NewEMF(&buf, m)
	r := m.Rows("public.orders")
	now := time.Now()
	for i := 0; i < 250; i++ {
		r.Sent(change.OpCreate, now.Add(-time.Second).UnixMicro(), now)
		r.Acked(change.OpCreate, now.Add(-time.Second).UnixMicro(), true, now)
	}
	r.Sent(change.OpRead, 0, now)
	r.Acked(change.OpRead, 0, true, now)
	m.Error("run")
	if err := e.Flush(now); err != nil {
		t.Fatal(err)
	}

	type line struct {
		AWS struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
		Pipeline, Table, Op string
		RowsPublished       *float64
		Errors              *float64
		SourceLagSeconds    *float64
		Latency             []float64 `json:"SourceToPublishLatencyMs"`
	}
	var lines []line
	var raw []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if !json.Valid([]byte(l)) {
			t.Fatalf("not JSON: %s", l)
		}
		var x line
		var y map[string]any
		json.Unmarshal([]byte(l), &x)
		json.Unmarshal([]byte(l), &y)
		lines, raw = append(lines, x), append(raw, y)
	}
	ops := map[string]float64{}
	var latencies, errs int
	for i, l := range lines {
		cw := l.AWS.CloudWatchMetrics
		if len(cw) != 1 || cw[0].Namespace != Namespace || l.AWS.Timestamp != now.UnixMilli() || l.Pipeline != "shop" {
			t.Fatalf("line %d: bad _aws block or Pipeline: %+v", i, l)
		}
		// Every dimension and every metric named must be a member of the line.
		for _, set := range cw[0].Dimensions {
			for _, d := range set {
				if _, ok := raw[i][d].(string); !ok {
					t.Errorf("line %d: dimension %s is not a string member", i, d)
				}
			}
		}
		for _, mt := range cw[0].Metrics {
			if raw[i][mt.Name] == nil || mt.Unit == "" {
				t.Errorf("line %d: metric %s without a value or unit", i, mt.Name)
			}
		}
		if l.RowsPublished != nil {
			if l.Table != "public.orders" || len(cw[0].Dimensions) != 1 || strings.Join(cw[0].Dimensions[0], ",") != "Pipeline,Op" {
				t.Errorf("rows line %d: %+v", i, l)
			}
			ops[l.Op] += *l.RowsPublished
		}
		if l.Errors != nil {
			errs += int(*l.Errors)
			if l.SourceLagSeconds == nil {
				t.Errorf("line %d: errors without lag", i)
			}
		}
		if len(l.Latency) > maxValues {
			t.Errorf("line %d: %d latency values", i, len(l.Latency))
		}
		latencies += len(l.Latency)
		for _, v := range l.Latency {
			if v != 1000 {
				t.Fatalf("latency %v ms, want 1000", v)
			}
		}
	}
	if ops["c"] != 250 || ops["r"] != 1 || len(ops) != 2 || errs != 1 || latencies != 250 {
		t.Errorf("ops %v, errors %d, latency values %d; want c=250 r=1, 1, 250", ops, errs, latencies)
	}

	// Counters are deltas: a second flush with nothing new sends no rows.
	buf.Reset()
	e.Flush(now.Add(time.Minute))
	if strings.Contains(buf.String(), EMFRowsPublished) || strings.Contains(buf.String(), EMFLatency) || !strings.Contains(buf.String(), `"Errors":0`) {
		t.Errorf("second flush: %s", buf.String())
	}
}

// The publish path allocates nothing once a table's counters are resolved.
func TestRecordingDoesNotAllocate(t *testing.T) {
	m := NewPipeline(NewRegistry(), "p")
	NewEMF(&bytes.Buffer{}, m)
	r := m.Rows("t")
	now := time.Now()
	if n := testing.AllocsPerRun(1000, func() {
		r.Sent(change.OpUpdate, now.UnixMicro(), now)
		r.Acked(change.OpUpdate, now.UnixMicro(), true, now)
	}); n != 0 {
		t.Errorf("%v allocations per row", n)
	}
}

func TestNilRecordsNothing(t *testing.T) {
	var m *Pipeline
	r := m.Rows("t")
	r.Sent(change.OpCreate, 1, time.Now())
	r.Acked(change.OpCreate, 1, true, time.Now())
	r.Failed(change.OpCreate)
	m.Error("run")
	if m.Lag() != 0 {
		t.Error("lag of nil")
	}
}

// The CDK dashboard and alarms (infra/*.go) and the README name these
// metrics; a rename here must be made there too.
func TestNamesMatchInfraAndReadme(t *testing.T) {
	infra, err := filepath.Glob("../../infra/*.go")
	if err != nil || len(infra) == 0 {
		t.Skipf("infra sources: %v", err)
	}
	var code []byte
	for _, f := range infra {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		code = append(code, b...)
	}
	readme, err := os.ReadFile("../../docs/aws.md") // the metrics table
	if err != nil {
		t.Skipf("docs/aws.md: %v", err)
	}
	for _, name := range []string{Namespace, EMFRowsPublished, EMFLatency, EMFLag, EMFErrors, EMFTopicsMissing} {
		if !bytes.Contains(code, []byte(`"`+name+`"`)) {
			t.Errorf("infra/*.go does not name %q", name)
		}
		if !bytes.Contains(readme, []byte("`"+name+"`")) {
			t.Errorf("docs/aws.md does not name `%s`", name)
		}
	}
}

// TestSchemaRegistryCalls: a pipeline with Avro shows its registry
// requests and failures by kind, every kind from the start.
func TestSchemaRegistryCalls(t *testing.T) {
	reg := NewRegistry()
	m := NewPipeline(reg, "shop")
	count := m.SchemaRegistryCalls()
	scrape := func() string {
		rec := httptest.NewRecorder()
		reg.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	if out := scrape(); !strings.Contains(out, `tributary_schema_registry_requests_total{pipeline="shop",kind="fetch"} 0`+"\n") {
		t.Errorf("no fetch series at 0 before any call:\n%s", out)
	}
	count("register", false)
	count("register", true)
	count("lookup", false)
	m.SchemaRegistryCalls()("register", false) // a second client of the same pipeline adds to the same series
	out := scrape()
	for _, want := range []string{
		"# TYPE tributary_schema_registry_requests_total counter\n",
		`tributary_schema_registry_requests_total{pipeline="shop",kind="register"} 3` + "\n",
		`tributary_schema_registry_requests_total{pipeline="shop",kind="lookup"} 1` + "\n",
		`tributary_schema_registry_errors_total{pipeline="shop",kind="register"} 1` + "\n",
		`tributary_schema_registry_errors_total{pipeline="shop",kind="lookup"} 0` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if noAvro := NewRegistry(); strings.Contains(func() string {
		NewPipeline(noAvro, "plain")
		rec := httptest.NewRecorder()
		noAvro.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}(), "schema_registry") {
		t.Error("a pipeline without Avro shows schema registry series")
	}
}
