package metrics

import (
	"strings"
	"testing"
)

func TestTablesMissing(t *testing.T) {
	reg := NewRegistry()
	m := NewPipeline(reg, "shop")
	m.TablesMissing(nil)
	if strings.Contains(scrape(t, reg), tableMissingName) {
		t.Errorf("no table missing, yet a series:\n%s", scrape(t, reg))
	}
	m.TablesMissing([]string{"public.gone"})
	const want = `tributary_table_missing{pipeline="shop",table="public.gone"} 1`
	if !strings.Contains(scrape(t, reg), want) || !strings.Contains(scrape(t, reg), "# TYPE tributary_table_missing gauge") {
		t.Errorf("want %s:\n%s", want, scrape(t, reg))
	}
	// Created again: the series stays, at 0.
	m.TablesMissing(nil)
	if !strings.Contains(scrape(t, reg), `tributary_table_missing{pipeline="shop",table="public.gone"} 0`) {
		t.Errorf("after the table came back:\n%s", scrape(t, reg))
	}
	var nilM *Pipeline
	nilM.TablesMissing([]string{"x"}) // records nothing, no panic
}
