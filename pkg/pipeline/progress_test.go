package pipeline

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/snapshot"
)

func TestProgressView(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	v := progressView([]snapshot.TableProgress{
		{Table: "a.running", Rows: 20_000, Estimated: 100_000, Started: now.Add(-10 * time.Second)},
		{Table: "a.nostats", Rows: 500, Started: now.Add(-5 * time.Second)},
		{Table: "a.queued"},
		{Table: "a.done", Rows: 7, Estimated: 5, Started: now.Add(-time.Minute), Done: true},
	}, now)
	if r := v[0]; r.RowsPerSecond != 2000 || r.ETASeconds != 40 {
		t.Errorf("running: %v rows/s, ETA %v s; want 2000, 40", r.RowsPerSecond, r.ETASeconds)
	}
	if r := v[1]; r.RowsPerSecond != 100 || r.ETASeconds != 0 {
		t.Errorf("no estimate: %v rows/s, ETA %v; want 100, none", r.RowsPerSecond, r.ETASeconds)
	}
	if r := v[2]; r.RowsPerSecond != 0 || r.ETASeconds != 0 {
		t.Errorf("queued: %+v", r)
	}
	if r := v[3]; r.ETASeconds != 0 || !r.Done {
		t.Errorf("done: %+v", r)
	}
	if p := percent(120, 100); p != 99 {
		t.Errorf("percent over the estimate = %d, want 99 until done", p)
	}
}

// The progress lines, in both log formats: every progressLogEvery for a
// running table, once for a finished one.
func TestProgressLog(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	view := progressView([]snapshot.TableProgress{
		{Table: "public.orders", Rows: 20_000, Estimated: 100_000, Started: now.Add(-10 * time.Second)},
		{Table: "public.items", Rows: 9, Estimated: 10, Started: now.Add(-3 * time.Second), Done: true},
		{Table: "public.queued"},
	}, now)
	var text, js bytes.Buffer
	for _, tc := range []struct {
		out *bytes.Buffer
		log *slog.Logger
	}{{&text, slog.New(slog.NewTextHandler(&text, nil))}, {&js, slog.New(slog.NewJSONHandler(&js, nil))}} {
		var pl progressLog
		pl.log(tc.log, view, now)
		pl.log(tc.log, view, now.Add(time.Second))        // too soon, and done already logged
		pl.log(tc.log, view, now.Add(progressLogEvery+1)) // the next progress line
	}
	if n := strings.Count(text.String(), "\n"); n != 3 {
		t.Errorf("%d text lines, want 2 progress + 1 done:\n%s", n, text.String())
	}
	for _, want := range []string{
		`msg="backfill: progress" table=public.orders rows=20000 rows_per_second=2000 estimated_rows=100000 percent=20 eta=40s`,
		`msg="backfill: table done" table=public.items rows=9 took=3s`,
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text log lacks %s:\n%s", want, text.String())
		}
	}
	if !strings.Contains(js.String(), `"msg":"backfill: progress","table":"public.orders","rows":20000,"rows_per_second":2000,"estimated_rows":100000,"percent":20,"eta":"40s"}`) {
		t.Errorf("JSON log:\n%s", js.String())
	}
	if strings.Contains(text.String()+js.String(), "public.queued") {
		t.Error("a queued table was logged as progressing")
	}
}

// TestProgressRateSlowOrEarly: a table read at under one row a second,
// or logged less than a second after it started, is not logged at
// rows_per_second=0 while rows are read: the slow one has its rate to
// one decimal, and the early one has a rate once 100 ms have passed.
func TestProgressRateSlowOrEarly(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	view := progressView([]snapshot.TableProgress{
		{Table: "public.slow", Rows: 3, Estimated: 4, Started: now.Add(-5 * time.Second)},
		{Table: "public.early", Rows: 300, Estimated: 400, Started: now.Add(-500 * time.Millisecond)},
		{Table: "public.instant", Rows: 3, Estimated: 4, Started: now.Add(-time.Millisecond)},
	}, now)
	var out bytes.Buffer
	var pl progressLog
	pl.log(slog.New(slog.NewTextHandler(&out, nil)), view, now)
	for _, want := range []string{"table=public.slow rows=3 rows_per_second=0.6 ", "table=public.early rows=300 rows_per_second=600 "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "rows_per_second=0 ") {
		t.Errorf("a table being read logged at 0 rows a second:\n%s", out.String())
	}
}
