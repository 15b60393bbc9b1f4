package debezium

import (
	"bytes"
	"hash/crc32"
	"math"
	"strconv"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/jsonstr"
)

// Version is the Debezium release whose message format this package
// matches. It is written in source.version unless Options.Version
// overrides it.
const Version = "3.6.1.Final"

// snapshotAllowed lists Debezium's SnapshotRecord values, lower-cased, in
// declaration order: the "allowed" parameter of the source.snapshot enum.
const snapshotAllowed = "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"

// transactionSchema is the envelope's "transaction" block (event.block):
// null but with transaction metadata on (change.Event.Tx).
func transactionSchema() connectSchema {
	return connectSchema{
		typ: "struct",
		fields: []connectField{
			{"id", stringSchema},
			{"total_order", int64Schema},
			{"data_collection_order", int64Schema},
		},
		optional: true,
		name:     "event.block",
		version:  1,
	}
}

// envelopeSchema is <topic>.Envelope, version 2 (Envelope.SCHEMA_VERSION in
// Debezium 3.x): before, after, source, transaction, op, ts_ms, ts_us, ts_ns.
func envelopeSchema(topic string, value, source connectSchema) connectSchema {
	return connectSchema{
		typ: "struct",
		fields: []connectField{
			{"before", value},
			{"after", value},
			{"source", source},
			{"transaction", transactionSchema()},
			{"op", stringSchema},
			{"ts_ms", optionalInt64Schema},
			{"ts_us", optionalInt64Schema},
			{"ts_ns", optionalInt64Schema},
		},
		name:    topic + ".Envelope",
		version: 2,
	}
}

// castagnoli is CRC32C, the receipts' CRC, for a value's Head.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// blockPlan is what an Encoder precomputes for one declared source block
// (change.SourceBlock), once: its Connect schema, the constant start of
// its JSON, and how each of its own fields is written.
type blockPlan struct {
	decl   *change.SourceBlock
	schema connectSchema // io.debezium.connector.<connector>.Source
	// head is `,"source":{"version":…,"connector":"<connector>","name":`.
	head   []byte
	fields []fieldPlan
	// tail is the constant text after the last field with a value (the
	// always-null fields after it) and the closing '}'.
	tail []byte
	err  error // the declaration is unusable (change.SourceBlock.Validate)
}

// fieldPlan writes one field of a source block that has a value.
type fieldPlan struct {
	// pre is the constant text before the value: the always-null fields
	// since the previous field with a value, then `,"<name>":`.
	pre  []byte
	op   fieldOp
	slot int
}

// fieldOp is how a field's value is written, decided once from its
// declaration so that a row takes one branch per field.
type fieldOp uint8

const (
	fieldString       fieldOp = iota // Source.Strings[slot]
	fieldStringOrNull                // Source.Strings[slot], "" as null
	fieldInt                         // Source.Ints[slot]
	fieldIntOrNull                   // Source.Ints[slot], 0 as null
	fieldSchema                      // Source.Schema or the table's
	fieldTable                       // Source.Table or the table's
)

// planFor returns the plan of decl, building it on its first use.
func (e *Encoder) planFor(decl *change.SourceBlock) *blockPlan {
	if p, ok := e.blocks.Load(decl); ok {
		return p.(*blockPlan)
	}
	p, _ := e.blocks.LoadOrStore(decl, e.newBlockPlan(decl))
	return p.(*blockPlan)
}

func (e *Encoder) newBlockPlan(decl *change.SourceBlock) *blockPlan {
	p := &blockPlan{decl: decl}
	if err := decl.Validate(); err != nil {
		p.err = err
		return p
	}
	fields := commonSourceFields()
	var pre []byte
	for _, f := range decl.Fields {
		s := connectSchema{optional: f.Optional}
		switch f.Type {
		case change.SourceString:
			s.typ = "string"
		case change.SourceInt32:
			s.typ = "int32"
		case change.SourceInt64:
			s.typ = "int64"
		}
		fields = append(fields, connectField{f.Name, s})
		pre = append(pre, ',')
		pre = jsonstr.Append(pre, f.Name)
		pre = append(pre, ':')
		if f.From == change.FromNull {
			pre = append(pre, "null"...)
			continue
		}
		fp := fieldPlan{pre: pre, slot: f.Slot}
		switch {
		case f.From == change.FromSchema:
			fp.op = fieldSchema
		case f.From == change.FromTable:
			fp.op = fieldTable
		case f.Type == change.SourceString && f.Optional:
			fp.op = fieldStringOrNull
		case f.Type == change.SourceString:
			fp.op = fieldString
		case f.Optional:
			fp.op = fieldIntOrNull
		default:
			fp.op = fieldInt
		}
		p.fields = append(p.fields, fp)
		pre = nil
	}
	p.tail = append(pre, '}')
	p.schema = connectSchema{typ: "struct", fields: fields, name: decl.SchemaName, version: 1}
	p.head = append(p.head, `,"source":{"version":`...)
	p.head = jsonstr.Append(p.head, e.version)
	p.head = append(p.head, `,"connector":`...)
	p.head = jsonstr.Append(p.head, decl.Connector)
	p.head = append(p.head, `,"name":`...)
	return p
}

