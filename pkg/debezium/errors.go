package debezium

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Sentinel errors, wrapped in an [*EncodeError]; test with errors.Is.
var (
	// ErrRowLength: a row does not hold one value per column of its table.
	ErrRowLength = errors.New("row length does not match the table's columns")
	// ErrValueKind: a value's ValueKind does not fit its column's Kind
	// (for example Text for an int4 column).
	ErrValueKind = errors.New("value kind does not fit the column type")
	// ErrValueRange: the value does not fit the column's Connect type
	// (an int16 column holding 70000, a bool holding 2).
	ErrValueRange = errors.New("value out of range for the column type")
	// ErrDecimal: decimal text that is not a plain decimal number, or that
	// has more non-zero fractional digits than the column's scale.
	ErrDecimal = errors.New("malformed decimal")
	// ErrSpecialDecimal: NaN or ±Infinity in a NOT NULL decimal column (or
	// an element of a NOT NULL decimal array). A Connect Decimal cannot
	// hold them; Debezium fails the connector in
	// decimal.handling.mode=precise ("Got a special value (NaN/Infinity) for
	// Decimal type ... set decimal handling mode to 'string'"). The pipeline
	// records the row as row.skipped instead (pkg/pipeline/unencodable.go).
	ErrSpecialDecimal = errors.New("NaN/Infinity cannot be encoded as a Connect Decimal (decimal.handling.mode=precise)")
	// ErrUnavailable: the source sent "unavailable" (unchanged TOAST) for a
	// column whose type has no Debezium placeholder.
	ErrUnavailable = errors.New("no unavailable-value placeholder for the column type")
	// ErrConnector: the event's source names no source block, or one
	// whose declaration is unusable (change.SourceBlock.Validate).
	ErrConnector = errors.New("unsupported connector for the source block")
	// ErrOp: the event has no publishable op (OpNone or an unknown letter).
	ErrOp = errors.New("event has no publishable op")
	// ErrNoRow: the event carries neither a before nor an after row.
	ErrNoRow = errors.New("event has no row")
	// ErrKeyMissing: a key column is null or unavailable in the row the
	// key is taken from, and not because the column holds a null: the
	// source's row image does not carry it (a PostgreSQL delete whose
	// replica identity has other columns, an unchanged TOASTed value).
	// A key is never made up: a zero or a placeholder would name another
	// row.
	ErrKeyMissing = errors.New("key column missing from the row image")
	// ErrTable: the table itself cannot be encoded (nil, or a key index
	// outside its columns).
	ErrTable = errors.New("table cannot be encoded")
)

// EncodeError reports an event that cannot be encoded. It names the table
// and, when one column is at fault, the column and its type. It never holds
// the value itself: row data does not belong in logs.
type EncodeError struct {
	Table     string           // "schema.table" or "db.table"
	Column    string           // "" when no single column is at fault
	Kind      change.Kind      // the column's kind, when Column is set
	ValueKind change.ValueKind // the offending value's kind, when Column is set
	Detail    string           // extra context, e.g. `op "x"`
	Err       error            // one of the sentinels above
}

func (e *EncodeError) Error() string {
	var b strings.Builder
	b.WriteString("debezium: table ")
	b.WriteString(e.Table)
	if e.Column != "" {
		b.WriteString(" column ")
		b.WriteString(strconv.Quote(e.Column))
		b.WriteString(" (")
		b.WriteString(kindName(e.Kind))
		b.WriteString(", value ")
		b.WriteString(valueKindName(e.ValueKind))
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

func (e *EncodeError) Unwrap() error { return e.Err }

func tableName(t *change.Table) string {
	if t == nil {
		return "<nil>"
	}
	return t.ID.String()
}

func kindName(k change.Kind) string {
	switch k {
	case change.KindUnknown:
		return "unknown"
	case change.KindBool:
		return "bool"
	case change.KindInt16:
		return "int16"
	case change.KindInt32:
		return "int32"
	case change.KindInt64:
		return "int64"
	case change.KindFloat32:
		return "float32"
	case change.KindFloat64:
		return "float64"
	case change.KindDecimal:
		return "decimal"
	case change.KindString:
		return "string"
	case change.KindJSON:
		return "json"
	case change.KindUUID:
		return "uuid"
	case change.KindBytes:
		return "bytes"
	case change.KindDate:
		return "date"
	case change.KindTime:
		return "time"
	case change.KindTimestamp:
		return "timestamp"
	case change.KindTimestampTZ:
		return "timestamptz"
	case change.KindXML:
		return "xml"
	case change.KindTimeTZ:
		return "timetz"
	case change.KindDuration:
		return "duration"
	case change.KindArray:
		return "array"
	case change.KindTsvector:
		return "tsvector"
	case change.KindLtree:
		return "ltree"
	case change.KindPoint:
		return "point"
	case change.KindGeometry:
		return "geometry"
	case change.KindGeography:
		return "geography"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

func valueKindName(k change.ValueKind) string {
	switch k {
	case change.Null:
		return "null"
	case change.Int:
		return "int"
	case change.Float:
		return "float"
	case change.Text:
		return "text"
	case change.Binary:
		return "binary"
	case change.Unavailable:
		return "unavailable"
	case change.Array:
		return "array"
	}
	return "valuekind(" + strconv.Itoa(int(k)) + ")"
}
