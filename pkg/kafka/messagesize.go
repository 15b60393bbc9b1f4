package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// RecordBatchOverhead is the header of a v2 record batch as a broker counts
// it against max.message.bytes: base offset (8), batch length (4), leader
// epoch (4), magic (1), CRC (4), attributes (2), last offset delta (4),
// first and max timestamp (8+8), producer id (8), producer epoch (2), base
// sequence (4) and the record count (4).
const RecordBatchOverhead = 61

// batchLengthPrefix is what franz-go counts for a batch beyond what the
// broker does (the bytes field's length in the produce request): its
// ProducerBatchMaxBytes is max.message.bytes plus this.
const batchLengthPrefix = 4

// BatchSize is the size in bytes the broker compares with the topic's
// max.message.bytes for a record batch that holds only r: the batch header
// and the record with its varint-encoded fields (length, attributes,
// timestamp and offset deltas, key, value and headers as Publish writes
// them). A record for which BatchSize is within max.message.bytes is never
// refused as too large; franz-go starts a new batch for a record that does
// not fit the one being filled.
func BatchSize(r *kgo.Record) int { return batchSize(r.Key, r.Value, r.Headers) }

func batchSize(key, value []byte, headers []kgo.RecordHeader) int {
	n := 1 + // attributes
		varintLen(0) + // timestamp delta: 0 for a batch's first record
		varintLen(0) + // offset delta
		bytesLen(key) + bytesLen(value) +
		varintLen(int64(len(headers)))
	for _, h := range headers {
		n += varintLen(int64(len(h.Key))) + len(h.Key) + bytesLen(h.Value)
	}
	return RecordBatchOverhead + varintLen(int64(n)) + n
}

// bytesLen is a nullable byte field: its varint length (-1 for null) and
// the bytes.
func bytesLen(b []byte) int {
	if b == nil {
		return varintLen(-1)
	}
	return varintLen(int64(len(b))) + len(b)
}

// varintLen is the size of v zig-zag encoded as a varint.
func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// isRefusedTooLarge reports whether a publish failed as too large
// (MESSAGE_TOO_LARGE, from the broker or from franz-go holding a record to
// the batch cap of limits), whatever the reason.
func isRefusedTooLarge(err error) bool {
	return errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge)
}

// MessageTooLargeError is a message Publish refused before handing it
// over: the record it makes, value compressed, is over MaxMessageBytes
// (destination.max_message_bytes), or a tombstone is over its topic's
// max.message.bytes. Such a message is an oversized row, to be skipped and
// reported.
type MessageTooLargeError struct {
	Size    int    // the record alone in a batch (BatchSize)
	Limit   int    // MaxMessageBytes, or Topic's max.message.bytes
	Gzipped bool   // the value was gzipped (message_compression)
	Topic   string // set when Limit is this topic's max.message.bytes
}

func (e *MessageTooLargeError) Error() string {
	if e.Topic != "" {
		return fmt.Sprintf("message of %d bytes is over max.message.bytes %d of topic %s", e.Size, e.Limit, e.Topic)
	}
	s := fmt.Sprintf("message of %d bytes is over destination.max_message_bytes %d", e.Size, e.Limit)
	if e.Gzipped {
		s += " after gzip"
	}
	return s
}

// RecordTooLargeError is a record that alone exceeds what its topic takes:
// its BatchSize is over the topic's max.message.bytes (as read) or
// destination.max_message_bytes. Such a record is an oversized row, to be
// skipped, not a delivery failure.
type RecordTooLargeError struct {
	Topic string
	Size  int   // the record alone in a batch (BatchSize)
	Limit int   // the smaller of max.message.bytes and max_message_bytes
	Err   error // franz-go's or the broker's MESSAGE_TOO_LARGE

	topicLimit bool // Limit is the topic's max.message.bytes as read
}

func (e *RecordTooLargeError) Error() string {
	if !e.topicLimit {
		// Limit is the configuration's: the topic takes more.
		return fmt.Sprintf("message of %d bytes is over destination.max_message_bytes %d", e.Size, e.Limit)
	}
	return fmt.Sprintf("message of %d bytes is over max.message.bytes %d of topic %s", e.Size, e.Limit, e.Topic)
}

