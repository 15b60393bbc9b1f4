package itest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Message is one record read back from Kafka.
type Message struct {
	Partition int32
	Offset    int64
	Key       map[string]any
	Value     map[string]any // nil for a tombstone
	Headers   map[string]string
	// ProducerID tells apart the processes that wrote (one idempotent
	// producer id per process).
	ProducerID int64
}

// Payload is the value's Debezium payload (nil for a tombstone).
func (m Message) Payload() map[string]any {
	p, _ := m.Value["payload"].(map[string]any)
	return p
}

// ReadTopic reads a topic from the start up to its current end.
func ReadTopic(t *testing.T, topic string) []Message {
	t.Helper()
	var msgs []Message
	EachMessageWithin(t, topic, 60*time.Second, func(m Message) { msgs = append(msgs, m) })
	return msgs
}

// ReadTopicIfAny is ReadTopic that finds nothing in a topic not created
// yet.
func ReadTopicIfAny(t *testing.T, topic string) []Message {
	if TopicEnd(topic) == 0 {
		return nil
	}
	return ReadTopic(t, topic)
}

// EachMessageWithin calls fn for each record of topic, from the start up
// to its end when called, failing the test after timeout.
func EachMessageWithin(t *testing.T, topic string, timeout time.Duration, fn func(Message)) {
	t.Helper()
	EachRecordWithin(t, topic, timeout, nil, func(_ *kgo.Record, m Message) { fn(m) })
}

// EachRecordWithin is EachMessageWithin with extra client options (e.g.
// read_committed); fn also gets the record. Control records (kept to see
// a transactional topic's end) are not passed on.
func EachRecordWithin(t *testing.T, topic string, timeout time.Duration, opts []kgo.Opt, fn func(*kgo.Record, Message)) {
	t.Helper()
	EachRawRecordWithin(t, topic, timeout, opts, func(r *kgo.Record) {
		m := Message{Partition: r.Partition, Offset: r.Offset, Headers: map[string]string{}, ProducerID: r.ProducerID}
		if r.Key == nil {
			// A null key (a table without a key): Key stays nil.
		} else if err := json.Unmarshal(r.Key, &m.Key); err != nil {
			t.Fatalf("key at %d/%d is not JSON: %v: %s", r.Partition, r.Offset, err, r.Key)
		}
		if r.Value != nil {
			if err := json.Unmarshal(r.Value, &m.Value); err != nil {
				t.Fatalf("value at %d/%d is not JSON: %v", r.Partition, r.Offset, err)
			}
		}
		for _, h := range r.Headers {
			m.Headers[h.Key] = string(h.Value)
		}
		fn(r, m)
	})
}

// EachRawRecordWithin is EachRecordWithin leaving the decoding to fn (the
// soak's checker decodes only the fields it compares).
func EachRawRecordWithin(t *testing.T, topic string, timeout time.Duration, opts []kgo.Opt, fn func(*kgo.Record)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(KafkaAddr), kgo.FetchMaxBytes(64 << 20)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	want := map[int32]int64{}
	offsets := map[string]map[int32]kgo.Offset{topic: {}}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			want[o.Partition] = o.Offset
			offsets[topic][o.Partition] = kgo.NewOffset().AtStart()
		}
	})
	if len(want) == 0 {
		return
	}
	cl.AddConsumePartitions(offsets)
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading %s: %v (still waiting for %v)", topic, err, want)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch %s: %v", topic, err) })
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := want[r.Partition]
			if !ok || r.Offset >= end {
				return
			}
			if r.Offset+1 >= end {
				delete(want, r.Partition)
			}
			if r.Attrs.IsControl() {
				return
			}
			fn(r)
		})
	}
}

// TopicEnd is the total number of records in topic (0 if it does not exist).
func TopicEnd(topic string) int64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(KafkaAddr))
	if err != nil {
		return 0
	}
	defer cl.Close()
	return endOffset(kadm.NewClient(cl), topic)
}

// endOffset is the sum of topic's partitions' end offsets, 0 when they
// cannot be listed.
func endOffset(adm *kadm.Client, topic string) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
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

// TopicsEnd is the sum of the topics' end offsets.
func TopicsEnd(topics []string) int64 {
	var n int64
	for _, t := range topics {
		n += TopicEnd(t)
	}
	return n
}

// CommittedMessage is a message read read_committed, with the producer
// epoch that tells transactions of different owners apart.
type CommittedMessage struct {
	Message
	Epoch int16
}

// ReadCommitted reads topic from the start to its end with isolation
// level read_committed. Transactional topics end with a marker, so control
// records are kept to see the end, and dropped from the result.
func ReadCommitted(t *testing.T, topic string) []CommittedMessage {
	t.Helper()
	var msgs []CommittedMessage
	EachRecordWithin(t, topic, 60*time.Second, []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()},
		func(r *kgo.Record, m Message) {
			msgs = append(msgs, CommittedMessage{Message: m, Epoch: r.ProducerEpoch})
		})
	return msgs
}

// FinalState is the state a consumer keyed on k ends with after reading
// topic: the last message per key, a delete (or tombstone) removing it.
func FinalState(t *testing.T, topic string) map[int]string {
	out := map[int]string{}
	for _, m := range ReadTopicIfAny(t, topic) {
		k := int(m.Key["payload"].(map[string]any)["k"].(float64))
		if m.Value == nil || m.Payload()["op"] == "d" {
			delete(out, k)
			continue
		}
		out[k] = fmt.Sprint(m.Payload()["after"].(map[string]any)["v"])
	}
	return out
}

// KillAtTopicEnd SIGKILLs p as soon as topic's end offset reaches n, or
// extra (when not nil) holds, and returns the end offset read after the
// kill. It polls every few milliseconds over one client: a publisher
// drains more than 100,000 records a second, so WaitFor's 200 ms steps,
// each with a new client, let a mid-backfill or mid-transaction kill land
// after the end (CI saw both).
func (p *Proc) KillAtTopicEnd(t *testing.T, timeout time.Duration, topic string, n int64, extra func() bool) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(KafkaAddr), kgo.MetadataMinAge(10*time.Millisecond)) // its cache would hide a new topic for seconds
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	end := func() int64 { return endOffset(adm, topic) }
	deadline := time.Now().Add(timeout)
	for end() < n && (extra == nil || !extra()) {
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("waiting for %d records on %s: timed out after %s or tributary exited (%v); output:\n%s", n, topic, timeout, p.Err, p.Out)
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.Kill()
	return end()
}
