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
	KindTimestamp               // Int, µs since the epoch, no time zone
	KindTimestampTZ             // Int, µs since the epoch, UTC
)

// Type is a column's type: the neutral Kind plus what the source said.
type Type struct {
	Kind      Kind
	Name      string // the source's type name, e.g. "int4", "varchar"
	Precision int    // digits for decimals, fractional-second digits for times; -1 when unspecified
	Scale     int    // for decimals; -1 when unspecified (variable scale)
	Length    int    // for character types; -1 when unspecified
}

// Column is one column of a table.
type Column struct {
	Name     string
	Type     Type
	Optional bool // nullable
}

// TableID names a table in its source.
type TableID struct {
	DB     string
	Schema string // "" where the source has none (MySQL)
	Name   string
}

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
}
