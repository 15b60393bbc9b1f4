// Package change is the source-neutral model of a row change: what every
// source produces and what the encoder and pipeline consume. It knows no
// database wire format and no Kafka detail.
package change

import "strconv"

// Op is the kind of change, with Debezium's letters.
type Op byte

const (
	// OpNone marks an event that carries only a position (a transaction
	// commit, a backfill chunk boundary). It publishes nothing; the pipeline
	// uses it to know where a checkpoint may be taken.
	OpNone   Op = 0
	OpCreate Op = 'c'
	OpUpdate Op = 'u'
	OpDelete Op = 'd'
	OpRead   Op = 'r' // a row read by a backfill
)

// String returns the Debezium letter ("c", "u", "d", "r"), or "" for OpNone.
func (o Op) String() string {
	if o == OpNone {
		return ""
	}
	return string(rune(o))
}

// Position is a resumable point in a source's log, owned and encoded by the
// source (JSON). The pipeline stores it and hands it back, never reads it.
type Position []byte

// Event is one row change, or a position marker when Op is OpNone.
//
// Who owns what once a source hands an Event on: the Event struct itself
// is the consumer's only while the call runs (pkg/pipeline encodes it and
// keeps what its acknowledgement needs, see produce in
// pkg/pipeline/pipeline.go), so a source may fill the same struct again
// after the call returns. Its rows are not: pkg/snapshot keeps a streamed
// row's After image while a snapshot window is open
// (pkg/snapshot/touch.go), and backfilled events until it emits them. A
// Row, and the memory its Values' Bytes point into, is never reused or
// written after it is handed on; rows may share one allocation (a slab)
// that is never reused, which the garbage collector frees with the last
// row that points into it.
type Event struct {
	Table  *Table
	Op     Op
	Before Row // nil when the source gives no old image (inserts, reads)
	After  Row // nil for deletes
	Source Source
	// Position, when set, is a point the source can resume from once this
	// event and every event before it is durably published. Sources set it
	// only where resuming is safe (after a transaction's last row).
	Position Position
	// ID identifies the source change, stable across retries and restarts,
	// so consumers can deduplicate.
	ID string
	// Tx places a streamed change in its transaction when transaction
	// metadata is on; the zero value is none (written as null).
	Tx Tx
	// Mark, on an event of Op OpNone, is a transaction's BEGIN or END for
	// the transaction topic; nil on every other event.
	Mark *TxMark
}

// Tx is a change's place in its transaction: Debezium's transaction
// block (id, total_order, data_collection_order).
type Tx struct {
	ID    string // "": not part of a transaction
	Total int64  // the change's order in the transaction, from 1
	Table int64  // its order among the transaction's changes of its table, from 1
}

// TxMark is a transaction's BEGIN (End false) or END on the transaction
// topic.
type TxMark struct {
	End          bool
	ID           string
	CommitMicros int64
	// Count and Tables, at the END only: the transaction's changes, and
	// per table (in the order each was first changed) their number.
	Count  int64
	Tables []TxTable
}

// TxTable is one table's changes in a transaction: Name as Debezium
// names a data collection (TableID.String).
type TxTable struct {
	Name  string
	Count int64
}

// Row holds one value per column of its Table, in column order.
type Row []Value

// ValueKind says which field of a Value is set.
type ValueKind uint8

const (
	Null        ValueKind = iota
	Int                   // Int holds the value (ints, bools 0/1, dates, times, timestamps; see Kind)
	Float                 // Float holds the value
	Text                  // Bytes holds UTF-8 text (strings, decimals as text, JSON, UUIDs)
	Binary                // Bytes holds raw bytes
	Unavailable           // the source did not send the value (unchanged TOAST)
	Array                 // Elems holds the elements (KindArray columns)
)

// UnavailablePlaceholder is Debezium's default unavailable.value.placeholder:
// the text it publishes for a value PostgreSQL did not send (an Unavailable
// value of a text column), and what a column mask is applied to then.
const UnavailablePlaceholder = "__debezium_unavailable_value"

// Value is one column value, in a form that needs no allocation to read.
// How Int or Bytes is interpreted follows the column's Type.Kind.
//
// Bytes is read-only: a source may point it into memory it shares with
// other values (a replication message, a string) rather than copy every
// column, so nothing that reads an event writes through it; build a new
// slice instead.
type Value struct {
	Kind  ValueKind
	Int   int64
	Float float64
	Bytes []byte
	Elems []Value // ValueKind Array only
}

// IntValue, FloatValue, TextValue and BinaryValue build Values.
func IntValue(i int64) Value     { return Value{Kind: Int, Int: i} }
func FloatValue(f float64) Value { return Value{Kind: Float, Float: f} }
func TextValue(s string) Value   { return Value{Kind: Text, Bytes: []byte(s)} }
func BinaryValue(b []byte) Value { return Value{Kind: Binary, Bytes: b} }

// FarTimestamp is a KindTimestamp or KindTimestampTZ value too late for
// µs since the epoch in an int64 (after 294247-01-10T04:00:54.775807Z;
// PostgreSQL allows up to 294276-12-31): Text, the seconds since the epoch,
// a '.' and six digits of µs ("9224318015999.999999").
func FarTimestamp(seconds, micros int64) Value {
	b := strconv.AppendInt(nil, seconds, 10)
	b = append(b, '.')
	for d := int64(100000); d > 0; d /= 10 {
		b = append(b, byte('0'+micros/d%10))
	}
	return Value{Kind: Text, Bytes: b}
}

// String renders the value for logs and tests; a snapshot's read event
// IDs carry it too (AppendText).
func (v Value) String() string { return string(v.AppendText(nil)) }

// AppendText appends String's text of v to b.
func (v Value) AppendText(b []byte) []byte {
	switch v.Kind {
	case Null:
		return append(b, "NULL"...)
	case Int:
		return strconv.AppendInt(b, v.Int, 10)
	case Float:
		return strconv.AppendFloat(b, v.Float, 'g', -1, 64)
	case Text:
		return strconv.AppendQuote(b, string(v.Bytes))
	case Binary:
		return strconv.AppendQuote(append(b, "0x"...), string(v.Bytes))
	case Unavailable:
		return append(b, "<unavailable>"...)
	case Array:
		b = append(b, '[')
		for i, e := range v.Elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.AppendText(b)
		}
		return append(b, ']')
	}
	return append(b, '?')
}
