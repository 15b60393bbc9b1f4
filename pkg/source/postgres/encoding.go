package postgres

import "github.com/tributary-cdc/tributary/pkg/change"

// withEncoding sets on t what Debezium's PostgreSQL connector writes for
// it beyond what its kind says (change.Type's Zero, JavaDoubles,
// NullUnavailableArray).
func withEncoding(t change.Type) change.Type {
	switch t.Name {
	case "hstore":
		if t.Kind == change.KindJSON {
			t.Zero = "{}" // Debezium's hstore converter
		}
	case "box", "circle", "line", "lseg", "path", "polygon":
		// The geometric types Debezium has no converter for: with
		// include.unknown.datatypes it publishes the text its JDBC
		// driver's PGobject class prints (PGbox, PGcircle, PGline,
		// PGlseg, PGpath, PGpolygon), which is PostgreSQL's text with
		// every number as Java's Double.toString (docs/types.md).
		if t.Kind == change.KindUnknown {
			t.JavaDoubles = true
		}
	}
	switch t.Name {
	case "citext", "int4range", "int8range", "numrange", "tsrange", "tstzrange", "daterange", "ltree", "tsvector":
		// Arrays of these are string arrays for Debezium, but its
		// unchanged-TOAST placeholder for them is a plain string that
		// fails to convert ("Invalid Java object for schema with type
		// ARRAY"), so the field is null (verified side by side).
		t.NullUnavailableArray = true
	}
	return t
}
