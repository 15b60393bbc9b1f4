package debezium

import (
	"bytes"
	"encoding/hex"
	"hash/crc32"
	"strconv"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/jsonstr"
)

// Format is the shape of the messages: what Debezium users choose with
// Kafka Connect's JsonConverter (schemas.enable), the ExtractNewRecordState
// transform and the connectors' *.handling.mode options
// (docs/configuration.md, "Message format"). The zero value is Debezium's
// defaults, which the rest of this package describes. Everything a Format
// changes is decided when a table's codec is built: per row the encoder
// writes what the plans say, without asking the Format again.
type Format struct {
	// NoSchemas is JsonConverter's schemas.enable=false: the key and the
	// value are the payload alone, without {"schema":…,"payload":…}.
	NoSchemas bool
	// Unwrap is ExtractNewRecordState: the value is the row (the after
	// image), with AddFields and, when DeleteHandling rewrites, __deleted.
	Unwrap bool
	// DeleteHandling is ExtractNewRecordState's
	// delete.tombstone.handling.mode: DeleteTombstone ("", the default),
	// DeleteRewrite, DeleteRewriteWithTombstone, DeleteDrop or
	// DeleteToTombstone. See Encoder.DeleteRecords.
	DeleteHandling string
	// AddFields is ExtractNewRecordState's add.fields: "op", "table" and
	// "source.ts_ms", written as __op, __table and __source_ts_ms.
	AddFields []string
	// Decimal is decimal.handling.mode: "" or "precise", "double", "string".
	Decimal string
	// Time is time.precision.mode: "" (adaptive, and for MySQL sources
	// adaptive_time_microseconds, which their TIME columns already are),
	// "adaptive", "adaptive_time_microseconds" or "connect".
	Time string
	// Binary is binary.handling.mode: "" or "bytes", "base64", "hex".
	Binary string
	// Documents: the source's tables are document tables (MongoDB), whose
	// transform is ExtractNewDocumentState: under delete handling
	// tombstone it turns a delete into a record with a null value.
	Documents bool
}

// ExtractNewRecordState's delete.tombstone.handling.mode values.
const (
	DeleteTombstone            = "tombstone"
	DeleteRewrite              = "rewrite"
	DeleteRewriteWithTombstone = "rewrite-with-tombstone"
	DeleteDrop                 = "drop"
	DeleteToTombstone          = "delete-to-tombstone"
)

func (f *Format) rewrites() bool {
	return f.Unwrap && (f.DeleteHandling == DeleteRewrite || f.DeleteHandling == DeleteRewriteWithTombstone)
}

// DeleteRecords says what a delete becomes, given destination.delete_mode
// (record, tombstone or record_and_tombstone: whether the connector emits
// the delete event, the tombstone after it, or both). value: a value
// record is written for the delete (AppendValue); tombstone: a record with
// a null value follows it. Without Unwrap that is delete_mode itself;
// with it, what ExtractNewRecordState does with the connector's two
// records (DefaultDeleteHandlingStrategy in Debezium 3.6): the tombstone
// is dropped except by rewrite-with-tombstone; the delete becomes a
// null-payload value (tombstone), the before row with __deleted "true"
// (rewrite, rewrite-with-tombstone), nothing (drop), or a tombstone
// (delete-to-tombstone).
func (e *Encoder) DeleteRecords(deleteMode string) (value, tombstone bool) {
	value, tombstone = deleteMode != "tombstone", deleteMode != "record"
	if !e.format.Unwrap {
		return value, tombstone
	}
	switch e.format.DeleteHandling {
	case DeleteRewriteWithTombstone:
		return value, tombstone
	case DeleteDrop:
		return false, false
	case DeleteToTombstone:
		return false, value
	}
	if e.format.Documents && e.format.DeleteHandling != DeleteRewrite {
		// ExtractNewDocumentState writes the delete as a null value: a
		// tombstone, and drops the connector's own.
		return false, value
	}
	return value, false
}

