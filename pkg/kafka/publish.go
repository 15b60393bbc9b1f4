package kafka

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Message is one change as the pipeline hands it over: what to send.
// Publish turns it into the record on the wire: the value gzipped under
// message_compression, Tributary's headers (content-type, tributary-op,
// tributary-event-id, and tributary-compression when the value is
// gzipped), the partition, and the size check on those final bytes.
type Message struct {
	Topic   string
	Key     []byte // nil: no key (a table without a primary key)
	Value   []byte // nil: a tombstone; else the value before compression
	Op      string // "c", "u", "d" or "r": the tributary-op header
	EventID string // the tributary-event-id header
	// Partition, when Partitioned, is the partition the row names
	// (destination.partition_column); else the key chooses.
	Partition   int64
	Partitioned bool
	// Time is the record's timestamp; zero: the time Publish runs.
	Time time.Time
	// HeadCRC is the CRC32C of Value[:HeadLen], a prefix every value of
	// the table shares (debezium.Head): the receipt then hashes only the
	// rest of Value (all of it when gzipped). HeadLen 0: none.
	HeadLen int
	HeadCRC uint32
	// NotRow marks a record that carries no row (Debezium's heartbeat): it
	// gets the content-type header only, no tributary-op or
	// tributary-event-id.
	NotRow bool
	// Headers are added after Tributary's (the outbox router's event id
	// and fields). Default none.
	Headers []Header
}

// Header is one record header of Message.Headers; a nil Value is a
// header without a value.
type Header struct {
	Key   string
	Value []byte
}

// PublishError is a record that every attempt failed to deliver. A record
// refused as too large carries a *RecordTooLargeError (it alone exceeds
// the topic's limit: skip it) or a *TopicLimitError (its batch did: a
// stall).
type PublishError struct {
	Topic     string
	Partition int32
	Err       error
}

func (e *PublishError) Error() string {
	return fmt.Sprintf("%s partition %d: %v", e.Topic, e.Partition, e.Err)
}

func (e *PublishError) Unwrap() error { return e.Err }

var (
	contentType = []byte("application/json")
	gzipName    = []byte("gzip")
)

// Publish hands m to the producer. onAck runs once: with nil when the
// broker acknowledged the record, with a *PublishError when every attempt
// failed. Publish blocks while too much is in flight (backpressure);
// records of one partition are acknowledged in the order published.
//
// Publish refuses m before anything is handed over, returning the reason
// without calling onAck: a *PartitionRangeError when m.Partition is not a
// partition of the topic (or the error reading how many it has), a
// *MessageTooLargeError when the record, value compressed, is over
// MaxMessageBytes, or a tombstone (its key alone) is over what its topic
// takes (TombstoneTooLarge).
func (p *Producer) Publish(ctx context.Context, m Message, onAck func(error)) error {
	if m.Partitioned {
		if err := p.checkPartition(ctx, m.Topic, m.Partition); err != nil {
			return err
		}
	}
	value, gzipped, err := compressValue(p.opts.MessageCompression, m.Value)
	if err != nil {
		return fmt.Errorf("%s value: %w", p.opts.MessageCompression, err)
	}
	o := p.newOutgoing(ctx, m, value, gzipped)
	if value != nil {
		if size := batchSize(o.rec.Key, o.rec.Value, o.rec.Headers); size > int(p.limits.def) {
			return &MessageTooLargeError{Size: size, Limit: int(p.limits.def), Gzipped: gzipped}
		}
	} else if err := p.TombstoneTooLarge(m); err != nil {
		return err
	}
	p.produce(o, onAck)
	return nil
}

// TombstoneTooLarge returns a *MessageTooLargeError when m as a tombstone
// (its key and headers, no value) is over what its topic takes: the
// smaller of max_message_bytes and the topic's max.message.bytes as read.
// Such a tombstone can never be published, so it is refused before it is
// handed over (franz-go would fail it, and every retry would too); the
// pipeline asks before it publishes a delete, so that the delete's
// row.skipped event can say whether its tombstone follows.
func (p *Producer) TombstoneTooLarge(m Message) error {
	var hs [4]kgo.RecordHeader
	limit := p.limits.limit(m.Topic)
	if size := batchSize(m.Key, nil, m.headers(hs[:0], false)); size > limit {
		e := &MessageTooLargeError{Size: size, Limit: limit}
		if limit < int(p.limits.def) {
			e.Topic = m.Topic
		}
		return e
	}
	return nil
}

