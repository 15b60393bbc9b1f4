package debezium

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium/route"
	"github.com/tributary-cdc/tributary/pkg/jsonstr"
)

// Options configure an Encoder.
type Options struct {
	// TopicPrefix is Debezium's topic.prefix (formerly the logical server
	// name): the first part of every topic and schema name, and
	// source.name when an event's Source.Name is empty. Required; the
	// config package validates it.
	TopicPrefix string
	// Version is written in source.version. Default: [Version], the
	// Debezium release whose format this package matches.
	Version string
	// IncludeUnknownTypes publishes columns of types this package cannot
	// encode (change.KindUnknown) as bytes holding the source's text form,
	// as Debezium's include.unknown.datatypes=true does, instead of leaving
	// them out. Default false: left out (Debezium's default), and reported
	// by the pipeline (see Dropped).
	IncludeUnknownTypes bool
	// Topic, when set, is the one topic of every table
	// (destination.topic); TopicPrefix still names the schemas and
	// source.name (routing.go).
	Topic string
	// KeyColumns is, per table ("schema.table"), the columns that form the
	// message key instead of the primary key (destination.key_columns).
	KeyColumns map[string][]string
	// Format is the shape of the messages (format.go); the zero value is
	// Debezium's defaults.
	Format Format
	// Routes rename topics as Kafka Connect's RegexRouter and Debezium's
	// ByLogicalTableRouter do (transforms.route, transforms.reroute);
	// never with Topic. nil: none.
	Routes *route.Routes
	// Outbox routes every table's rows as outbox events (outbox.go,
	// transforms.outbox); nil: none.
	Outbox *Outbox
}

// Encoder turns change events into Debezium JSON keys and values. It is safe
// for concurrent use. It keeps the schema JSON of every table version it has
// seen (one entry per *change.Table, for the Encoder's lifetime), which is
// what makes per-row encoding cheap; sources make a new *Table only when a
// table's shape changes.
type Encoder struct {
	prefix  string
	version string   // source.version
	blocks  sync.Map // *change.SourceBlock → *blockPlan (source.go)
	tables  sync.Map // *change.Table → *tableCodec
	// last is the codec found last: an event's topic, key and value ask
	// for the same table, and most events follow one of that table.
	last   atomic.Pointer[tableCodec]
	claims topicClaims
	// includeUnknown: Options.IncludeUnknownTypes.
	includeUnknown bool
	routing        routing // Options.Topic and KeyColumns
	format         Format  // Options.Format
	outbox         *Outbox // Options.Outbox
	heads          envelopeHeads
}

// tableCodec is everything precomputed for one table version.
type tableCodec struct {
	table    *change.Table // the version it encodes
	topic    string
	schema   string    // the base of the schema names: <prefix>.<schema>.<table>
	topicErr error     // a *TopicCollisionError: another table has this topic
	err      error     // non-nil: the table cannot be encoded
	ncols    int       // len(Table.Columns): the length every row must have
	cols     []colPlan // encodable columns, in column order
	key      []colPlan // encodable key columns, in key order
	// readCols and readKey are cols and key for the snapshot reads (op
	// r) of a connector whose source block says they trim zoned
	// timestamps, nil when no column differs there: see trimmedReadPlans.
	readCols, readKey []colPlan
	// fields are the Value struct's fields (c.cols' schemas), which every
	// connector's envelope embeds.
	fields []connectField
	// keyHead is `{"schema":<Key schema>,"payload":` (empty without
	// schemas).
	keyHead []byte
	// keyTail closes a key: "}" after keyHead's payload, "" without schemas.
	keyTail string
	// keyExtra, when set, replaces the key row's closing brace: the field
	// ByLogicalTableRouter adds (`,"<field>":"<physical table>"}`).
	keyExtra []byte
	// valueHead is `{"before":` without schemas, and empty with them:
	// the envelope then embeds the source block's schema, and each
	// source block has its own head (sourceBlockFor, source.go).
	valueHead []byte
	// valueTail closes a value after the envelope's payload: "}", or ""
	// without schemas.
	valueTail string
	unwrap    unwrapPlan // Format.Unwrap (format.go)
	// block is the source block of the connector this table's events
	// come from, chosen with the first of them (sourceBlockFor, source.go).
	block atomic.Pointer[sourceBlock]
	// readSource is the source block written last for a snapshot read
	// (appendEventSource, source.go).
	readSource atomic.Pointer[readSource]
	// outbox is the table's outbox plan, built with its first event
	// (outbox.go).
	outboxOnce sync.Once
	outbox     *outboxPlan
}

