package debezium

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// TestGeometricUnknownTypesAsPGobject: with IncludeUnknownTypes, a
// PostgreSQL box, circle, line, lseg, path or polygon is the bytes of the
// text Debezium reads through its JDBC driver, whose PGobject classes
// print every number as Java's Double.toString ("(3.0,4.0),(1.0,2.0)"),
// not PostgreSQL's text ("(3,4),(1,2)"): the differential oracle's
// pgGeometricText.
func TestGeometricUnknownTypesAsPGobject(t *testing.T) {
	for _, c := range []struct{ typ, pg, want string }{
		{"box", "(3,4),(1,2)", "(3.0,4.0),(1.0,2.0)"},
		{"circle", "<(1.5,-2),1e+300>", "<(1.5,-2.0),1.0E300>"},
		{"line", "{1,-1,0}", "{1.0,-1.0,0.0}"},
		{"lseg", "[(0.001,12345678),(-0,NaN)]", "[(0.001,1.2345678E7),(-0.0,NaN)]"},
		{"path", "[(1,2),(3,4),(Infinity,-Infinity)]", "[(1.0,2.0),(3.0,4.0),(Infinity,-Infinity)]"},
		{"polygon", "((0,0),(1e-05,2))", "((0.0,0.0),(1.0E-5,2.0))"},
		{"tsquery", "'a' & 'b1'", "'a' & 'b1'"}, // not geometric: PostgreSQL's text as it is
	} {
		typ := change.Type{Kind: change.KindUnknown, Name: c.typ, Precision: -1, Scale: -1, Length: -1}
		tbl := &change.Table{
			ID: change.TableID{DB: "shop", Schema: "public", Name: "t"},
			Columns: []change.Column{
				{Name: "id", Type: change.Type{Kind: change.KindInt32, Name: "int4", Precision: -1, Scale: -1, Length: -1}},
				{Name: "c", Type: typ, Optional: true},
			},
			Key: []int{0},
		}
		e := NewEncoder(Options{TopicPrefix: "shop", IncludeUnknownTypes: true})
		ev := &change.Event{Table: tbl, Op: change.OpCreate, After: change.Row{change.IntValue(1), change.BinaryValue([]byte(c.pg))}, Source: pgSource}
		out, err := e.AppendValue(nil, ev, 1_700_000_000_500_000)
		if err != nil {
			t.Fatalf("%s: %v", c.typ, err)
		}
		var msg struct {
			Payload struct {
				After struct{ C string }
			}
		}
		if err := json.Unmarshal(out, &msg); err != nil {
			t.Fatalf("%s: %v: %s", c.typ, err, out)
		}
		got, _ := base64.StdEncoding.DecodeString(msg.Payload.After.C)
		if string(got) != c.want {
			t.Errorf("%s %q: got %q, want %q", c.typ, c.pg, got, c.want)
		}
	}
}