// outgoing is one record handed to franz-go: the record, its headers and
// what its acknowledgement needs, in one allocation. It is the record's
// Context (the context it was published under, which franz-go watches),
// so that the one promise function, settle, and the partitioner find it.
type outgoing struct {
	context.Context
	rec       kgo.Record
	headers   [4]kgo.RecordHeader
	p         *Producer
	onAck     func(error)
	crc       valueCRC // the value's, for its receipt
	partition int32
	fixed     bool // rec goes to partition (destination.partition_column)
}

// newOutgoing is m's record, with value as it goes on the wire.
func (p *Producer) newOutgoing(ctx context.Context, m Message, value []byte, gzipped bool) *outgoing {
	o := &outgoing{Context: ctx, p: p, crc: m.valueCRC(value, gzipped), partition: int32(m.Partition), fixed: m.Partitioned}
	o.rec = kgo.Record{
		Topic:     m.Topic,
		Key:       m.Key,
		Value:     value,
		Headers:   m.headers(o.headers[:0], gzipped),
		Timestamp: m.Time,
		Context:   o,
	}
	return o
}

// valueCRC is crcOf(value), value as it goes on the wire: m's head is
// its prefix unless the value was gzipped.
func (m *Message) valueCRC(value []byte, gzipped bool) valueCRC {
	if gzipped || m.HeadLen <= 0 || m.HeadLen > len(value) {
		return crcOf(value)
	}
	return crcAfter(m.HeadCRC, value, m.HeadLen)
}

// produce hands o's record over; onAck as for Publish.
func (p *Producer) produce(o *outgoing, onAck func(error)) {
	o.onAck = onAck
	p.cl.Produce(o.Context, &o.rec, settle)
}

// settle is every published record's promise.
func settle(r *kgo.Record, err error) {
	o := r.Context.(*outgoing)
	if err != nil {
		o.onAck(&PublishError{Topic: r.Topic, Partition: r.Partition, Err: o.p.classify(r, err)})
		return
	}
	if o.p.Receipts != nil {
		o.p.Receipts.acked(r, o.crc)
	}
	o.onAck(nil)
}

// readOnlyBytes is s's bytes without a copy, for a header value, which
// franz-go only reads (a copy was an allocation per record). An empty s
// is an empty value, not a null one.
func readOnlyBytes(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// headers appends Tributary's headers for m, its value gzipped or not, to
// hs.
func (m Message) headers(hs []kgo.RecordHeader, gzipped bool) []kgo.RecordHeader {
	if m.NotRow {
		return append(hs, kgo.RecordHeader{Key: "content-type", Value: contentType})
	}
	hs = append(hs,
		kgo.RecordHeader{Key: "content-type", Value: contentType},
		kgo.RecordHeader{Key: "tributary-op", Value: readOnlyBytes(m.Op)},
		kgo.RecordHeader{Key: "tributary-event-id", Value: readOnlyBytes(m.EventID)},
	)
	if gzipped {
		hs = append(hs, kgo.RecordHeader{Key: "tributary-compression", Value: gzipName})
	}
	for _, h := range m.Headers {
		hs = append(hs, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	return hs
}

// GzipThreshold is the value size from which message_compression gzip
// compresses a value.
const GzipThreshold = 500 << 10

// compressValue applies message_compression to a value before its size is
// checked: with "gzip", a value of GzipThreshold bytes or more is gzipped.
// Any other mode, or a smaller value, returns v as it is.
func compressValue(mode string, v []byte) (out []byte, gzipped bool, err error) {
	if mode != "gzip" || len(v) < GzipThreshold {
		return v, false, nil
	}
	var b bytes.Buffer
	b.Grow(len(v) / 4)
	w := gzip.NewWriter(&b)
	if _, err := w.Write(v); err != nil {
		return nil, false, err
	}
	if err := w.Close(); err != nil {
		return nil, false, err
	}
	return b.Bytes(), true, nil
}