// NewEncoder returns an Encoder for opts.
func NewEncoder(opts Options) *Encoder {
	version := opts.Version
	if version == "" {
		version = Version
	}
	return &Encoder{prefix: opts.TopicPrefix, version: version, includeUnknown: opts.IncludeUnknownTypes,
		routing: routing{topic: opts.Topic, keyColumns: opts.KeyColumns, routes: opts.Routes}, format: opts.Format, outbox: opts.Outbox}
}

// Topic returns the topic for a table: <prefix>.<schema>.<table>
// (PostgreSQL), or <prefix>.<db>.<table> for tables without a schema
// (MySQL), with characters Kafka does not allow replaced by '_' as Debezium
// does. It returns "" for a nil table.
func (e *Encoder) Topic(t *change.Table) string {
	if t == nil {
		return ""
	}
	return e.codec(t).topic
}

// TableTopic is Topic for publishing: it fails with a
// *TopicCollisionError when a different table seen earlier by this
// Encoder already publishes to the topic, or to one Kafka treats as the
// same. The first table keeps its topic; the second is refused for the
// Encoder's lifetime (AppendKey and AppendValue fail for it too).
func (e *Encoder) TableTopic(t *change.Table) (string, error) {
	if t == nil {
		return "", &EncodeError{Table: tableName(nil), Err: ErrTable}
	}
	c := e.codec(t)
	return c.topic, c.topicErr
}

// ClaimTopic returns the topic of the table id and records that id
// publishes to it, as TableTopic does for a table first seen; start-up
// checks use it on the configured tables before anything runs.
func (e *Encoder) ClaimTopic(id change.TableID) (string, error) {
	r := e.routeOf(id)
	if e.routing.topic != "" || r.Changed {
		return r.Topic, nil // tables share a topic by configuration
	}
	return r.Topic, e.claims.claim(id, r.Topic)
}

// AppendKey appends the key message ({"schema":…,"payload":{…}}) for ev to
// dst: the key columns, in key order, of ev.After (or ev.Before when there
// is no after image, as for deletes). ok is false, and dst unchanged, when
// the table has no primary key: Debezium sends a null key then. On error dst
// is returned unchanged.
func (e *Encoder) AppendKey(dst []byte, ev *change.Event) (out []byte, ok bool, err error) {
	c, err := e.codecFor(ev)
	if err != nil {
		return dst, false, err
	}
	if ev.Table.Document != nil {
		return e.appendDocumentKey(dst, ev)
	}
	if len(c.key) == 0 {
		return dst, false, nil
	}
	row, err := c.keyRow(ev)
	if err != nil {
		return dst, false, err
	}
	n := len(dst)
	dst = append(dst, c.keyHead...)
	dst, err = c.appendRow(dst, ev.Table, row, c.keyPlans(ev))
	if err != nil {
		return dst[:n], false, err
	}
	if c.keyExtra != nil {
		dst = append(dst[:len(dst)-1], c.keyExtra...)
	}
	return append(dst, c.keyTail...), true, nil
}

