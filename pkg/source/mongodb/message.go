package mongodb

import (
	"fmt"
	"strconv"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/jsonstr"
)

// The message: Debezium 3.x's MongoDB connector format as Kafka Connect's
// JsonConverter writes it. The key is {"id": <_id as relaxed Extended
// JSON>}; the value an envelope whose before and after are documents as
// strings (Extended JSON v1 strict mode, io.debezium.data.Json), with
// updateDescription on updates and the connector's source block. Its
// shape was checked against the connector's own classes (see
// docs/mongodb.md).

// MessageOptions are what the message needs beyond the event.
type MessageOptions struct {
	// Name is the logical server name: source.name and the topic prefix.
	Name string
	// Version is source.version (Debezium's release).
	Version string
	// Schemas writes {"schema":…,"payload":…} (the JsonConverter's
	// schemas.enable); false writes the payload alone.
	Schemas bool
	// Unwrap, when set, writes what ExtractNewDocumentState makes of the
	// record (unwrap.go).
	Unwrap *UnwrapOptions
	// Fields, when set, is field.exclude.list and field.renames (fields.go).
	Fields *FieldSelector
}

// Message is one record: its topic, key and value.
type Message struct {
	Topic string
	Key   []byte
	Value []byte
	// With Unwrap only: Tombstone, the record's value is null; Dropped,
	// the transform publishes no record.
	Tombstone, Dropped bool
}

// DefaultVersion is the Debezium release whose MongoDB format this matches.
const DefaultVersion = "3.6.1.Final"

// Topic is the default topic of a collection, <name>.<db>.<collection>,
// cleaned as Debezium's default topic naming strategy and the pipeline's
// encoder clean it (characters Kafka refuses become '_'). The connector
// names the key and envelope schemas (and the transform its structs)
// after it too.
func Topic(name, db, coll string) string {
	return change.TableID{DB: db, Name: coll}.Topic(name)
}

var (
	docWriter    = xjsonWriter{mode: modeStrict, style: styleCompact}
	keyWriter    = xjsonWriter{mode: modeRelaxed, style: styleCompact}
	updateWriter = xjsonWriter{mode: modeRelaxed, style: styleDefault}
)

// EncodeChange builds the message of a data event (insert, update,
// replace, delete); nowMS is the envelope's ts_ms (when the event was
// processed, as Debezium writes it).
func EncodeChange(ev Event, opt MessageOptions, nowMS int64) (Message, error) {
	if err := opt.Fields.For(ev.DB, ev.Collection).Event(&ev); err != nil {
		return Message{}, fmt.Errorf("%s.%s: %w", ev.DB, ev.Collection, err)
	}
	var op byte
	switch ev.Op {
	case OpInsert:
		op = 'c'
	case OpUpdate, OpReplace:
		op = 'u'
	case OpDelete:
		op = 'd'
	default:
		return Message{}, fmt.Errorf("no message for a %s event", ev.Op)
	}
	var p payload
	p.op = op
	var err error
	switch op {
	case 'c':
		p.after = ev.After
	case 'u':
		p.before, p.after, p.update = ev.Before, ev.After, ev.Update
	case 'd':
		p.before = ev.Before
	}
	ts := ev.WallTimeMS
	if ts == 0 {
		ts = int64(ev.ClusterTime.T) * 1000
	}
	p.src = sourceBlock{
		name: opt.Name, version: opt.Version, tsMS: ts, snapshot: "false",
		db: ev.DB, coll: ev.Collection, ord: int32(ev.ClusterTime.I),
		lsid: ev.LSID, txn: ev.TxnNumber, wallMS: ev.WallTimeMS,
	}
	return encode(ev.DB, ev.Collection, ev.Key, p, opt, nowMS, err)
}

// EncodeRead builds the snapshot read (op "r") of doc. at is the
// operation time the snapshot started from (source.ts_ms and ord) and
// snapshot the source.snapshot value ("true", "first", "last", …).
func EncodeRead(db, coll string, doc bson.Raw, at bson.Timestamp, snapshot string, opt MessageOptions, nowMS int64) (Message, error) {
	id, err := doc.LookupErr("_id")
	if err != nil {
		return Message{}, fmt.Errorf("snapshot of %s.%s: a document without _id", db, coll)
	}
	filtered, err := opt.Fields.For(db, coll).Document(doc)
	if err != nil {
		return Message{}, fmt.Errorf("%s.%s: %w", db, coll, err)
	}
	p := payload{op: 'r', after: filtered}
	p.src = sourceBlock{
		name: opt.Name, version: opt.Version, tsMS: int64(at.T) * 1000, snapshot: snapshot,
		db: db, coll: coll, ord: int32(at.I),
	}
	return encode(db, coll, id, p, opt, nowMS, nil)
}

type payload struct {
	op            byte
	before, after bson.Raw
	update        *UpdateDescription
	src           sourceBlock
}

type sourceBlock struct {
	name, version, snapshot, db, coll string
	tsMS, wallMS                      int64
	ord                               int32
	lsid                              bson.Raw
	txn                               *int64
}

