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

// TestMissingTablesShown: listed tables that match no table are in the
// snapshot, in status --json and in the human form; none: no line.
func TestMissingTablesShown(t *testing.T) {
	rec := NewRecorder(metrics.NewPipeline(metrics.NewRegistry(), "shop"), "v1")
	print := func() string {
		live := rec.Snapshot()
		var out bytes.Buffer
		Print(&out, Build("shop", checkpoint.Checkpoint{}, false, &live, time.Now(), nil))
		return out.String()
	}
	if strings.Contains(print(), "missing tables") {
		t.Errorf("no table missing, yet:\n%s", print())
	}
	rec.TablesMissing([]string{"public.gone", "public.moved"})
	if out := print(); !strings.Contains(out, "missing tables    public.gone, public.moved (listed in source.tables") {
		t.Errorf("human form:\n%s", out)
	}
	b, err := json.Marshal(rec.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"missing_tables":["public.gone","public.moved"]`) {
		t.Errorf("json: %s", b)
	}
	rec.TablesMissing(nil) // re-created
	if strings.Contains(print(), "missing tables") {
		t.Errorf("after the table came back:\n%s", print())
	}
}