// AppendValue appends the value message for ev to dst:
// {"schema":<Envelope schema>,"payload":{"before","after","source",
// "transaction","op","ts_ms","ts_us","ts_ns"}}. before and after are null
// when ev has no such row; transaction is ev.Tx's block, null without
// one (transaction.go); source.ts_* come from ev.Source.CommitMicros and the top-level
// ts_* from nowMicros, the processing time in µs since the epoch (so ts_ns
// always ends in 000, where Debezium has the JVM clock's nanoseconds). On
// error dst is returned unchanged.
func (e *Encoder) AppendValue(dst []byte, ev *change.Event, nowMicros int64) ([]byte, error) {
	dst, _, err := e.AppendValueHead(dst, ev, nowMicros)
	return dst, err
}

// Head is the start of a value that every value of its table version
// shares (the schema and what precedes the row): Len bytes, whose CRC32C
// (Castagnoli) is CRC. It is hashed once per table, so that the
// producer's receipt hashes only the rest of each value. Len 0: none.
type Head struct {
	Len int
	CRC uint32
}

// AppendValueHead is AppendValue that also returns the Head of the value
// it appended (Len counts from the value's start, not dst's).
func (e *Encoder) AppendValueHead(dst []byte, ev *change.Event, nowMicros int64) ([]byte, Head, error) {
	c, err := e.codecFor(ev)
	if err != nil {
		return dst, Head{}, err
	}
	if err := checkChange(ev); err != nil {
		return dst, Head{}, err
	}
	if ev.Table.Document != nil {
		return e.appendDocumentValue(dst, ev, nowMicros)
	}
	b := e.sourceBlockFor(c, ev)
	if b.err != nil {
		return dst, Head{}, b.err
	}
	if e.format.Unwrap {
		return e.appendUnwrapped(dst, c, ev)
	}
	n := len(dst)
	dst = append(dst, b.valueHead...)
	plans := c.valuePlans(ev)
	if dst, err = c.appendRowOrNull(dst, ev.Table, ev.Before, plans); err != nil {
		return dst[:n], Head{}, err
	}
	dst = append(dst, `,"after":`...)
	if dst, err = c.appendRowOrNull(dst, ev.Table, ev.After, plans); err != nil {
		return dst[:n], Head{}, err
	}
	dst = e.appendEventSource(dst, c, b, ev)
	return append(appendEnvelopeTail(dst, ev.Op, &ev.Tx, nowMicros), c.valueTail...), Head{len(b.valueHead), b.valueHeadCRC}, nil
}

// checkChange refuses an event that is no row change: an unknown op, or
// neither a before nor an after image.
func checkChange(ev *change.Event) error {
	switch ev.Op {
	case change.OpCreate, change.OpUpdate, change.OpDelete, change.OpRead:
	default:
		return &EncodeError{Table: tableName(ev.Table), Err: ErrOp, Detail: "op " + strconv.Quote(ev.Op.String())}
	}
	if ev.Before == nil && ev.After == nil {
		return &EncodeError{Table: tableName(ev.Table), Err: ErrNoRow}
	}
	return nil
}

func (e *Encoder) codecFor(ev *change.Event) (*tableCodec, error) {
	if ev == nil || ev.Table == nil {
		return nil, &EncodeError{Table: tableName(nil), Err: ErrTable}
	}
	c := e.codec(ev.Table)
	return c, c.err
}

// codec returns the table's codec, building it on first use. Loading an
// existing entry does not allocate.
func (e *Encoder) codec(t *change.Table) *tableCodec {
	if c := e.last.Load(); c != nil && c.table == t {
		return c
	}
	v, ok := e.tables.Load(t)
	if !ok {
		v, _ = e.tables.LoadOrStore(t, e.build(t))
	}
	c := v.(*tableCodec)
	e.last.Store(c)
	return c
}