func encode(db, coll string, id bson.RawValue, p payload, opt MessageOptions, nowMS int64, err error) (Message, error) {
	if err != nil {
		return Message{}, err
	}
	topic := Topic(opt.Name, db, coll)
	if opt.Unwrap != nil {
		return encodeUnwrapped(db, coll, id, p, opt)
	}
	key, err := appendKey(nil, topic, id, opt.Schemas)
	if err != nil {
		return Message{}, fmt.Errorf("%s.%s key: %w", db, coll, err)
	}
	v, err := appendValue(nil, topic, p, opt.Schemas, nowMS)
	if err != nil {
		return Message{}, fmt.Errorf("%s.%s: %w", db, coll, err)
	}
	return Message{Topic: topic, Key: key, Value: v}, nil
}

func encodeUnwrapped(db, coll string, id bson.RawValue, p payload, opt MessageOptions) (Message, error) {
	topic := Topic(opt.Name, db, coll)
	key, err := appendUnwrapKey(nil, id, opt.Schemas)
	if err != nil {
		return Message{}, fmt.Errorf("%s.%s key: %w", db, coll, err)
	}
	v, ok, err := appendUnwrapValue(nil, topic, id, p, opt.Unwrap, opt.Schemas)
	if err != nil {
		return Message{}, fmt.Errorf("%s.%s: %w", db, coll, err)
	}
	m := Message{Topic: topic, Key: key, Value: v}
	if !ok {
		m.Value = nil
		m.Dropped = opt.Unwrap.DeleteHandling == "drop"
		m.Tombstone = !m.Dropped
	}
	return m, nil
}

// appendKey appends the key of the document id to b; topic names its
// schema.
func appendKey(b []byte, topic string, id bson.RawValue, schemas bool) ([]byte, error) {
	out := b
	if schemas {
		out = append(out, `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"}],"optional":false,"name":`...)
		out = appendJackson(out, topic+".Key")
		out = append(out, `},"payload":`...)
	}
	out, err := appendQuotedJSON(append(out, `{"id":`...), func(s []byte) ([]byte, error) { return keyWriter.appendValue(s, id) })
	if err != nil {
		return b, err
	}
	b = append(out, '}')
	if schemas {
		b = append(b, '}')
	}
	return b, nil
}

// appendValue appends the value of p to b; topic names its schema.
func appendValue(b []byte, topic string, p payload, schemas bool, nowMS int64) ([]byte, error) {
	if schemas {
		b = append(b, valueSchemaHead...)
		b = appendJackson(b, topic+".Envelope")
		b = append(b, `},"payload":`...)
	}
	b, err := appendPayload(b, p, nowMS)
	if err != nil {
		return b, err
	}
	if schemas {
		b = append(b, '}')
	}
	return b, nil
}

// jsonScratch holds the buffers a document's or an _id's JSON is written
// into before it is quoted into the message.
var jsonScratch = sync.Pool{New: func() any { return new([]byte) }}

// maxScratch is the largest buffer jsonScratch keeps: a rare large
// document's is left to the collector.
const maxScratch = 1 << 20

// appendQuotedJSON appends, as a JSON string, what write writes into a
// pooled buffer; on an error it returns b as it was.
func appendQuotedJSON(b []byte, write func([]byte) ([]byte, error)) ([]byte, error) {
	sp := jsonScratch.Get().(*[]byte)
	s, err := write((*sp)[:0])
	if err == nil {
		b = jsonstr.Append(b, s)
	}
	if cap(s) <= maxScratch {
		*sp = s
		jsonScratch.Put(sp)
	}
	return b, err
}

func appendDocString(b []byte, w xjsonWriter, doc bson.Raw) ([]byte, error) {
	if doc == nil {
		return append(b, "null"...), nil
	}
	return appendQuotedJSON(b, func(s []byte) ([]byte, error) { return w.appendDocument(s, doc) })
}

