package debezium

import (
	"errors"
	"math"
	"unicode/utf8"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/jsonstr"
)

// FieldWriter receives a key or a value field by field, depth first, in
// the order of its Connect schema: what a binary encoding (Avro,
// pkg/debezium/avro) writes without going through JSON. Every field gets
// exactly one call; a struct's fields follow its Struct call.
type FieldWriter interface {
	// Begin comes first, with the message's Connect schema as
	// JsonConverter writes it: a slice the Encoder keeps, the same for
	// every message of the table version.
	Begin(schema []byte)
	Null()   // the field is null (its schema is optional)
	Struct() // a struct: its fields follow
	Bool(v bool)
	Int(v int64)     // int8 … int64 fields
	Float(v float64) // float and double fields
	String(s string) // valid UTF-8
	StringBytes(s []byte)
	Bytes(b []byte)
	// JSON is a value as the JSON writer writes it, for the encodings
	// that have no call of their own (decimals, arrays, geometries,
	// defaults, placeholders).
	JSON(v []byte)
	// Scratch lends a buffer for building what the next call gets; it
	// is the writer's again once that call returns.
	Scratch() []byte
}

// ErrNotFieldWise is WriteKey's and WriteValue's answer for an event
// whose message they do not write field by field: the outbox, document
// tables, messages without schemas, the null value of format.unwrap's
// deletes and keys with transforms.reroute's added field. AppendKey and
// AppendValue write those.
var ErrNotFieldWise = errors.New("debezium: this message is written as JSON only")

// WriteKey writes ev's key to w, as AppendKey does in JSON. ok is false,
// and nothing written, when the table has no key. On error w may have
// been given part of the key.
func (e *Encoder) WriteKey(ev *change.Event, w FieldWriter) (ok bool, err error) {
	c, err := e.codecFor(ev)
	if err != nil {
		return false, err
	}
	if ev.Table.Document != nil || e.format.NoSchemas || c.keyExtra != nil {
		return false, ErrNotFieldWise
	}
	if len(c.key) == 0 {
		return false, nil
	}
	row, err := c.keyRow(ev)
	if err != nil {
		return false, err
	}
	w.Begin(c.keyHead[len(`{"schema":`) : len(c.keyHead)-len(`,"payload":`)])
	if err := c.writeRow(w, ev.Table, row, c.keyPlans(ev)); err != nil {
		return false, err
	}
	return true, nil
}

// WriteValue writes ev's value to w, as AppendValue does in JSON (the
// envelope: before, after, source, transaction, op, ts_ms, ts_us,
// ts_ns). On error w may have been given part of the value.
func (e *Encoder) WriteValue(ev *change.Event, nowMicros int64, w FieldWriter) error {
	c, err := e.codecFor(ev)
	if err != nil {
		return err
	}
	if err := checkChange(ev); err != nil {
		return err
	}
	if ev.Table.Document != nil || e.format.NoSchemas || e.outbox != nil {
		return ErrNotFieldWise
	}
	b := e.sourceBlockFor(c, ev)
	if b.err != nil {
		return b.err
	}
	if e.format.Unwrap {
		return e.writeUnwrapped(w, c, ev)
	}
	plans := c.valuePlans(ev)
	w.Begin(b.valueHead[len(`{"schema":`) : len(b.valueHead)-len(`,"payload":{"before":`)])
	w.Struct()
	for _, row := range [2]change.Row{ev.Before, ev.After} {
		if row == nil {
			w.Null()
		} else if err := c.writeRow(w, ev.Table, row, plans); err != nil {
			return err
		}
	}
	e.writeSource(w, b.plan, ev.Table, &ev.Source)
	if tx := &ev.Tx; tx.ID == "" {
		w.Null()
	} else {
		w.Struct()
		w.String(validUTF8(w, tx.ID))
		w.Int(tx.Total)
		w.Int(tx.Table)
	}
	w.String(opLetter(ev.Op))
	w.Int(floorDiv(nowMicros, 1000))
	w.Int(nowMicros)
	w.Int(nowMicros * 1000)
	return nil
}

