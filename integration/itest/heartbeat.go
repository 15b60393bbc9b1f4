package itest

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// heartbeatTime is the one field two heartbeats sent at different times
// differ in.
var heartbeatTime = regexp.MustCompile(`"ts_ms":(\d+)`)

// DebeziumHeartbeats counts the records Debezium's harness wrote to topic
// (out: its output file).
func DebeziumHeartbeats(t *testing.T, out, topic string) int {
	t.Helper()
	n := 0
	if CountLines(out) == 0 {
		return 0
	}
	EachDebeziumLine(t, out, func(l DebeziumLine) {
		if l.Destination == topic {
			n++
		}
	})
	return n
}

// CompareHeartbeats checks every record of the heartbeat topic against
// the first heartbeat Debezium wrote to it (out: the harness's output):
// the key byte for byte, the value byte for byte but for ts_ms, which
// must be a time from since to now, rising from record to record; and
// only the content-type header (the record is no row). recs are the
// topic's records. It returns the ts_ms values.
func CompareHeartbeats(t *testing.T, out, topic string, recs []*kgo.Record, since time.Time) []int64 {
	t.Helper()
	var want *DebeziumLine
	EachDebeziumLine(t, out, func(l DebeziumLine) {
		if l.Destination == topic && want == nil {
			want = &l
		}
	})
	if want == nil {
		t.Fatalf("Debezium wrote no heartbeat to %s", topic)
	}
	wantValue := heartbeatTime.ReplaceAll(want.Value, []byte(`"ts_ms":0`))
	var times []int64
	for i, r := range recs {
		if !bytes.Equal(r.Key, want.Key) {
			t.Errorf("heartbeat %d key:\n%s\nDebezium's:\n%s", i, r.Key, want.Key)
		}
		if got := heartbeatTime.ReplaceAll(r.Value, []byte(`"ts_ms":0`)); !bytes.Equal(got, wantValue) {
			t.Errorf("heartbeat %d value (ts_ms masked):\n%s\nDebezium's:\n%s", i, got, wantValue)
		}
		m := heartbeatTime.FindSubmatch(r.Value)
		if m == nil {
			t.Errorf("heartbeat %d has no ts_ms: %s", i, r.Value)
			continue
		}
		ts, _ := strconv.ParseInt(string(m[1]), 10, 64)
		if ts < since.UnixMilli()-1000 || ts > time.Now().UnixMilli() {
			t.Errorf("heartbeat %d ts_ms %d is not a time of this test (%d to now)", i, ts, since.UnixMilli())
		}
		if len(times) > 0 && ts <= times[len(times)-1] {
			t.Errorf("heartbeat %d ts_ms %d does not follow %d", i, ts, times[len(times)-1])
		}
		times = append(times, ts)
		if len(r.Headers) != 1 || r.Headers[0].Key != "content-type" || string(r.Headers[0].Value) != "application/json" {
			t.Errorf("heartbeat %d headers %v; want content-type: application/json only", i, r.Headers)
		}
	}
	return times
}

// CommittedEnd is the sum of topic's partitions' last stable offsets:
// where a read_committed consumer's reading ends (records and
// transaction markers before it; 0 if the topic does not exist).
func CommittedEnd(topic string) int64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(KafkaAddr))
	if err != nil {
		return 0
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, topic)
	if err != nil {
		return 0
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			n += o.Offset
		}
	})
	return n
}
