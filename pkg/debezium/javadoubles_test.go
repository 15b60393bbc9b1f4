package debezium

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"
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
		// The driver marks the geometric types (change.Type.JavaDoubles).
		typ := change.Type{Kind: change.KindUnknown, Name: c.typ, Precision: -1, Scale: -1, Length: -1, JavaDoubles: c.typ != "tsquery"}
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

// FuzzPGobjectText: any text in, the same punctuation out, and every
// number token the same double (only its spelling changes).
func FuzzPGobjectText(f *testing.F) {
	for _, s := range []string{"(3,4),(1,2)", "<(1.5,-2),1e+300>", "{1,-1,0}", "[(-0,NaN),(Infinity,1e-05)]", "((a,b))", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := string(appendJavaDoublesText(nil, []byte(s)))
		strip := func(x string) string {
			return strings.Map(func(r rune) rune {
				if r < 0x80 && numberByte(byte(r)) {
					return -1
				}
				return r
			}, x)
		}
		if strip(out) != strip(s) {
			t.Fatalf("%q became %q: punctuation changed", s, out)
		}
		a, b := numberTokens(s), numberTokens(out)
		if len(a) != len(b) {
			t.Fatalf("%q became %q: %d number tokens, then %d", s, out, len(a), len(b))
		}
		for i := range a {
			x, errx := strconv.ParseFloat(a[i], 64)
			y, erry := strconv.ParseFloat(b[i], 64)
			if (errx == nil) != (erry == nil) || errx == nil && x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
				t.Fatalf("%q became %q: %q is now %q", s, out, a[i], b[i])
			}
		}
	})
}

func numberTokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r >= 0x80 || !numberByte(byte(r)) })
}
