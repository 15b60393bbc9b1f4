package kafka

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestBatchSizeIsTheWireSize: BatchSize is the length of the v2 record
// batch the broker receives (and compares with max.message.bytes) for the
// record alone, across the varint length boundaries of key, value and
// record.
func TestBatchSizeIsTheWireSize(t *testing.T) {
	for _, tc := range []struct {
		name     string
		key      []byte
		valueLen int
		gzipped  bool
	}{
		{"no key, tombstone", nil, -1, false},
		{"small", []byte(`{"id":1}`), 10, false},
		{"63/64", bytes.Repeat([]byte("k"), 63), 64, true},
		{"varint 2 to 3 bytes", []byte("k"), 8191, false},
		{"8192", []byte("k"), 8192, false},
		{"just under 1 MiB", []byte(`{"id":1}`), 1<<20 - 200, false},
		{"20 MiB", []byte(`{"id":1}`), 20 << 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Message{Topic: "t", Key: tc.key, Op: "c", EventID: "0/16B3748:1"}
			if tc.valueLen >= 0 {
				m.Value = make([]byte, tc.valueLen)
			}
			r := &kgo.Record{Topic: m.Topic, Key: m.Key, Value: m.Value, Headers: m.headers(nil, tc.gzipped)}
			rec := kmsg.Record{Key: m.Key, Value: m.Value}
			for _, h := range r.Headers {
				rec.Headers = append(rec.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
			}
			// AppendTo writes Record.Length first (0 here, one byte):
			// drop it and prefix the real length.
			body := rec.AppendTo(nil)[1:]
			var records []byte
			records = appendVarint(records, int64(len(body)))
			records = append(records, body...)
			batch := kmsg.RecordBatch{Magic: 2, NumRecords: 1, Records: records}
			wire := batch.AppendTo(nil)
			if got := BatchSize(r); got != len(wire) {
				t.Fatalf("BatchSize %d, the encoded batch is %d bytes", got, len(wire))
			}
		})
	}
}

func appendVarint(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// TestClassifyTooLarge: a record refused as too large is skippable
// (RecordTooLargeError) only when it alone is over the topic's limit as
// known; one that fits is a TopicLimitError, a stall, whose message says
// whether the limit was read and, if not, what to grant.
func TestClassifyTooLarge(t *testing.T) {
	l := &topicLimits{def: 1 << 20}
	l.m.Store("read", int32(20000))
	l.readErr.Store("denied", errors.New("describe configs of topic denied: TOPIC_AUTHORIZATION_FAILED"))
	rec := func(topic string, n int) *kgo.Record {
		return &kgo.Record{Topic: topic, Key: []byte(`{"id":1}`), Value: make([]byte, n)}
	}
	refused := fmt.Errorf("%w (uncompressed_bytes=900000, compressed_bytes=800000)", kerr.MessageTooLarge)

	var big *RecordTooLargeError
	if err := l.classify(rec("read", 30000), refused); !errors.As(err, &big) || big.Limit != 20000 || big.Size <= 30000 || !IsTooLarge(err) {
		t.Fatalf("30 KB record on a 20,000-byte topic: %v", err)
	}
	if err := l.classify(rec("denied", 2<<20), refused); !errors.As(err, &big) || big.Limit != 1<<20 {
		t.Fatalf("2 MiB record over max_message_bytes: %v", err)
	}

	var tl *TopicLimitError
	err := l.classify(rec("read", 1000), refused)
	if !errors.As(err, &tl) || IsTooLarge(err) || tl.ReadErr != nil || !strings.Contains(err.Error(), "the limit was lowered") {
		t.Fatalf("1 KB record in a refused batch, limit read: %v", err)
	}
	err = l.classify(rec("denied", 1000), refused)
	if !errors.As(err, &tl) || IsTooLarge(err) || tl.ReadErr == nil ||
		!strings.Contains(err.Error(), "cannot be read") || !strings.Contains(err.Error(), "DescribeTopicDynamicConfiguration") || !strings.Contains(err.Error(), "TOPIC_AUTHORIZATION_FAILED") {
		t.Fatalf("1 KB record in a refused batch, limit not readable: %v", err)
	}
	if !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("the broker's error is not kept: %v", err)
	}
	if other := errors.New("other"); l.classify(rec("read", 1), other) != other {
		t.Fatal("an error other than MESSAGE_TOO_LARGE is changed")
	}
}
