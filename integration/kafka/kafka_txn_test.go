package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// TestKafkaTransactionFencing: a producer with records of an open
// transaction already on the broker is fenced the moment a second
// producer of the same transactional id initialises. Its commit fails
// with ErrFenced, and a read_committed consumer (and the offsets reader)
// sees only what the second one committed.
func TestKafkaTransactionFencing(t *testing.T) {
	itest.SkipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prefix := "it-" + itest.UniqueName("txn")
	topic, offsets := prefix+".t", prefix+".tributary-offsets"
	d := kafka.Options{BootstrapServers: itest.KafkaAddr, DisableTLS: true, CreateMissingTopics: true, MaxMessageBytes: config.DefaultMaxMessageBytes}
	id := prefix + ".tributary-fencing"

	open := func() *kafka.Producer {
		p, err := kafka.NewTransactionalProducer(d, id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		if err := p.Fence(ctx); err != nil {
			t.Fatal(err)
		}
		for _, tp := range []string{topic, offsets} {
			var err error
			if tp == offsets {
				err = p.EnsureOffsetsTopic(ctx, tp)
			} else {
				err = p.EnsureTopic(ctx, tp)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	publish := func(p *kafka.Producer, topic, key, value string) {
		p.Publish(ctx, kafka.Message{Topic: topic, Key: []byte(key), Value: []byte(value)}, func(err error) {})
	}

	first := open()
	for i := 0; i < 10; i++ {
		publish(first, topic, fmt.Sprintf(`{"k":%d}`, i), `{"owner":"first"}`)
	}
	publish(first, offsets, "p", "first")
	if err := first.Flush(ctx); err != nil { // on the broker, not committed
		t.Fatal(err)
	}

	second := open() // fences the first
	for i := 0; i < 5; i++ {
		publish(second, topic, fmt.Sprintf(`{"k":%d}`, i), `{"owner":"second"}`)
	}
	publish(second, offsets, "p", "second")
	if err := second.CommitTransaction(ctx); err != nil {
		t.Fatalf("the new owner's commit: %v", err)
	}

	publish(first, topic, `{"k":99}`, `{"owner":"first"}`)
	err := first.CommitTransaction(ctx)
	if !errors.Is(err, kafka.ErrFenced) {
		t.Fatalf("the fenced owner's commit returned %v, want ErrFenced", err)
	}
	t.Logf("fenced owner: %v", err)

	msgs := itest.ReadCommitted(t, topic)
	if len(msgs) != 5 {
		t.Errorf("read_committed sees %d records, want the second owner's 5", len(msgs))
	}
	for _, m := range msgs {
		if m.Value["owner"] != "second" {
			t.Errorf("read_committed sees a record of %v at %d/%d", m.Value["owner"], m.Partition, m.Offset)
		}
	}
	v, found, err := kafka.ReadLastCommitted(ctx, d, offsets, []byte("p"))
	if err != nil || !found || string(v) != "second" {
		t.Errorf("offsets reader: %q, %v, %v; want the committed \"second\"", v, found, err)
	}
	if _, found, err := kafka.ReadLastCommitted(ctx, d, offsets, []byte("other")); err != nil || found {
		t.Errorf("offsets reader for a key never written: found %v, err %v", found, err)
	}
}

// TestKafkaTransactionsACL: on the SASL_SSL listener, whose users may use
// topics and transactional ids named sec.* only, the connection test's
// transactions check passes under that prefix and says in words why it
// fails under another; and a principal with those ACLs does what an
// exactly-once pipeline does: fence, create and write the offsets topic
// in a transaction, read it back read_committed.
func TestKafkaTransactionsACL(t *testing.T) {
	itest.SkipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := itest.SASLDest(t, config.AuthSCRAMSHA512, "creator", itest.SASLUsers["creator"])
	d.CreateMissingTopics = true
	prefix := itest.SecPrefix("txn")

	check := func(prefix string) kafka.Check {
		r := kafka.TestConnection(ctx, d, prefix, kafka.WithTransactions())
		for _, c := range r.Checks {
			if c.Name == kafka.CheckTransactions {
				return c
			}
		}
		t.Fatalf("no %s check in %+v", kafka.CheckTransactions, r.Checks)
		return kafka.Check{}
	}
	if c := check(prefix); !c.OK || !c.Required {
		t.Errorf("transactions check under %s: %+v", prefix, c)
	}
	denied := check("other-" + prefix[len(itest.ACLPrefix):])
	if denied.OK || !strings.Contains(denied.Detail, "may not use this transactional id") {
		t.Errorf("transactions check outside the ACL prefix: %+v", denied)
	}
	t.Logf("denied: %s", denied.Detail)

	p, err := kafka.NewTransactionalProducer(d, prefix+".tributary-acl")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	offsets := prefix + ".tributary-offsets"
	for _, step := range []func() error{
		func() error { return p.Fence(ctx) },
		func() error { return p.EnsureOffsetsTopic(ctx, offsets) },
		p.BeginTransaction,
		func() error {
			p.Publish(ctx, kafka.Message{Topic: offsets, Key: []byte("acl"), Value: []byte("v1")}, func(error) {})
			return p.CommitTransaction(ctx)
		},
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	v, found, err := kafka.ReadLastCommitted(ctx, d, offsets, []byte("acl"))
	if err != nil || !found || string(v) != "v1" {
		t.Fatalf("read back as creator: %q %v %v", v, found, err)
	}
}