// writeUnwrapped is appendUnwrapped field by field. A delete whose value
// is null (delete_handling tombstone) is left to the JSON writer.
func (e *Encoder) writeUnwrapped(w FieldWriter, c *tableCodec, ev *change.Event) error {
	row := ev.After
	if ev.Op == change.OpDelete {
		if !e.format.rewrites() {
			return ErrNotFieldWise
		}
		row = ev.Before
	}
	if row == nil {
		return &EncodeError{Table: tableName(ev.Table), Err: ErrNoRow, Detail: "op " + ev.Op.String() + " has no row image to unwrap"}
	}
	w.Begin(c.unwrap.head[len(`{"schema":`) : len(c.unwrap.head)-len(`,"payload":`)])
	if err := c.writeRow(w, ev.Table, row, c.valuePlans(ev)); err != nil {
		return err
	}
	// The added fields close the row's struct, as appendUnwrapped's do.
	if e.format.rewrites() {
		if ev.Op == change.OpDelete {
			w.String("true")
		} else {
			w.String("false")
		}
	}
	for _, a := range e.format.AddFields {
		switch a {
		case "op":
			w.String(opLetter(ev.Op))
		case "table":
			w.String(validUTF8(w, orDefault(ev.Source.Table, ev.Table.ID.Name)))
		case "source.ts_ms":
			w.Int(floorDiv(ev.Source.CommitMicros, 1000))
		}
	}
	return nil
}

// opLetter is op.String() without its allocation.
func opLetter(op change.Op) string {
	switch op {
	case change.OpCreate:
		return "c"
	case change.OpUpdate:
		return "u"
	case change.OpDelete:
		return "d"
	case change.OpRead:
		return "r"
	}
	return op.String()
}

// writeSource is appendSource field by field.
func (e *Encoder) writeSource(w FieldWriter, p *blockPlan, t *change.Table, s *change.Source) {
	w.Struct()
	w.String(validUTF8(w, e.version))
	w.String(validUTF8(w, p.decl.Connector))
	w.String(validUTF8(w, orDefault(s.Name, e.prefix)))
	w.Int(floorDiv(s.CommitMicros, 1000))
	if s.Snapshot == "" {
		w.String("false")
	} else {
		w.String(validUTF8(w, s.Snapshot))
	}
	w.String(validUTF8(w, orDefault(s.DB, t.ID.DB)))
	if s.Sequence == "" {
		w.Null()
	} else {
		w.String(validUTF8(w, s.Sequence))
	}
	w.Int(s.CommitMicros)
	w.Int(s.CommitMicros * 1000)
	j := 0
	for _, d := range p.decl.Fields {
		if d.From == change.FromNull {
			w.Null()
			continue
		}
		f := &p.fields[j]
		j++
		switch f.op {
		case fieldString:
			w.String(validUTF8(w, s.Strings[f.slot]))
		case fieldStringOrNull:
			if v := s.Strings[f.slot]; v != "" {
				w.String(validUTF8(w, v))
			} else {
				w.Null()
			}
		case fieldInt:
			w.Int(s.Ints[f.slot])
		case fieldIntOrNull:
			if v := s.Ints[f.slot]; v != 0 {
				w.Int(v)
			} else {
				w.Null()
			}
		case fieldSchema:
			w.String(validUTF8(w, orDefault(s.Schema, t.ID.Schema)))
		case fieldTable:
			w.String(validUTF8(w, orDefault(s.Table, t.ID.Name)))
		}
	}
}

// writeRow is appendRow field by field.
func (c *tableCodec) writeRow(w FieldWriter, t *change.Table, row change.Row, plans []colPlan) error {
	if len(row) != c.ncols {
		return c.rowLengthError(t, row)
	}
	w.Struct()
	for i := range plans {
		p := &plans[i]
		v := &row[p.idx]
		if err := p.writeValue(w, v); err != nil {
			return &EncodeError{Table: tableName(t), Column: p.name, Kind: p.kind, ValueKind: v.Kind, Err: err}
		}
	}
	return nil
}