// SchemasEnabled reports whether keys and values carry their schema
// ({"schema":…,"payload":…}), as JsonConverter's schemas.enable=true.
func (e *Encoder) SchemasEnabled() bool { return !e.format.NoSchemas }

// formatSchema changes the default-mode schema and encoding of a column
// (columnSchema) to what the decimal, time and binary modes make of it.
func (f *Format) formatSchema(t *change.Type, s *connectSchema, enc colEnc) colEnc {
	if f == nil {
		return enc
	}
	switch t.Kind {
	case change.KindDecimal:
		switch f.Decimal {
		case "double":
			*s = connectSchema{typ: "double", optional: s.optional}
			return encDecimalDouble
		case "string":
			*s = connectSchema{typ: "string", optional: s.optional}
			return encDecimalString
		}
	case change.KindBytes:
		switch f.Binary {
		case "base64":
			// The same base64 text as bytes; the schema says string.
			s.typ = "string"
			return encBytesBase64
		case "hex":
			s.typ = "string"
			return encBytesHex
		}
	case change.KindDate:
		if f.Time == "connect" {
			s.name = "org.apache.kafka.connect.data.Date"
		}
	case change.KindTime:
		switch f.Time {
		case "connect":
			s.typ, s.name = "int32", "org.apache.kafka.connect.data.Time"
			return encTimeMillis
		case "adaptive_time_microseconds":
			s.typ, s.name = "int64", "io.debezium.time.MicroTime"
			return encTimeMicros
		}
	case change.KindTimestamp:
		if f.Time == "connect" {
			s.typ, s.name = "int64", "org.apache.kafka.connect.data.Timestamp"
			return encTimestampMillis
		}
	}
	return enc
}

// appendDecimalDouble writes decimal text as the double Debezium's
// decimal.handling.mode=double makes of it (BigDecimal.doubleValue, which
// rounds correctly, as ParseFloat does), in Java's notation.
func appendDecimalDouble(b, text []byte) ([]byte, error) {
	if _, err := parseDecimal(text); err == ErrSpecialDecimal {
		// Double.NaN and the infinities, which JsonConverter's Jackson
		// writes quoted.
		return append(b, `"`+specialDecimal(text, "NaN", "Infinity", "-Infinity")+`"`...), nil
	} else if err != nil {
		return b, err
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return b, ErrDecimal
	}
	return appendJavaFloat(b, f, 64), nil
}

// appendDecimalString writes decimal text as decimal.handling.mode=string
// does (BigDecimal.toPlainString): the source's canonical digits.
func appendDecimalString(b, text []byte) ([]byte, error) {
	if _, err := parseDecimal(text); err == ErrSpecialDecimal {
		// SpecialValueDecimal's toString: the name of its special value.
		return append(b, `"`+specialDecimal(text, "NAN", "POSITIVE_INFINITY", "NEGATIVE_INFINITY")+`"`...), nil
	} else if err != nil {
		return b, err
	}
	return jsonstr.Append(b, text), nil
}

// specialDecimal names the special value decimal text spells (parseDecimal
// said ErrSpecialDecimal): nan, inf or negInf. Unlike precise mode, which
// cannot carry them (a null field), the double and string modes write
// PostgreSQL's NaN and ±Infinity numerics, as Debezium does (verified side
// by side in integration/scenario/review_format_test.go).
func specialDecimal(text []byte, nan, inf, negInf string) string {
	switch {
	case bytes.EqualFold(bytes.TrimLeft(text, "+-"), []byte("nan")):
		return nan
	case text[0] == '-':
		return negInf
	}
	return inf
}

// appendHex writes bytes as binary.handling.mode=hex does: lower-case hex.
func appendHex(b, v []byte) []byte {
	b = append(b, '"')
	b = hex.AppendEncode(b, v)
	return append(b, '"')
}

// unwrapPlan is what Unwrap adds to a table's codec.
type unwrapPlan struct {
	// head is `{"schema":<the transform's Value schema>,"payload":` (empty
	// without schemas); tail closes it.
	head    []byte
	headCRC uint32 // head's CRC32C, for the value's Head
	tail    string
	// deleted is the payload of a delete under delete_handling tombstone:
	// the after field's schema and a null payload, as JsonConverter writes
	// a null value with a schema (without schemas: the JSON text null).
	deleted []byte
}

