package metrics

import (
	"bytes"
	"strings"
	"testing"
)

func TestColumnsDropped(t *testing.T) {
	reg := NewRegistry()
	m := NewPipeline(reg, "shop")
	m.ColumnsDropped("public.clean", 0)
	if strings.Contains(scrape(t, reg), "tributary_columns_dropped") {
		t.Errorf("a table without dropped columns has a series:\n%s", scrape(t, reg))
	}
	m.ColumnsDropped("public.odd", 2)
	const want = `tributary_columns_dropped{pipeline="shop",table="public.odd"} 2`
	if !strings.Contains(scrape(t, reg), want) || !strings.Contains(scrape(t, reg), "# TYPE tributary_columns_dropped gauge") {
		t.Errorf("want %s:\n%s", want, scrape(t, reg))
	}
	// A schema change that removes them: the series stays, at 0.
	m.ColumnsDropped("public.odd", 0)
	if !strings.Contains(scrape(t, reg), `tributary_columns_dropped{pipeline="shop",table="public.odd"} 0`) {
		t.Errorf("after the drop went away:\n%s", scrape(t, reg))
	}
	var nilM *Pipeline
	nilM.ColumnsDropped("x", 1) // records nothing, no panic
}

// scrape is what a Prometheus scrape of reg reads.
func scrape(t *testing.T, reg *Registry) string {
	t.Helper()
	var b bytes.Buffer
	if err := reg.WritePrometheus(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