func (e *RecordTooLargeError) Unwrap() error { return e.Err }

// IsTooLarge reports whether a publish failed because the record alone is
// larger than its topic takes (a *RecordTooLargeError). A batch refused as
// too large while each of its records fits is a *TopicLimitError instead.
func IsTooLarge(err error) bool {
	var e *RecordTooLargeError
	return errors.As(err, &e)
}

// TopicLimitError is a batch refused as too large (MESSAGE_TOO_LARGE)
// although the record fits the limit the producer builds its batches for:
// the topic's max.message.bytes was lowered after it was read, or it could
// not be read and is below destination.max_message_bytes. franz-go fails
// every record buffered for the partition with such a batch, and a
// producer's batch cap cannot change once a partition is in use, so none
// of them is skipped: the pipeline stalls, and its retry from the
// checkpoint (a new producer, which reads the limit again when it ensures
// the topic) sends them in batches that fit (IsStall).
type TopicLimitError struct {
	Topic   string
	Limit   int   // the batch cap the producer used
	Raised  int   // max.message.bytes read again, above Limit; 0: not raised
	ReadErr error // why max.message.bytes could not be read; nil: it was
	Err     error // the broker's MESSAGE_TOO_LARGE
}

func (e *TopicLimitError) Error() string {
	if e.Raised > 0 {
		return fmt.Sprintf("topic %s takes records of up to %d bytes now, more than when it was read (%d): the retry from the checkpoint reads it again and sends the record that did not fit (%v)", e.Topic, e.Raised, e.Limit, e.Err)
	}
	if e.ReadErr == nil {
		return fmt.Sprintf("topic %s refused a batch as too large (%v) although each record fits its max.message.bytes as read (%d): the limit was lowered; the retry from the checkpoint reads it again and sends batches that fit", e.Topic, e.Err, e.Limit)
	}
	return fmt.Sprintf("topic %s refused a batch as too large (%v); its max.message.bytes cannot be read (%v), so batches are built for destination.max_message_bytes %d: "+
		"grant kafka-cluster:DescribeTopicDynamicConfiguration (MSK IAM) or DescribeConfigs on the topic (ACL), or set destination.max_message_bytes to at most the topic's max.message.bytes (docs/aws.md); nothing is skipped or advances meanwhile",
		e.Topic, e.Err, e.ReadErr, e.Limit)
}

func (e *TopicLimitError) Unwrap() error { return e.Err }

// classify turns a too-large failure of r into a *RecordTooLargeError
// when r alone exceeds the topic's limit, else into a *TopicLimitError;
// any other error is returned as it is.
func (l *topicLimits) classify(r *kgo.Record, err error) error {
	if !isRefusedTooLarge(err) {
		return err
	}
	limit := l.limit(r.Topic)
	if size := batchSize(r.Key, r.Value, r.Headers); size > limit {
		return &RecordTooLargeError{Topic: r.Topic, Size: size, Limit: limit, Err: err, topicLimit: limit < int(l.def)}
	}
	e := &TopicLimitError{Topic: r.Topic, Limit: limit, Err: err}
	if _, read := l.m.Load(r.Topic); !read {
		e.ReadErr = errLimitNotRead
		if v, ok := l.readErr.Load(r.Topic); ok {
			e.ReadErr = v.(error)
		}
	}
	return e
}

var errLimitNotRead = errors.New("not read")

// topicLimits keeps each topic's max.message.bytes, read when the topic is
// first ensured, so that franz-go never builds a batch the topic refuses:
// its batch cap is the smaller of the topic's limit and max_message_bytes.
type topicLimits struct {
	def     int32    // max_message_bytes
	m       sync.Map // topic → int32 max.message.bytes
	readErr sync.Map // topic → error: why max.message.bytes could not be read
}

// limit is the largest BatchSize that topic takes as far as known.
func (l *topicLimits) limit(topic string) int {
	limit := l.def
	if v, ok := l.m.Load(topic); ok {
		limit = min(limit, v.(int32))
	}
	return int(limit)
}

// batchMaxBytes is franz-go's ProducerBatchMaxBytesFn.
func (l *topicLimits) batchMaxBytes(topic string) int32 {
	return max(int32(l.limit(topic)), 512) + batchLengthPrefix
}