func appendPayload(b []byte, p payload, nowMS int64) ([]byte, error) {
	var err error
	b = append(b, `{"before":`...)
	if b, err = appendDocString(b, docWriter, p.before); err != nil {
		return b, fmt.Errorf("before: %w", err)
	}
	b = append(b, `,"after":`...)
	if b, err = appendDocString(b, docWriter, p.after); err != nil {
		return b, fmt.Errorf("after: %w", err)
	}
	b = append(b, `,"updateDescription":`...)
	if u := p.update; u == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"removedFields":`...)
		b = appendList(b, u.RemovedFields, appendJackson)
		b = append(b, `,"updatedFields":`...)
		if b, err = appendDocString(b, updateWriter, u.UpdatedFields); err != nil {
			return b, fmt.Errorf("updatedFields: %w", err)
		}
		b = append(b, `,"truncatedArrays":`...)
		b = appendList(b, u.TruncatedArrays, appendTruncated)
		b = append(b, '}')
	}
	s := p.src
	b = append(b, `,"source":{"version":`...)
	b = appendJackson(b, s.version)
	b = append(b, `,"connector":"mongodb","name":`...)
	b = appendJackson(b, s.name)
	b = append(b, `,"ts_ms":`...)
	b = strconv.AppendInt(b, s.tsMS, 10)
	b = append(b, `,"snapshot":`...)
	b = appendJackson(b, s.snapshot)
	b = append(b, `,"db":`...)
	b = appendJackson(b, s.db)
	b = append(b, `,"sequence":null,"ts_us":`...)
	b = strconv.AppendInt(b, s.tsMS*1000, 10)
	b = append(b, `,"ts_ns":`...)
	b = strconv.AppendInt(b, s.tsMS*1000000, 10)
	b = append(b, `,"collection":`...)
	b = appendJackson(b, s.coll)
	b = append(b, `,"ord":`...)
	b = strconv.AppendInt(b, int64(s.ord), 10)
	b = append(b, `,"lsid":`...)
	if b, err = appendDocString(b, docWriter, s.lsid); err != nil {
		return b, fmt.Errorf("lsid: %w", err)
	}
	b = append(b, `,"txnNumber":`...)
	if s.txn == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *s.txn, 10)
	}
	b = append(b, `,"wallTime":`...)
	if s.wallMS == 0 {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, s.wallMS, 10)
	}
	b = append(b, `},"op":"`...)
	b = append(b, p.op)
	b = append(b, `","ts_ms":`...)
	b = strconv.AppendInt(b, nowMS, 10)
	b = append(b, `,"transaction":null}`...)
	return b, nil
}

// valueSchemaHead is the value schema up to its name: the envelope of
// MongoDbSchema (before, after, updateDescription, source, op, ts_ms,
// transaction) with MongoDbSourceInfoStructMaker's source block.
const valueSchemaHead = `{"schema":{"type":"struct","fields":[` +
	`{"type":"string","optional":true,"name":"io.debezium.data.Json","version":1,"field":"before"},` +
	`{"type":"string","optional":true,"name":"io.debezium.data.Json","version":1,"field":"after"},` +
	`{"type":"struct","fields":[{"type":"array","items":{"type":"string","optional":false},"optional":true,"field":"removedFields"},` +
	`{"type":"string","optional":true,"name":"io.debezium.data.Json","version":1,"field":"updatedFields"},` +
	`{"type":"array","items":{"type":"struct","fields":[{"type":"string","optional":false,"field":"field"},{"type":"int32","optional":false,"field":"size"}],"optional":false,"name":"io.debezium.connector.mongodb.changestream.truncatedarray","version":1},"optional":true,"field":"truncatedArrays"}],` +
	`"optional":true,"name":"io.debezium.connector.mongodb.changestream.updatedescription","version":1,"field":"updateDescription"},` +
	`{"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},{"type":"string","optional":false,"field":"connector"},` +
	`{"type":"string","optional":false,"field":"name"},{"type":"int64","optional":false,"field":"ts_ms"},` +
	`{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},"default":"false","field":"snapshot"},` +
	`{"type":"string","optional":false,"field":"db"},{"type":"string","optional":true,"field":"sequence"},` +
	`{"type":"int64","optional":true,"field":"ts_us"},{"type":"int64","optional":true,"field":"ts_ns"},` +
	`{"type":"string","optional":false,"field":"collection"},{"type":"int32","optional":false,"field":"ord"},` +
	`{"type":"string","optional":true,"field":"lsid"},{"type":"int64","optional":true,"field":"txnNumber"},` +
	`{"type":"int64","optional":true,"field":"wallTime"}],"optional":false,"name":"io.debezium.connector.mongo.Source","version":1,"field":"source"},` +
	`{"type":"string","optional":true,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"},` +
	`{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"},{"type":"int64","optional":false,"field":"total_order"},{"type":"int64","optional":false,"field":"data_collection_order"}],"optional":true,"name":"event.block","version":1,"field":"transaction"}],` +
	`"optional":false,"name":`

// appendList appends items as a JSON array, or null when there are none,
// as the update description's lists are written.
func appendList[T any](b []byte, items []T, item func([]byte, T) []byte) []byte {
	if len(items) == 0 {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = item(b, it)
	}
	return append(b, ']')
}

// appendTruncated appends one truncated array: its field and new size.
func appendTruncated(b []byte, t TruncatedArray) []byte {
	b = append(b, `{"field":`...)
	b = appendJackson(b, t.Field)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(t.NewSize), 10)
	return append(b, '}')
}

// appendJackson appends s as a JSON string the way Jackson (the
// JsonConverter's writer) escapes it, as the relational encoder writes its
// strings (pkg/jsonstr).
func appendJackson(b []byte, s string) []byte { return jsonstr.Append(b, s) }

// EncodeRawChange decodes a raw change-stream event (one that names its
// namespace) and encodes its message.
func EncodeRawChange(raw bson.Raw, opt MessageOptions, nowMS int64) (Message, error) {
	ev, err := decodeEvent(raw, "", "")
	if err != nil {
		return Message{}, err
	}
	return EncodeChange(ev, opt, nowMS)
}