// writeValue is appendValue for w: the common encodings as values, the
// others as their JSON.
func (p *colPlan) writeValue(w FieldWriter, v *change.Value) error {
	switch v.Kind {
	case change.Null:
		switch {
		case p.dflt != nil:
			w.JSON(p.dflt) // as appendRow writes a null of a column with a default
		case p.optional:
			w.Null()
		default:
			w.JSON(p.appendFallback(w.Scratch()[:0]))
		}
		return nil
	case change.Unavailable:
		return p.writeJSON(w, v)
	case change.Text:
		if p.enc != encString && p.enc != encDecimal {
			return p.writeJSON(w, v) // decimals, and timestamps beyond int64 (change.FarTimestamp)
		}
	}
	switch p.enc {
	case encBool:
		if v.Kind != change.Int {
			return ErrValueKind
		}
		if v.Int != 0 && v.Int != 1 {
			return ErrValueRange
		}
		w.Bool(v.Int == 1)
	case encInt16:
		return writeIntIn(w, v, math.MinInt16, math.MaxInt16)
	case encInt32, encDate:
		return writeIntIn(w, v, math.MinInt32, math.MaxInt32)
	case encInt64, encTimeMicros, encTimestampMicros:
		if v.Kind != change.Int {
			return ErrValueKind
		}
		w.Int(v.Int)
	case encTimestampMillis:
		if v.Kind != change.Int {
			return ErrValueKind
		}
		w.Int(floorDiv(v.Int, 1000))
	case encTimeNanos, encTimestampNanos:
		if v.Kind != change.Int {
			return ErrValueKind
		}
		if v.Int > math.MaxInt64/1000 || v.Int < math.MinInt64/1000 {
			return ErrValueRange
		}
		w.Int(v.Int * 1000)
	case encFloat32:
		if v.Kind != change.Float {
			return ErrValueKind
		}
		w.Float(float64(float32(v.Float)))
	case encFloat64:
		if v.Kind != change.Float {
			return ErrValueKind
		}
		w.Float(v.Float)
	case encString:
		if v.Kind != change.Text {
			return ErrValueKind
		}
		if utf8.Valid(v.Bytes) {
			w.StringBytes(v.Bytes)
		} else {
			w.StringBytes(jsonstr.AppendValidUTF8(w.Scratch()[:0], v.Bytes))
		}
	case encDecimal:
		if v.Kind != change.Text {
			return ErrValueKind
		}
		raw, err := appendDecimalFixedRaw(w.Scratch()[:0], v.Bytes, p.scale)
		if err != nil {
			return p.writeJSON(w, v) // its error, or the null (or default) NaN makes
		}
		w.Bytes(raw)
	case encBytes:
		if v.Kind != change.Binary || p.javaDoubles {
			return p.writeJSON(w, v)
		}
		w.Bytes(v.Bytes)
	case encZoned:
		if v.Kind != change.Int {
			return ErrValueKind
		}
		s := appendZonedTimestamp(w.Scratch()[:0], v.Int, p.width)
		w.StringBytes(s[1 : len(s)-1]) // digits and punctuation: nothing to unescape
	default:
		return p.writeJSON(w, v)
	}
	return nil
}

// writeJSON writes v as its JSON, with appendRow's default for a value
// that comes out null.
func (p *colPlan) writeJSON(w FieldWriter, v *change.Value) error {
	b, err := p.appendValue(w.Scratch()[:0], v)
	if err != nil {
		return err
	}
	if p.dflt != nil && string(b) == "null" {
		b = p.dflt
	}
	w.JSON(b)
	return nil
}

func writeIntIn(w FieldWriter, v *change.Value, lo, hi int64) error {
	if v.Kind != change.Int {
		return ErrValueKind
	}
	if v.Int < lo || v.Int > hi {
		return ErrValueRange
	}
	w.Int(v.Int)
	return nil
}

// validUTF8 is s, or s with each byte that is not UTF-8 replaced by
// U+FFFD in w's scratch, as the JSON writer writes it.
func validUTF8(w FieldWriter, s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string(jsonstr.AppendValidUTF8(w.Scratch()[:0], s))
}
