package itest

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// ReadRaw reads every record of topic (PLAINTEXT listener) as kgo records.
func ReadRaw(t *testing.T, topic string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want := TopicEnd(topic)
	cl, err := kgo.NewClient(kgo.SeedBrokers(KafkaAddr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(16<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for int64(len(recs)) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: %d of %d records", topic, len(recs), want)
		}
		fs.EachRecord(func(r *kgo.Record) { recs = append(recs, r) })
	}
	return recs
}

// Alnum returns n random letters and digits: incompressible for LZ4 (no
// repeats to match) and written into JSON as they are (no escapes), so a
// value grows byte for byte with it.
func Alnum(n int) string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = chars[int(b[i])%len(chars)]
	}
	return string(b)
}

// BatchSizeOf is the size the broker counts for r alone in a batch, as
// Tributary's check computes it.
func BatchSizeOf(r *kgo.Record) int {
	return kafka.BatchSize(r)
}
