package debezium

import (
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// TestNullWritesDefault: a null in a nullable column that has a default is
// written as the default, as Kafka Connect's JsonConverter does for
// Debezium (replace.null.with.default=true, its default: a null field of a
// schema with a default becomes the default). Found by the differential
// oracle (integration/scenario/differential_test.go): for `c integer DEFAULT 7`
// set to NULL Debezium writes "c":7. Columns without a default keep their
// null, and so does a NaN decimal (Debezium's converter makes it null,
// then JsonConverter the default).
func TestNullWritesDefault(t *testing.T) {
	seven, dec := change.IntValue(7), change.TextValue("1.50")
	tbl := &change.Table{
		ID: change.TableID{DB: "shop", Schema: "public", Name: "t"},
		Columns: []change.Column{
			{Name: "id", Type: typ(change.KindInt32, -1, -1)},
			{Name: "c", Type: typ(change.KindInt32, -1, -1), Optional: true, Default: &seven},
			{Name: "n", Type: typ(change.KindInt32, -1, -1), Optional: true},
			{Name: "d", Type: typ(change.KindDecimal, 10, 2), Optional: true, Default: &dec},
		},
		Key: []int{0},
	}
	row := change.Row{change.IntValue(1), {}, {}, change.TextValue("NaN")}
	for _, connector := range []string{"postgresql", "mariadb"} {
		src := change.Source{Block: blocks[connector], Name: "p", DB: "shop", Schema: "public", Table: "t"}
		if connector == "mariadb" {
			src = with(src, "file", "bin.000001")
		}
		ev := &change.Event{Table: tbl, Op: change.OpUpdate, Before: row, After: row, Source: src}
		b, err := NewEncoder(Options{TopicPrefix: "p"}).AppendValue(nil, ev, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"id":1,"c":7,"n":null,"d":"AJY="}`
		if s := string(b); !strings.Contains(s, `"before":`+want+`,"after":`+want) {
			t.Errorf("%s: want before and after %s in\n%s", connector, want, s)
		}
	}
}

// TestVariableScaleDecimalNoDefault: an unconstrained numeric's schema (a
// VariableScaleDecimal struct) has no default, nullable or not: Debezium
// logs "Struct can't be used as default value for column …, will use null
// instead" (found by the differential oracle for `numeric NOT NULL DEFAULT
// 0`), and a null stays null.
func TestVariableScaleDecimalNoDefault(t *testing.T) {
	zero := change.TextValue("0")
	tbl := &change.Table{
		ID: change.TableID{DB: "shop", Schema: "public", Name: "t"},
		Columns: []change.Column{
			{Name: "id", Type: typ(change.KindInt32, -1, -1)},
			{Name: "n", Type: typ(change.KindDecimal, -1, -1), Default: &zero},
			{Name: "o", Type: typ(change.KindDecimal, -1, -1), Optional: true, Default: &zero},
		},
		Key: []int{0},
	}
	ev := &change.Event{Table: tbl, Op: change.OpCreate, After: change.Row{change.IntValue(1), change.TextValue("2"), {}}, Source: pgSource}
	b, err := NewEncoder(Options{TopicPrefix: "p"}).AppendValue(nil, ev, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Contains(s, `"default":{`) {
		t.Errorf("a VariableScaleDecimal schema with a default:\n%s", s)
	}
	if !strings.Contains(s, `"after":{"id":1,"n":{"scale":0,"value":"Ag=="},"o":null}`) {
		t.Errorf("after image:\n%s", s)
	}
}

// TestRequiredNullZoned: a null in a NOT NULL timestamptz (a key-only old
// row) is Debezium's fallback "1970-01-01T00:00:00Z" without a fraction,
// whatever the precision, when the column has no default; with a default
// the source cannot evaluate (now()) it is the schema default, the zero
// instant with the column's digits, as Debezium writes both (found by the
// differential oracle, checked side by side for timestamptz, (1), (3),
// (6)).
func TestRequiredNullZoned(t *testing.T) {
	tz3 := typ(change.KindTimestampTZ, 3, -1)
	tbl := &change.Table{
		ID: change.TableID{DB: "shop", Schema: "public", Name: "t"},
		Columns: []change.Column{
			{Name: "id", Type: typ(change.KindInt32, -1, -1)},
			{Name: "a", Type: tz3},
			{Name: "b", Type: tz3, Default: &change.Value{}},
		},
		Key: []int{0},
	}
	ev := &change.Event{Table: tbl, Op: change.OpDelete, Before: change.Row{change.IntValue(1), {}, {}}, Source: pgSource}
	b, err := NewEncoder(Options{TopicPrefix: "p"}).AppendValue(nil, ev, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		`"before":{"id":1,"a":"1970-01-01T00:00:00Z","b":"1970-01-01T00:00:00.000Z"}`,
		`"default":"1970-01-01T00:00:00.000Z","field":"b"`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("lacks %s:\n%s", want, s)
		}
	}
}