// defaultBrokerMaxWriteBytes is franz-go's BrokerMaxWriteBytes by default,
// the brokers' socket.request.max.bytes by default (100 MiB): the largest
// produce request the producer writes.
const defaultBrokerMaxWriteBytes = 100 << 20

// produceRequestFraming bounds what a produce request holding one batch
// adds around it: the request header with the client id, the
// transactional id (franz-go takes either up to 16382 bytes), the topic
// name (at most 249 bytes) and the partition's fields (under 64 bytes).
const produceRequestFraming = 2*16382 + 249 + 64

// brokerMaxWriteBytes is franz-go's BrokerMaxWriteBytes for a batch cap
// of maxMessageBytes: its default, or more when a produce request holding
// one batch at the cap needs more. franz-go refuses a batch cap above it
// (the client is not built) and caps every batch at it less the framing,
// so without the raise a max_message_bytes near 100 MiB would not run,
// or would build batches below the cap and stall on a row that fits.
// Sending such a batch needs the brokers' socket.request.max.bytes
// raised likewise, as Kafka's own producers do (docs/configuration.md).
func brokerMaxWriteBytes(maxMessageBytes int32) int32 {
	return max(defaultBrokerMaxWriteBytes, max(maxMessageBytes, 512)+batchLengthPrefix+produceRequestFraming)
}

// classify is topicLimits.classify for a record of this producer: a
// record over the topic's max.message.bytes as read is skipped only if
// the topic still refuses it when read again (its limit may have been
// raised since; the producer's batches cannot follow, so that is a stall
// too). One read per such row, which is rare and recorded durably anyway.
func (p *Producer) classify(r *kgo.Record, err error) error {
	err = p.limits.classify(r, err)
	var big *RecordTooLargeError
	if !errors.As(err, &big) || !big.topicLimit {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if now, rerr := p.readLimit(ctx, r.Topic); rerr == nil && now >= big.Size && now > big.Limit {
		return &TopicLimitError{Topic: r.Topic, Limit: big.Limit, Raised: now, Err: big.Err}
	}
	return err
}

// learn reads topic's max.message.bytes. Best effort: a principal without
// DescribeConfigs (on MSK: kafka-cluster:DescribeTopicDynamicConfiguration)
// keeps max_message_bytes, and a broker refusal is still caught per record
// (classify).
func (p *Producer) learnLimit(ctx context.Context, topic string) {
	if p.limits == nil {
		return
	}
	v, err := p.readLimit(ctx, topic)
	if err != nil {
		p.limits.readErr.Store(topic, err)
		return
	}
	p.limits.m.Store(topic, int32(v))
	p.limits.readErr.Delete(topic)
}

// readLimit asks the cluster for topic's max.message.bytes.
func (p *Producer) readLimit(ctx context.Context, topic string) (int, error) {
	rcs, err := p.adm.DescribeTopicConfigs(ctx, topic)
	var rc kadm.ResourceConfig
	if err == nil {
		rc, err = rcs.On(topic, nil)
	}
	if err == nil {
		err = withMessage(rc.Err, rc.ErrMessage)
	}
	if err != nil {
		return 0, fmt.Errorf("describe configs of topic %s: %w", topic, err)
	}
	for _, c := range rc.Configs {
		if c.Key == "max.message.bytes" && c.Value != nil {
			if v, err := strconv.ParseInt(*c.Value, 10, 32); err == nil && v > 0 {
				return int(v), nil
			}
		}
	}
	return 0, fmt.Errorf("describe configs of topic %s: no max.message.bytes", topic)
}

// TopicMaxMessageBytes is the topic's max.message.bytes as read when it
// was ensured; ok is false when unknown.
func (p *Producer) TopicMaxMessageBytes(topic string) (int, bool) {
	if p.limits == nil {
		return 0, false
	}
	v, ok := p.limits.m.Load(topic)
	if !ok {
		return 0, false
	}
	return int(v.(int32)), true
}

// MaxMessageBytes is the largest record Publish hands over
// (Options.MaxMessageBytes, default 1 MiB).
func (p *Producer) MaxMessageBytes() int { return int(p.limits.def) }
