package metrics

import (
	"bytes"
	"strings"
	"testing"
)

func TestTablesMissing(t *testing.T) {
	reg := NewRegistry()
	m := NewPipeline(reg, "shop")
	text := func() string {
		var b bytes.Buffer
		if err := reg.WritePrometheus(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	m.TablesMissing(nil)
	if strings.Contains(text(), tableMissingName) {
		t.Errorf("no table missing, yet a series:\n%s", text())
	}
	m.TablesMissing([]string{"public.gone"})
	const want = `tributary_table_missing{pipeline="shop",table="public.gone"} 1`
	if !strings.Contains(text(), want) || !strings.Contains(text(), "# TYPE tributary_table_missing gauge") {
		t.Errorf("want %s:\n%s", want, text())
	}
	// Created again: the series stays, at 0.
	m.TablesMissing(nil)
	if !strings.Contains(text(), `tributary_table_missing{pipeline="shop",table="public.gone"} 0`) {
		t.Errorf("after the table came back:\n%s", text())
	}
	var nilM *Pipeline
	nilM.TablesMissing([]string{"x"}) // records nothing, no panic
}
