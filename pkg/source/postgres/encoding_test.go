package postgres

import (
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// TestTypeEncoding: the types Debezium's PostgreSQL connector writes
// unlike their kind carry it on their change.Type: hstore's zero is
// "{}", the geometric types Debezium does not know print their numbers
// as Java doubles, and an unchanged array of citext, ranges, ltree or
// tsvector is null; the other types carry nothing.
func TestTypeEncoding(t *testing.T) {
	oids := map[string]uint32{"tstzrange": oidTsTzRange, "tsvector": oidTsvector, "text": oidText} // the others have none here
	for name, want := range map[string]change.Type{
		"hstore":    {Kind: change.KindJSON, Zero: "{}"},
		"box":       {Kind: change.KindUnknown, JavaDoubles: true},
		"polygon":   {Kind: change.KindUnknown, JavaDoubles: true},
		"citext":    {Kind: change.KindString, NullUnavailableArray: true},
		"tstzrange": {Kind: change.KindString, NullUnavailableArray: true},
		"tsvector":  {Kind: change.KindTsvector, NullUnavailableArray: true},
		"text":      {Kind: change.KindString},
		"tsquery":   {Kind: change.KindUnknown},
	} {
		got := (&catalogColumn{typOID: oids[name], typmod: -1, typName: name}).changeType()
		if got.Kind != want.Kind || got.Zero != want.Zero || got.JavaDoubles != want.JavaDoubles || got.NullUnavailableArray != want.NullUnavailableArray {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
}
