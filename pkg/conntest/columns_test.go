package conntest

import (
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// test-connection's "column types" line names every column run would
// leave out, with its type, from the same encoder decision as run's
// warning; with source.include_unknown_types, those columns are named as
// published as text instead; a table without such columns says so.
func TestColumnTypesDetail(t *testing.T) {
	odd := &change.Table{ID: change.TableID{DB: "app", Schema: "public", Name: "odd"}, Columns: []change.Column{
		{Name: "id", Type: change.Type{Kind: change.KindInt32, Name: "int4"}},
		{Name: "q", Type: change.Type{Kind: change.KindUnknown, Name: "tsquery"}, Optional: true},
	}}
	plain := &change.Table{ID: change.TableID{DB: "app", Schema: "public", Name: "plain"}, Columns: []change.Column{
		{Name: "id", Type: change.Type{Kind: change.KindInt32, Name: "int4"}},
	}}
	got := columnTypesDetail([]*change.Table{odd, plain}, false)
	if !strings.Contains(got, "left out of messages") || !strings.Contains(got, "public.odd.q (tsquery)") ||
		strings.Contains(got, ".id") || !strings.Contains(got, "source.include_unknown_types") {
		t.Errorf("default: %q", got)
	}
	got = columnTypesDetail([]*change.Table{odd, plain}, true)
	if strings.Contains(got, "left out") || !strings.Contains(got, "published as text (source.include_unknown_types): public.odd.q (tsquery)") {
		t.Errorf("include_unknown_types: %q", got)
	}
	if got := columnTypesDetail([]*change.Table{plain}, false); got != "every column of the 1 captured tables has an encoding" {
		t.Errorf("no unknown types: %q", got)
	}
}