// buildUnwrap fills c's unwrap plan from the Value schema the envelope
// embeds. The transform rebuilds that schema (SchemaUtil.copySchemaBasics
// keeps name and version but not optional) and appends, in order,
// __deleted (rewrite modes) and the added fields, all optional.
func (e *Encoder) buildUnwrap(c *tableCodec, value connectSchema) {
	f := &e.format
	if f.NoSchemas {
		c.unwrap.deleted = []byte("null")
		return
	}
	c.unwrap.deleted = append(c.unwrap.deleted, `{"schema":`...)
	c.unwrap.deleted = value.appendJSON(c.unwrap.deleted, "")
	c.unwrap.deleted = append(c.unwrap.deleted, `,"payload":null}`...)

	row := value
	row.optional = false
	row.fields = append([]connectField(nil), value.fields...)
	if f.rewrites() {
		row.fields = append(row.fields, connectField{"__deleted", optionalStringSchema})
	}
	for _, a := range f.AddFields {
		s := optionalStringSchema
		if a == "source.ts_ms" {
			s = optionalInt64Schema
		}
		row.fields = append(row.fields, connectField{addedFieldName(a), s})
	}
	c.unwrap.head = append(c.unwrap.head, `{"schema":`...)
	c.unwrap.head = row.appendJSON(c.unwrap.head, "")
	c.unwrap.head = append(c.unwrap.head, `,"payload":`...)
	c.unwrap.headCRC = crc32.Checksum(c.unwrap.head, castagnoli)
	c.unwrap.tail = "}"
}

// addedFieldName is add.fields' name for a field: "__" and the field,
// a struct's dot made '_' (source.ts_ms → __source_ts_ms).
func addedFieldName(a string) string {
	if a == "source.ts_ms" {
		return "__source_ts_ms"
	}
	return "__" + a
}

// appendUnwrapped is AppendValue with Unwrap: the row ExtractNewRecordState
// makes of ev (see DeleteRecords for deletes the pipeline does not write).
func (e *Encoder) appendUnwrapped(dst []byte, c *tableCodec, ev *change.Event) ([]byte, Head, error) {
	row := ev.After
	if ev.Op == change.OpDelete {
		if !e.format.rewrites() {
			return append(dst, c.unwrap.deleted...), Head{}, nil
		}
		row = ev.Before
	}
	if row == nil {
		return dst, Head{}, &EncodeError{Table: tableName(ev.Table), Err: ErrNoRow, Detail: "op " + ev.Op.String() + " has no row image to unwrap"}
	}
	n := len(dst)
	dst = append(dst, c.unwrap.head...)
	dst, err := c.appendRow(dst, ev.Table, row, c.valuePlans(ev))
	if err != nil {
		return dst[:n], Head{}, err
	}
	if e.format.rewrites() || len(e.format.AddFields) > 0 {
		dst = dst[:len(dst)-1] // reopen the row's struct
		sep := len(c.cols) > 0
		field := func(name string) {
			if sep {
				dst = append(dst, ',')
			}
			sep = true
			dst = append(dst, name...)
		}
		if e.format.rewrites() {
			field(`"__deleted":`)
			if ev.Op == change.OpDelete {
				dst = append(dst, `"true"`...)
			} else {
				dst = append(dst, `"false"`...)
			}
		}
		for _, a := range e.format.AddFields {
			switch a {
			case "op":
				field(`"__op":"`)
				dst = append(dst, byte(ev.Op), '"')
			case "table":
				field(`"__table":`)
				dst = jsonstr.Append(dst, orDefault(ev.Source.Table, ev.Table.ID.Name))
			case "source.ts_ms":
				field(`"__source_ts_ms":`)
				dst = strconv.AppendInt(dst, floorDiv(ev.Source.CommitMicros, 1000), 10)
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, c.unwrap.tail...), Head{len(c.unwrap.head), c.unwrap.headCRC}, nil
}
