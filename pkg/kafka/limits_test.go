package kafka

import (
	"bytes"
	"testing"

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
			m := Message{Topic: "t", Key: tc.key, Op: "c", EventID: "0/16B3748:1", Gzipped: tc.gzipped}
			if tc.valueLen >= 0 {
				m.Value = make([]byte, tc.valueLen)
			}
			rec := kmsg.Record{Key: m.Key, Value: m.Value}
			for _, h := range m.headers(nil) {
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
			if got := m.BatchSize(); got != len(wire) {
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
