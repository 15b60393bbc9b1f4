package status

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/metrics"
)

// The progress the running process records reaches a `status` run in
// another process (through the stored snapshot) and its human table.
func TestBackfillProgressInStatus(t *testing.T) {
	m := metrics.NewPipeline(metrics.NewRegistry(), "shop")
	started := time.Now().Add(-10 * time.Second).UTC()
	m.SetBackfill([]metrics.BackfillTable{
		{Table: "public.orders", Rows: 25_000, Estimated: 100_000, Started: started, RowsPerSecond: 2500, ETASeconds: 30},
		{Table: "public.customers", Rows: 900, Estimated: 900, Started: started, Done: true},
		{Table: "public.items"},
	})
	rec := NewRecorder(m, "v1")
	data, err := json.Marshal(rec.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	live, err := Decode(data) // as `status` reads it back from the store
	if err != nil {
		t.Fatal(err)
	}
	if len(live.Backfills) != 3 || live.Backfills[0].Estimated != 100_000 || live.Backfills[0].ETASeconds != 30 {
		t.Fatalf("backfills after the round trip: %+v", live.Backfills)
	}
	r := Build("shop", checkpoint.Checkpoint{}, false, live, time.Now(), nil)
	r.BackfillRequested = &checkpoint.Request{Tables: []string{"public.refunds"}}
	var out bytes.Buffer
	Print(&out, r)
	for _, want := range []string{
		"backfill requested  public.refunds (waiting for the pipeline to take it)",
		"SNAPSHOT (r)", "ETA",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = strings.Join(f, " ")
		}
	}
	for table, want := range map[string]string{
		"public.orders":    "public.orders running 25000 100000 25 2500 30s",
		"public.customers": "public.customers done 900 900 100 - -",
		"public.items":     "public.items queued 0 unknown - - -",
	} {
		// The last line naming the table is the snapshot table's.
		if got := lines[table]; got != want {
			t.Errorf("line of %s = %q, want %q\n%s", table, got, want, out.String())
		}
	}
	var js bytes.Buffer
	json.NewEncoder(&js).Encode(r)
	for _, want := range []string{`"backfills":[{"table":"public.orders","rows":25000,"estimated_rows":100000,`, `"eta_seconds":30`, `"backfill_requested":{"tables":["public.refunds"]}`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("status --json lacks %s:\n%s", want, js.String())
		}
	}
}