// sourceBlock is a source block for one table version: the block's plan
// and the value head whose envelope embeds its schema. It is chosen when
// the table's first event is encoded (sourceBlockFor), so that no row
// asks which database it came from.
type sourceBlock struct {
	plan         *blockPlan
	valueHead    []byte
	valueHeadCRC uint32 // valueHead's CRC32C, for the value's Head
	err          error  // the event has no usable source block
}

// sourceBlockFor returns the table codec's source block for ev's
// declared block, building it with the first event (and again only if a
// table version's events changed block, which no source does).
func (e *Encoder) sourceBlockFor(c *tableCodec, ev *change.Event) *sourceBlock {
	decl := ev.Source.Block
	if b := c.block.Load(); b != nil && b.plan.decl == decl {
		return b
	}
	if decl == nil {
		// Not kept: the table's next event may well be fine.
		return &sourceBlock{err: &EncodeError{Table: tableName(ev.Table), Err: ErrConnector, Detail: "the event declares no source block"}}
	}
	p := e.planFor(decl)
	if p.err != nil {
		return &sourceBlock{err: &EncodeError{Table: tableName(ev.Table), Err: ErrConnector, Detail: p.err.Error()}}
	}
	b := &sourceBlock{plan: p, valueHead: c.valueHead}
	if !e.format.NoSchemas {
		value := connectSchema{typ: "struct", fields: c.fields, optional: true, name: c.schema + ".Value"}
		env := envelopeSchema(c.schema, value, p.schema)
		b.valueHead = []byte(`{"schema":`)
		b.valueHead = env.appendJSON(b.valueHead, "")
		b.valueHead = append(b.valueHead, `,"payload":{"before":`...)
	}
	b.valueHeadCRC = crc32.Checksum(b.valueHead, castagnoli)
	c.block.Store(b)
	return b
}

// appendSource appends `,"source":{…}` with block p. An empty Name falls
// back to the encoder's prefix; empty DB, Schema and Table to the table's
// ID.
func (e *Encoder) appendSource(dst []byte, p *blockPlan, t *change.Table, s *change.Source) []byte {
	dst = append(dst, p.head...)
	dst = jsonstr.Append(dst, orDefault(s.Name, e.prefix))
	dst = appendSourceCommon(dst, t, s)
	for i := range p.fields {
		f := &p.fields[i]
		dst = append(dst, f.pre...)
		switch f.op {
		case fieldString:
			dst = jsonstr.Append(dst, s.Strings[f.slot])
		case fieldStringOrNull:
			if v := s.Strings[f.slot]; v != "" {
				dst = jsonstr.Append(dst, v)
			} else {
				dst = append(dst, "null"...)
			}
		case fieldInt:
			dst = strconv.AppendInt(dst, s.Ints[f.slot], 10)
		case fieldIntOrNull:
			if v := s.Ints[f.slot]; v != 0 {
				dst = strconv.AppendInt(dst, v, 10)
			} else {
				dst = append(dst, "null"...)
			}
		case fieldSchema:
			dst = jsonstr.Append(dst, orDefault(s.Schema, t.ID.Schema))
		case fieldTable:
			dst = jsonstr.Append(dst, orDefault(s.Table, t.ID.Name))
		}
	}
	return append(dst, p.tail...)
}

// readSource is a source block as written for a snapshot read: the
// event's source and the block it was written with.
type readSource struct {
	block *sourceBlock
	src   change.Source
	text  []byte
}

