package kafka

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kfake stands in for the broker here: a real broker does not fail produce
// requests on demand. ControlKey answers every produce request with a
// retriable error, so the test can count attempts.
func TestProduceStopsAfterMaxAttempts(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var attempts atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		attempts.Add(1)
		pr := req.(*kmsg.ProduceRequest)
		resp := pr.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range pr.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic = rt.Topic
			st.TopicID = rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.NotEnoughReplicas.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	d := Options{BootstrapServers: c.ListenAddrs()[0], DisableTLS: true, MaxMessageBytes: 1 << 20}
	// Only the wait between attempts is shortened; the attempt count is
	// the production setting.
	p, err := NewProducer(d, kgo.RetryBackoffFn(func(int) time.Duration { return 5 * time.Millisecond }), kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	done := make(chan error, 1)
	p.Produce(context.Background(), &kgo.Record{Topic: "t", Key: []byte("k"), Value: []byte("v")}, func(_ *kgo.Record, err error) { done <- err })
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("no result after 30 s and %d attempts", attempts.Load())
	}
	if !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("err %v, want NOT_ENOUGH_REPLICAS", err)
	}
	if n := attempts.Load(); n != MaxAttempts {
		t.Fatalf("%d produce attempts, want %d", n, MaxAttempts)
	}
}

func TestBackoffCappedAt5s(t *testing.T) {
	var total time.Duration
	for i := 1; i < MaxAttempts; i++ {
		b := backoff(i)
		if b > MaxBackoff || b <= 0 {
			t.Fatalf("backoff(%d) = %s", i, b)
		}
		total += b
	}
	if backoff(1) != 100*time.Millisecond || backoff(9) != MaxBackoff {
		t.Fatalf("backoff(1)=%s backoff(9)=%s", backoff(1), backoff(9))
	}
	t.Logf("all waits of one record: %s", total)
}

func TestNewProducerRefusesUnsafeSettings(t *testing.T) {
	d := Options{BootstrapServers: "127.0.0.1:1", DisableTLS: true}
	for name, opt := range map[string]kgo.Opt{
		"no idempotence":  kgo.DisableIdempotentWrite(),
		"unbounded tries": kgo.RecordRetries(1 << 40),
	} {
		p, err := NewProducer(d, opt)
		if err == nil {
			p.Close()
			t.Fatalf("%s: accepted", name)
		}
		if !errors.Is(err, ErrUnsafeProducer) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	p, err := NewProducer(d)
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
}

func TestClientOptsErrorsNameFields(t *testing.T) {
	for _, tc := range []struct {
		d     Options
		field string
	}{
		{Options{}, "destination.bootstrap_servers"},
		{Options{BootstrapServers: "h:1", Authentication: "KERBEROS"}, "destination.authentication"},
		{Options{BootstrapServers: "h:1", ClientCertificate: "x"}, "destination.client_key"},
		{Options{BootstrapServers: "h:1", ClientKey: "secret-canary"}, "destination.client_certificate"},
		{Options{BootstrapServers: "h:1", CACertificate: "nope"}, "destination.ca_certificate"},
		{Options{BootstrapServers: "h:1", DisableTLS: true, Authentication: AuthAWSMSKIAM}, "destination.disable_tls"},
	} {
		_, err := ClientOpts(tc.d)
		if err == nil || !strings.Contains(err.Error(), tc.field) || strings.Contains(err.Error(), "secret-canary") {
			t.Errorf("%+v: err %v, want one naming %s", tc.d, err, tc.field)
		}
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub)))
}
