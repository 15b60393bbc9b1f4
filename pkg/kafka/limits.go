package kafka

import (
	"context"
	"errors"
	"strconv"
	"sync"

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
// max.message.bytes for a record batch that holds only m: the batch header
// and the record with its varint-encoded fields (length, attributes,
// timestamp and offset deltas, key, value and headers as Publish writes
// them). A record for which BatchSize is within max.message.bytes is never
// refused as too large; franz-go starts a new batch for a record that does
// not fit the one being filled.
func (m Message) BatchSize() int {
	var hs [4]kgo.RecordHeader
	return batchSize(m.Key, m.Value, m.headers(hs[:0]))
}

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

// IsTooLarge reports whether a publish failed because the record is larger
// than the topic accepts (MESSAGE_TOO_LARGE, from the broker or from the
// client holding it to the topic's max.message.bytes). Such a record is an
// oversized row, not a delivery failure.
func IsTooLarge(err error) bool {
	return errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge)
}

// topicLimits keeps each topic's max.message.bytes, read when the topic is
// first ensured, so that franz-go never builds a batch the topic refuses:
// its batch cap is the smaller of the topic's limit and max_message_bytes.
type topicLimits struct {
	def int32 // max_message_bytes
	m   sync.Map
}

// batchMaxBytes is franz-go's ProducerBatchMaxBytesFn.
func (l *topicLimits) batchMaxBytes(topic string) int32 {
	limit := l.def
	if v, ok := l.m.Load(topic); ok {
		limit = min(limit, v.(int32))
	}
	return max(limit, 512) + batchLengthPrefix
}

// learn reads topic's max.message.bytes. Best effort: a principal without
// DescribeConfigs keeps max_message_bytes, and a broker refusal is still
// caught per record (IsTooLarge).
func (p *Producer) learnLimit(ctx context.Context, topic string) {
	if p.limits == nil {
		return
	}
	rcs, err := p.adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		return
	}
	for _, c := range rc.Configs {
		if c.Key == "max.message.bytes" && c.Value != nil {
			if v, err := strconv.ParseInt(*c.Value, 10, 32); err == nil && v > 0 {
				p.limits.m.Store(topic, int32(v))
			}
		}
	}
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
