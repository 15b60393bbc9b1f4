package metrics

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func TestBackfillMetrics(t *testing.T) {
	reg := NewRegistry()
	m := NewPipeline(reg, "shop")
	first := time.Unix(1_700_000_000, 0)
	m.SetBackfill([]BackfillTable{{Table: "public.orders", Rows: 400, Estimated: 1000, Started: first}, {Table: "public.items"}})
	m.SetBackfill([]BackfillTable{{Table: "public.orders", Rows: 600, Estimated: 1000, Started: first}, {Table: "public.items"}})
	out := scrape(t, reg)
	for _, want := range []string{
		"# TYPE tributary_backfill_rows_total counter\n",
		`tributary_backfill_rows_total{pipeline="shop",table="public.orders"} 600` + "\n",
		"# TYPE tributary_backfill_remaining_rows gauge\n",
		`tributary_backfill_remaining_rows{pipeline="shop",table="public.orders"} 400` + "\n",
		`tributary_backfill_rows_total{pipeline="shop",table="public.items"} 0` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, `tributary_backfill_remaining_rows{pipeline="shop",table="public.items"}`) {
		t.Error("remaining rows of a table without an estimate")
	}
	// Done, then snapshotted again: the counter keeps counting (it never
	// goes down), remaining follows the new snapshot.
	m.SetBackfill([]BackfillTable{{Table: "public.orders", Rows: 1010, Estimated: 1000, Started: first, Done: true}})
	m.SetBackfill([]BackfillTable{{Table: "public.orders", Rows: 100, Estimated: 1000, Started: first.Add(time.Hour)}})
	out = scrape(t, reg)
	for _, want := range []string{
		`tributary_backfill_rows_total{pipeline="shop",table="public.orders"} 1110` + "\n",
		`tributary_backfill_remaining_rows{pipeline="shop",table="public.orders"} 900` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("after a second snapshot: missing %q in\n%s", want, out)
		}
	}
	if got := m.Backfills(); len(got) != 1 || got[0].Rows != 100 {
		t.Errorf("Backfills() = %+v", got)
	}
	var nilM *Pipeline
	nilM.SetBackfill([]BackfillTable{{Table: "x"}})
	if nilM.Backfills() != nil {
		t.Error("nil pipeline has backfills")
	}
}

// The metrics table (docs/aws.md) names the backfill metrics.
func TestBackfillNamesInReadme(t *testing.T) {
	readme, err := os.ReadFile("../../docs/aws.md") // the metrics table
	if err != nil {
		t.Skipf("docs/aws.md: %v", err)
	}
	for _, name := range []string{backfillRowsName, backfillRemainingName} {
		if !bytes.Contains(readme, []byte("`"+name+"{pipeline,table}`")) {
			t.Errorf("docs/aws.md does not name `%s{pipeline,table}`", name)
		}
	}
}
