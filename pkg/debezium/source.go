package debezium

import (
	"bytes"
	"hash/crc32"
	"math"
	"strconv"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Version is the Debezium release whose message format this package
// matches. It is written in source.version unless Options.Version
// overrides it.
const Version = "3.6.1.Final"

// connectorPostgres is change.Source.Connector for PostgreSQL, and the value
// Debezium writes in source.connector.
const connectorPostgres = "postgresql"

// snapshotAllowed lists Debezium's SnapshotRecord values, lower-cased, in
// declaration order: the "allowed" parameter of the source.snapshot enum.
const snapshotAllowed = "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"

// postgresSourceSchema is io.debezium.connector.postgresql.Source: the
// common source fields (SchemaFactory.sourceInfoSchemaBuilder, which also
// sets version 1) followed by PostgresSourceInfoStructMaker's own.
func postgresSourceSchema() connectSchema {
	return connectSchema{
		typ: "struct",
		fields: append(commonSourceFields(), []connectField{
			{"schema", stringSchema},
			{"table", stringSchema},
			{"txId", optionalInt64Schema},
			{"lsn", optionalInt64Schema},
			{"xmin", optionalInt64Schema},
			{"origin", optionalStringSchema},
			{"origin_lsn", optionalInt64Schema},
		}...),
		name:    "io.debezium.connector.postgresql.Source",
		version: 1,
	}
}

// transactionSchema is the envelope's "transaction" block (event.block);
// we do not emit transaction metadata, so its value is always null.
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

// sourceBlock is one connector's source block for one table version: the
// value head whose envelope embeds the connector's Source schema, the
// block's constant start, and the writer of its connector's fields. It is
// chosen when the table's first event is encoded (sourceBlockFor), so
// that no row asks which database it came from.
type sourceBlock struct {
	connector    string
	valueHead    []byte
	valueHeadCRC uint32 // valueHead's CRC32C, for the value's Head
	// head is `,"source":{"version":…,"connector":"<connector>","name":`.
	head   []byte
	fields func(b []byte, t *change.Table, s *change.Source) []byte // after name: ts_ms, …
	err    error                                                    // the connector has no source block here
}

// sourceBlockFor returns the table codec's source block for ev's
// connector, building it with the first event (and again only if a table
// version's events changed connector, which no source does).
func (e *Encoder) sourceBlockFor(c *tableCodec, ev *change.Event) *sourceBlock {
	if b := c.block.Load(); b != nil && b.connector == ev.Source.Connector {
		return b
	}
	connector := ev.Source.Connector
	b := &sourceBlock{connector: connector}
	switch connector {
	case connectorPostgres:
		b.valueHead, b.fields = c.valueHead, appendPostgresFields
	case connectorMySQL, connectorMariaDB:
		b.valueHead, b.fields = e.binlogValueHead(c, connector), appendBinlogFields
	default:
		b.err = &EncodeError{Table: tableName(ev.Table), Err: ErrConnector, Detail: "connector " + strconv.Quote(connector)}
		return b // not kept: the table's next event may well be fine
	}
	b.valueHeadCRC = crc32.Checksum(b.valueHead, castagnoli)
	b.head = append(b.head, `,"source":{"version":`...)
	b.head = appendString(b.head, e.version)
	b.head = append(b.head, `,"connector":`...)
	b.head = appendString(b.head, connector)
	b.head = append(b.head, `,"name":`...)
	c.block.Store(b)
	return b
}

// appendSource appends `,"source":{…}` with block b. An empty Name falls
// back to the encoder's prefix.
func (e *Encoder) appendSource(dst []byte, b *sourceBlock, t *change.Table, s *change.Source) []byte {
	dst = append(dst, b.head...)
	dst = appendString(dst, orDefault(s.Name, e.prefix))
	return b.fields(dst, t, s)
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
		return e.appendSource(dst, b, ev.Table, &ev.Source)
	}
	if r := c.readSource.Load(); r != nil && r.block == b && r.src == ev.Source {
		return append(dst, r.text...)
	}
	n := len(dst)
	dst = e.appendSource(dst, b, ev.Table, &ev.Source)
	c.readSource.Store(&readSource{block: b, src: ev.Source, text: bytes.Clone(dst[n:])})
	return dst
}

// appendPostgresFields appends a PostgreSQL source block's fields after
// name, and closes it. Empty DB/Schema/Table fall back to the table's ID.
// Zero TxID and LSN (unknown) are written as null, as Debezium does when
// it has no value; xmin is always null (Debezium fills it only with
// xmin.fetch.interval.ms set, which we do not offer); origin and
// origin_lsn (Debezium 3.6: the replication origin of a change applied by
// logical replication) are null, as Debezium writes them for pgoutput
// without origin messages.
func appendPostgresFields(b []byte, t *change.Table, s *change.Source) []byte {
	b = appendSourceCommon(b, t, s)
	b = append(b, `,"schema":`...)
	b = appendString(b, orDefault(s.Schema, t.ID.Schema))
	b = append(b, `,"table":`...)
	b = appendString(b, orDefault(s.Table, t.ID.Name))
	b = append(b, `,"txId":`...)
	b = appendIntOrNull(b, s.TxID)
	b = append(b, `,"lsn":`...)
	b = appendIntOrNull(b, s.LSN)
	return append(b, `,"xmin":null,"origin":null,"origin_lsn":null}`...)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func appendIntOrNull(b []byte, v int64) []byte {
	if v == 0 {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, v, 10)
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
		b = appendString(b, s.Snapshot)
	}
	b = append(b, `,"db":`...)
	b = appendString(b, orDefault(s.DB, t.ID.DB))
	b = append(b, `,"sequence":`...)
	if s.Sequence == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, s.Sequence)
	}
	b = append(b, `,"ts_us":`...)
	b = commit.appendMicros(b)
	b = append(b, `,"ts_ns":`...)
	return commit.appendNanos(b)
}

// appendEnvelopeTail closes a value's payload: the transaction block
// (null), op and the processing time; the caller closes the message
// (tableCodec.valueTail).
func appendEnvelopeTail(dst []byte, op change.Op, nowMicros int64) []byte {
	var digits [20]byte
	now := epochText(digits[:0], nowMicros)
	dst = append(dst, `,"transaction":null,"op":"`...)
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
// returns a new slice, so callers may append their own.
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