// appendEventSource appends ev's source block (appendSource). A backfill
// chunk's rows have one source: the chunk's read time and position, and
// "true" for snapshot but at a table's or the snapshot's edges. So the
// block written for a read is kept with the table's codec and copied for
// the next reads while their source is the same; streamed changes differ
// in their position (an LSN, a binlog offset) from one to the next, and
// are written field by field. The text depends on nothing else: the
// block (connector, version, prefix), the codec's table (the defaults of
// db, schema and table) and the source.
func (e *Encoder) appendEventSource(dst []byte, c *tableCodec, b *sourceBlock, ev *change.Event) []byte {
	if ev.Op != change.OpRead {
		return e.appendSource(dst, b.plan, ev.Table, &ev.Source)
	}
	if r := c.readSource.Load(); r != nil && r.block == b && r.src == ev.Source {
		return append(dst, r.text...)
	}
	n := len(dst)
	dst = e.appendSource(dst, b.plan, ev.Table, &ev.Source)
	c.readSource.Store(&readSource{block: b, src: ev.Source, text: bytes.Clone(dst[n:])})
	return dst
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// floorDiv divides rounding towards negative infinity, as Java's
// Instant.toEpochMilli and Math.floorDiv do for times before 1970.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// appendSourceCommon appends the source fields every connector writes
// between name and its own fields: ts_ms, snapshot, db, sequence, ts_us,
// ts_ns.
func appendSourceCommon(b []byte, t *change.Table, s *change.Source) []byte {
	var digits [20]byte
	commit := epochText(digits[:0], s.CommitMicros)
	b = append(b, `,"ts_ms":`...)
	b = commit.appendMillis(b)
	b = append(b, `,"snapshot":`...)
	if s.Snapshot == "" {
		b = append(b, `"false"`...)
	} else {
		b = jsonstr.Append(b, s.Snapshot)
	}
	b = append(b, `,"db":`...)
	b = jsonstr.Append(b, orDefault(s.DB, t.ID.DB))
	b = append(b, `,"sequence":`...)
	if s.Sequence == "" {
		b = append(b, "null"...)
	} else {
		b = jsonstr.Append(b, s.Sequence)
	}
	b = append(b, `,"ts_us":`...)
	b = commit.appendMicros(b)
	b = append(b, `,"ts_ns":`...)
	return commit.appendNanos(b)
}

// appendEnvelopeTail closes a value's payload: the transaction block
// (null without transaction metadata), op and the processing time; the
// caller closes the message (tableCodec.valueTail).
func appendEnvelopeTail(dst []byte, op change.Op, tx *change.Tx, nowMicros int64) []byte {
	var digits [20]byte
	now := epochText(digits[:0], nowMicros)
	if tx.ID == "" {
		dst = append(dst, `,"transaction":null,"op":"`...)
	} else {
		dst = appendTxBlock(append(dst, `,"transaction":`...), tx)
		dst = append(dst, `,"op":"`...)
	}
	dst = append(dst, byte(op))
	dst = append(dst, `","ts_ms":`...)
	dst = now.appendMillis(dst)
	dst = append(dst, `,"ts_us":`...)
	dst = now.appendMicros(dst)
	dst = append(dst, `,"ts_ns":`...)
	dst = now.appendNanos(dst)
	return append(dst, '}')
}

// timeText is a time in microseconds since the epoch and its decimal
// digits, from which its ts_ms and ts_ns are cut: every message writes a
// time as ts_ms, ts_us and ts_ns twice, and formatting one integer where
// there were three saves most of that.
type timeText struct {
	micros int64
	digits []byte
}

// epochText formats micros into buf.
func epochText(buf []byte, micros int64) timeText {
	return timeText{micros, strconv.AppendInt(buf, micros, 10)}
}

// appendMillis appends floor(micros / 1000).
func (t timeText) appendMillis(b []byte) []byte {
	if t.micros >= 1000 {
		return append(b, t.digits[:len(t.digits)-3]...)
	}
	return strconv.AppendInt(b, floorDiv(t.micros, 1000), 10)
}

func (t timeText) appendMicros(b []byte) []byte { return append(b, t.digits...) }

// appendNanos appends micros × 1000 (as int64 arithmetic gives it).
func (t timeText) appendNanos(b []byte) []byte {
	if t.micros == 0 || t.micros > math.MaxInt64/1000 || t.micros < math.MinInt64/1000 {
		return strconv.AppendInt(b, t.micros*1000, 10)
	}
	return append(append(b, t.digits...), "000"...)
}

// commonSourceFields are the source fields every connector starts with
// (SchemaFactory.sourceInfoSchemaBuilder): version … ts_ns. Each call
// returns a new slice, so callers may append a block's own.
func commonSourceFields() []connectField {
	return []connectField{
		{"version", stringSchema},
		{"connector", stringSchema},
		{"name", stringSchema},
		{"ts_ms", int64Schema},
		{"snapshot", connectSchema{
			typ:         "string",
			optional:    true,
			name:        "io.debezium.data.Enum",
			version:     1,
			params:      []param{{"allowed", snapshotAllowed}},
			defaultJSON: []byte(`"false"`),
		}},
		{"db", stringSchema},
		{"sequence", optionalStringSchema},
		{"ts_us", optionalInt64Schema},
		{"ts_ns", optionalInt64Schema},
	}
}
