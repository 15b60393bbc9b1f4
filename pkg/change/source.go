package change

import (
	"errors"
	"fmt"
)

// Source describes where a change came from: the fields every Debezium
// connector writes in its source block, the connector's block (Block), and
// the values of the block's own fields (Ints, Strings) as the driver filled
// them for this event. Source is comparable and holds no slice, so a
// driver fills it without allocating and the encoder can tell two events'
// sources apart with ==.
type Source struct {
	// Block is the connector's source block, declared once by the driver;
	// nil: the event cannot be encoded.
	Block *SourceBlock
	Name  string // topic prefix (Debezium's logical server name); "": the encoder's
	// DB, Schema and Table name the change's table as the block writes
	// them; "" falls back to the event table's ID.
	DB     string
	Schema string
	Table  string
	// CommitMicros is the commit time in the source, µs since the epoch.
	CommitMicros int64
	// Snapshot is Debezium's enum: "" (streaming, written as "false"),
	// "true", "first", "last", "first_in_data_collection", "last_in_data_collection".
	Snapshot string
	Sequence string // "" is written as null
	// Ints and Strings hold the values of Block's own fields, at the slots
	// its fields name; zero where the driver does not know the value.
	Ints    [SourceSlots]int64
	Strings [SourceSlots]string
}

// SourceSlots is how many integer and how many string fields of its own a
// source block may have.
const SourceSlots = 4

// SourceBlock declares a connector's source block: what Debezium's
// connector for that database writes in "source" after the fields every
// connector has (version, connector, name, ts_ms, snapshot, db, sequence,
// ts_us, ts_ns). A driver declares it once; the encoder writes any block
// from its declaration, and builds its schema once.
type SourceBlock struct {
	Connector  string        // source.connector
	SchemaName string        // the source schema's Connect name
	Fields     []SourceField // the connector's own fields, in order
	// SnapshotZonedTrimmed: the connector's snapshot reads (op r) write a
	// zoned timestamp with its fraction's trailing zeros dropped (as a
	// value read through JDBC), where streamed changes and the schema's
	// default keep the column's precision.
	SnapshotZonedTrimmed bool
	// KeyMissingHint is what the encoder's error adds when a change's row
	// image lacks a key column: how to make this database log it.
	KeyMissingHint string
	// TxID, when set, is the connector's transaction id of a streamed
	// change with source s (transaction metadata: the change's block and
	// its transaction's BEGIN). nil: the source gives no transaction
	// metadata.
	TxID func(s *Source) string
	// TxEndID is the id of a transaction's END, from the source of its
	// first change and the cursor its commit was handed on with; nil: the
	// same as TxID of that first change.
	TxEndID func(first *Source, cursor Position) string
}

// SourceField is one field of a source block.
type SourceField struct {
	Name string     // the JSON name Debezium writes
	Type SourceType // its Connect type
	// Optional is the Connect schema's optional; a Slot field's zero value
	// is then written as null (what Debezium writes when it has no value).
	Optional bool
	From     SourceFrom
	// Slot is the index in Source.Ints (integer types) or Source.Strings
	// (SourceString) of a FromSlot field's value.
	Slot int
}

// SourceType is a source field's Kafka Connect type.
type SourceType uint8

const (
	SourceString SourceType = iota + 1
	SourceInt32
	SourceInt64
)

// SourceFrom says where a source field's value comes from.
type SourceFrom uint8

const (
	// FromSlot: Source.Ints or Source.Strings at the field's Slot.
	FromSlot SourceFrom = iota
	// FromSchema, FromTable: Source.Schema or Source.Table, or the event
	// table's schema or name when empty.
	FromSchema
	FromTable
	// FromNull: always null; a field the connector declares and this
	// source never fills. Only an optional field may be.
	FromNull
)

// commonSourceFields are the names every source block starts with.
var commonSourceFields = []string{"version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "ts_us", "ts_ns"}

// Validate reports what makes b unusable: a missing connector or schema
// name, a field without a name or repeating another (the common ones
// included), an unknown type or origin, a slot out of range or shared, a
// required field that is always null.
func (b *SourceBlock) Validate() error {
	var errs []error
	if b.Connector == "" {
		errs = append(errs, errors.New("source block: connector is empty"))
	}
	if b.SchemaName == "" {
		errs = append(errs, fmt.Errorf("source block %q: schema name is empty", b.Connector))
	}
	seen := map[string]bool{}
	for _, n := range commonSourceFields {
		seen[n] = true
	}
	var ints, strs [SourceSlots]bool
	for i, f := range b.Fields {
		where := fmt.Sprintf("source block %q field %d (%q)", b.Connector, i, f.Name)
		if f.Name == "" {
			errs = append(errs, fmt.Errorf("%s: name is empty", where))
		} else if seen[f.Name] {
			errs = append(errs, fmt.Errorf("%s: name repeats another field", where))
		}
		seen[f.Name] = true
		if f.Type < SourceString || f.Type > SourceInt64 {
			errs = append(errs, fmt.Errorf("%s: unknown type %d", where, f.Type))
		}
		switch f.From {
		case FromSlot:
			used := &ints
			if f.Type == SourceString {
				used = &strs
			}
			if f.Slot < 0 || f.Slot >= SourceSlots {
				errs = append(errs, fmt.Errorf("%s: slot %d outside 0..%d", where, f.Slot, SourceSlots-1))
			} else if used[f.Slot] {
				errs = append(errs, fmt.Errorf("%s: slot %d is another field's", where, f.Slot))
			} else {
				used[f.Slot] = true
			}
		case FromSchema, FromTable:
			if f.Type != SourceString {
				errs = append(errs, fmt.Errorf("%s: a schema or table name is a string", where))
			}
		case FromNull:
			if !f.Optional {
				errs = append(errs, fmt.Errorf("%s: always null but not optional", where))
			}
		default:
			errs = append(errs, fmt.Errorf("%s: unknown origin %d", where, f.From))
		}
	}
	return errors.Join(errs...)
}

// Slot returns the slot of b's field name, or -1 when b has no such field
// filled from a slot.
func (b *SourceBlock) Slot(name string) int {
	for _, f := range b.Fields {
		if f.Name == name && f.From == FromSlot {
			return f.Slot
		}
	}
	return -1
}