// build computes a table version's topic, column plans and schema JSON.
func (e *Encoder) build(t *change.Table) *tableCodec {
	c := &tableCodec{table: t, ncols: len(t.Columns)}
	routed := e.routeOf(t.ID)
	c.topic, c.schema = routed.Topic, routed.SchemaBase
	if _, err := e.ClaimTopic(t.ID); err != nil {
		c.topicErr, c.err = err, err
	} else if routed.Changed && !change.ValidTopic(routed.Topic) {
		err := &EncodeError{Table: tableName(t), Err: ErrTable,
			Detail: "transforms give it the topic " + strconv.Quote(routed.Topic) + ", which Kafka does not allow (1 to 249 of letters, digits, '.', '_', '-'; not . or ..); fix transforms.reroute.topic_replacement or transforms.route.replacement"}
		c.topicErr, c.err = err, err
	}
	keyIdx, err := e.keyOf(t)
	if err != nil {
		c.err = err
		return c
	}
	planOf := make([]int, len(t.Columns)) // column index → index in c.cols, or -1
	var fields []connectField
	for i := range t.Columns {
		col := &t.Columns[i]
		s, enc, ok := e.columnSchema(col)
		if !ok {
			planOf[i] = -1
			continue
		}
		if col.Masked {
			s.params = append(s.params, param{"masked", "true"}) // Debezium's MaskStrings.alterFieldSchema
		}
		p := newColPlan(i, col, enc, &e.format)
		s.defaultJSON = columnDefault(&p, col)
		p.dflt = s.defaultJSON
		planOf[i] = len(c.cols)
		c.cols = append(c.cols, p)
		fields = append(fields, connectField{col.Name, s})
	}
	var keyFields []connectField
	for _, k := range keyIdx {
		if k < 0 || k >= len(t.Columns) {
			c.err = &EncodeError{Table: tableName(t), Err: ErrTable, Detail: "key column index " + strconv.Itoa(k) + " out of range"}
			return c
		}
		j := planOf[k]
		if j < 0 {
			// Debezium drops a key column of a type it cannot encode; rows
			// that differ only there would then share a key, and a
			// compacted topic or a sink keep one of them. Refused instead.
			col := &t.Columns[k]
			c.err = &EncodeError{Table: tableName(t), Err: ErrTable, Detail: "key column " + strconv.Quote(col.Name) + " is of type " + col.Type.Name +
				", which Tributary cannot encode, and a key without it would be shared by rows that differ there; set source.include_unknown_types: true to publish it as bytes, or leave the table out of source.tables"}
			return c
		}
		c.key = append(c.key, c.cols[j])
		keyFields = append(keyFields, fields[j])
	}
	if routed.KeyField != "" && len(c.key) > 0 {
		for _, f := range keyFields {
			if f.name == routed.KeyField {
				c.err = &EncodeError{Table: tableName(t), Column: f.name, Err: ErrTable,
					Detail: "the key already has a column " + strconv.Quote(f.name) + ", the field transforms.reroute adds to it; set transforms.reroute.key_field_name to another name"}
				return c
			}
		}
		keyFields = append(keyFields, connectField{routed.KeyField, connectSchema{typ: "string"}})
		c.keyExtra = append(jsonstr.Append(append(c.keyExtra, ','), routed.KeyField), ':')
		c.keyExtra = append(jsonstr.Append(c.keyExtra, routed.KeyValue), '}')
	}

	c.readCols, c.readKey = trimmedReadPlans(c.cols), trimmedReadPlans(c.key)
	c.fields = fields
	value := connectSchema{typ: "struct", fields: fields, optional: true, name: c.schema + ".Value"}
	if e.format.Unwrap {
		e.buildUnwrap(c, value)
	}
	if e.format.NoSchemas {
		c.valueHead = append(c.valueHead, `{"before":`...)
		return c
	}
	key := connectSchema{typ: "struct", fields: keyFields, name: c.schema + ".Key"}
	c.keyHead = append(c.keyHead, `{"schema":`...)
	c.keyHead = key.appendJSON(c.keyHead, "")
	c.keyHead = append(c.keyHead, `,"payload":`...)
	c.keyTail = "}"
	c.valueTail = "}"
	return c
}

