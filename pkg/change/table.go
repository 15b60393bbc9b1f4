package change

// Kind is the source-neutral type of a column. Each kind fixes how a Value
// of that column is held (see the comments) and how Debezium encodes it.
type Kind uint8

const (
	KindUnknown     Kind = iota // not encodable; Debezium drops such columns by default
	KindBool                    // Int 0/1
	KindInt16                   // Int
	KindInt32                   // Int
	KindInt64                   // Int
	KindFloat32                 // Float
	KindFloat64                 // Float
	KindDecimal                 // Text, canonical decimal ("-12.50", "NaN"); Type.Scale < 0: variable scale
	KindString                  // Text
	KindJSON                    // Text
	KindUUID                    // Text
	KindBytes                   // Binary
	KindDate                    // Int, days since 1970-01-01
	KindTime                    // Int, µs since midnight
	KindTimestamp               // Int, µs since the epoch, no time zone (beyond int64 µs: see FarTimestamp)
	KindTimestampTZ             // Int, µs since the epoch, UTC (beyond int64 µs: see FarTimestamp)
	KindYear                    // Int, the year (MySQL YEAR)
	KindEnum                    // Text, one of the values listed in Type.Values
	KindSet                     // Text, members of Type.Values joined by ","
	KindBits                    // Binary, little-endian, Type.Length bits (MySQL BIT(n), n > 1)
	KindXML                     // Text, an XML document or fragment
	KindTimeTZ                  // Int, µs since midnight UTC (a time with zone, moved to UTC)
	// KindDuration: Int, µs, with Debezium's MicroDuration arithmetic (a
	// month is 30.4375 days, a year 12 months).
	KindDuration
	// KindArray: a one-dimensional array of Type.Elem; the Value is of
	// ValueKind Array with one element Value per item in Elems.
	KindArray
	// KindTsvector, KindLtree: Text, PostgreSQL's text form of a tsvector
	// or an ltree (Debezium gives them their own semantic names).
	KindTsvector
	KindLtree
	// KindPoint, KindGeometry, KindGeography: Binary, the geometry's WKB
	// as Debezium publishes it (PostGIS: EWKB, SRID flag included), with
	// the SRID in Int, or NoSRID when it has none. A KindPoint's WKB is a
	// 2D point (21 bytes).
	KindPoint
	KindGeometry
	KindGeography
)

// NoSRID is the Int of a geometry Value without a spatial reference id
// (Debezium writes "srid":null).
const NoSRID = -1

// GeometryValue builds a KindPoint/KindGeometry/KindGeography value.
func GeometryValue(wkb []byte, srid int64) Value { return Value{Kind: Binary, Bytes: wkb, Int: srid} }

// Type is a column's type: the neutral Kind plus what the source said.
type Type struct {
	Kind      Kind
	Name      string // the source's type name, e.g. "int4", "varchar"
	Precision int    // digits for decimals, fractional-second digits for times; -1 when unspecified
	Scale     int    // for decimals; -1 when unspecified (variable scale)
	Length    int    // for character types; bits for KindBits; -1 when unspecified
	Values    string // KindEnum, KindSet: the allowed values in declaration order, joined by ","
	Elem      *Type  // KindArray: the element type; nil otherwise

	// What the connector writes for this type beyond what Kind says; the
	// driver sets them from its connector's converters.

	// Zero, when set, is the text of the type's zero value where it is
	// not the kind's own (""): what a NOT NULL column without a value or
	// an evaluable default is written as (a map type's "{}").
	Zero string
	// JavaDoubles: a KindUnknown value's text (published as bytes with
	// include_unknown_types) has every number written as Java's
	// Double.toString, as the connector's JDBC driver prints the type.
	JavaDoubles bool
	// NullUnavailableArray, on an array's element type: an Unavailable
	// value of the array is written as null, not as a placeholder (the
	// connector's placeholder does not convert to such an array).
	NullUnavailableArray bool
}

// Column is one column of a table.
type Column struct {
	Name     string
	Type     Type
	Optional bool // nullable
	// Default is the column's default value, held as a value of the
	// column; nil when the column has no default. A Null Value means the
	// column has a default the source cannot evaluate (an expression such
	// as nextval() or now()); Debezium then writes the type's zero value
	// as the default of a NOT NULL column and no default otherwise.
	Default *Value
	// Masked says the source masked the column's values (source.mask_columns)
	// before they reached the row: Debezium marks such a field's schema
	// with the parameter masked=true.
	Masked bool
}

// TableID names a table in its source.
type TableID struct {
	DB     string
	Schema string // "" where the source has none (MySQL)
	Name   string
	// DBInTopic says the database is part of the topic name as well as the
	// schema (SQL Server: <prefix>.<database>.<schema>.<table>).
	DBInTopic bool
}

// Unified stands for the part a unified table spans: a table unified across
// schemas has Schema Unified and publishes to <prefix>._.<table>; a SQL
// Server table unified across databases has DB "" and publishes to
// <prefix>.<schema>.<table>.
const Unified = "_"

// String returns "schema.name", or "db.name" where there is no schema.
func (id TableID) String() string {
	if id.Schema != "" {
		return id.Schema + "." + id.Name
	}
	return id.DB + "." + id.Name
}

// Table is one version of a table's shape. A source makes a new *Table
// (with a higher Version) whenever the shape changes, so encoders may cache
// per *Table.
type Table struct {
	ID      TableID
	Columns []Column
	Key     []int // indexes into Columns of the primary key, in key order; empty: no key
	Version uint64
	// Document, when set, makes this a document table: its rows carry
	// whole documents in the driver's own encoding, and the driver writes
	// their messages (its connector's document-shaped envelope) instead
	// of the encoder's row envelope. Key still names the columns the
	// snapshot engine tells rows apart by.
	Document DocumentCodec
}

// DocumentCodec writes the key and value of a document table's events, as
// its connector does; the encoder calls it with what it knows of the
// message format.
type DocumentCodec interface {
	AppendDocumentKey(dst []byte, ev *Event, f DocumentFormat) ([]byte, error)
	AppendDocumentValue(dst []byte, ev *Event, f DocumentFormat, nowMicros int64) ([]byte, error)
}

// DocumentFormat is the message format a DocumentCodec writes in.
type DocumentFormat struct {
	// Prefix is the topic prefix (source.name where the event's
	// Source.Name is empty); Version is source.version.
	Prefix, Version string
	// Schemas writes {"schema":…,"payload":…}; false the payload alone.
	Schemas bool
	// Unwrap is format.unwrap (the connector's document transform, e.g.
	// ExtractNewDocumentState), with its delete handling and added fields.
	Unwrap         bool
	DeleteHandling string
	AddFields      []string
}
