package page

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/metrics"
)

// The page draws a snapshot's bar from the fields of live.backfills: a
// renamed JSON field would leave the bar indeterminate for ever.
func TestPageReadsTheBackfillFields(t *testing.T) {
	js, err := files.ReadFile("app.js")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(metrics.BackfillTable{Table: "a.b", Rows: 1, Estimated: 2, Started: time.Now(), Done: true, RowsPerSecond: 1, ETASeconds: 1})
	var fields map[string]any
	json.Unmarshal(data, &fields)
	for k := range fields {
		if !strings.Contains(string(js), "."+k) {
			t.Errorf("app.js does not read backfills[].%s", k)
		}
	}
	if !strings.Contains(string(js), ".backfills") {
		t.Error("app.js does not read live.backfills")
	}
}