// keyRow is the row ev's key is cut from: ev.After, or ev.Before when
// there is no after image. It fails when the row lacks a key column.
func (c *tableCodec) keyRow(ev *change.Event) (change.Row, error) {
	row := ev.After
	if row == nil {
		row = ev.Before
	}
	if row == nil {
		return nil, &EncodeError{Table: tableName(ev.Table), Err: ErrNoRow}
	}
	if len(row) == c.ncols {
		for i := range c.key {
			// A null in a required key column, or an unavailable value, is
			// a column the row image lacks: its fallback (the type's zero)
			// or placeholder would key another row.
			p := &c.key[i]
			if v := &row[p.idx]; v.Kind == change.Unavailable || v.Kind == change.Null && !p.optional {
				detail := "the row image of this change (op " + ev.Op.String() + ") does not carry the key column"
				if b := ev.Source.Block; b != nil && b.KeyMissingHint != "" {
					detail += " (" + b.KeyMissingHint + ")"
				}
				return nil, &EncodeError{Table: tableName(ev.Table), Column: p.name, Kind: p.kind, ValueKind: v.Kind, Err: ErrKeyMissing, Detail: detail}
			}
		}
	}
	return row, nil
}

func (c *tableCodec) appendRowOrNull(b []byte, t *change.Table, row change.Row, plans []colPlan) ([]byte, error) {
	if row == nil {
		return append(b, "null"...), nil
	}
	return c.appendRow(b, t, row, plans)
}

// trimmedReadPlans are plans as the connectors whose source block says
// SnapshotZonedTrimmed write the rows of their snapshot: a ZonedTimestamp
// with the fraction's trailing zeros dropped ("2000-02-29T12:00:00Z",
// "…00.12Z"), where streamed rows and the schema's default have the
// column's digits ("2000-02-29T12:00:00.000Z" for a precision of 3).
// nil when plans has no such column.
func trimmedReadPlans(plans []colPlan) []colPlan {
	var out []colPlan
	for i := range plans {
		if plans[i].enc == encZoned {
			if out == nil {
				out = slices.Clone(plans)
			}
			out[i].width = -1 // ISO_OFFSET_DATE_TIME: the fraction only when non-zero, trimmed
		}
	}
	return out
}

// trimmedRead tells whether ev is a snapshot read whose zoned timestamps
// are trimmed (change.SourceBlock.SnapshotZonedTrimmed).
func trimmedRead(ev *change.Event) bool {
	return ev.Op == change.OpRead && ev.Source.Block != nil && ev.Source.Block.SnapshotZonedTrimmed
}

// valuePlans are the plans of ev's row images.
func (c *tableCodec) valuePlans(ev *change.Event) []colPlan {
	if c.readCols != nil && trimmedRead(ev) {
		return c.readCols
	}
	return c.cols
}

// keyPlans are the plans of ev's key.
func (c *tableCodec) keyPlans(ev *change.Event) []colPlan {
	if c.readKey != nil && trimmedRead(ev) {
		return c.readKey
	}
	return c.key
}

func (c *tableCodec) rowLengthError(t *change.Table, row change.Row) error {
	return &EncodeError{Table: tableName(t), Err: ErrRowLength,
		Detail: "row has " + strconv.Itoa(len(row)) + " values, table has " + strconv.Itoa(c.ncols) + " columns"}
}

// appendRow appends the struct of the given columns of row.
func (c *tableCodec) appendRow(b []byte, t *change.Table, row change.Row, plans []colPlan) ([]byte, error) {
	if len(row) != c.ncols {
		return b, c.rowLengthError(t, row)
	}
	b = append(b, '{')
	for i := range plans {
		p := &plans[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, p.key...)
		v := &row[p.idx]
		start := len(b)
		var err error
		if b, err = p.appendValue(b, v); err != nil {
			return b, &EncodeError{Table: tableName(t), Column: p.name, Kind: p.kind, ValueKind: v.Kind, Err: err}
		}
		if p.dflt != nil && string(b[start:]) == "null" {
			// A null of a column with a default (a NULL, or a value
			// Debezium's converter turns into null: NaN decimals, failed
			// arrays): JsonConverter writes the default.
			b = append(b[:start], p.dflt...)
		}
	}
	return append(b, '}'), nil
}
