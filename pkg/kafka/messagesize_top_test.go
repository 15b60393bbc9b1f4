package kafka

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// maxMessageBytesTop is the largest destination.max_message_bytes the
// configuration accepts (config.MaxMessageBytesLimit, 100 MiB; this
// package reads no configuration document).
const maxMessageBytesTop = 100 << 20

// TestProducerAtTheTopOfMaxMessageBytes: every max_message_bytes the
// configuration accepts builds a producer (franz-go refuses a batch cap
// above its BrokerMaxWriteBytes, 100 MiB by default, and the batch cap is
// max_message_bytes + 4), and franz-go's own batch limit, BrokerMaxWriteBytes
// less a produce request's framing, never cuts below the cap: a row that
// fits max_message_bytes is never held back by the client, whatever the
// client id, transactional id or topic name (at their longest). Below
// 100 MiB less 64 KiB, BrokerMaxWriteBytes stays franz-go's default
// (100 MiB, the brokers' default socket.request.max.bytes).
func TestProducerAtTheTopOfMaxMessageBytes(t *testing.T) {
	longTopic := strings.Repeat("t", 249)
	longClientID := strings.Repeat("c", 255)
	longTxnID := strings.Repeat("x", 600)
	for _, mb := range []int{0, 1, 1 << 20, maxMessageBytesTop - 64<<10, maxMessageBytesTop - 4, maxMessageBytesTop - 3, maxMessageBytesTop - 1, maxMessageBytesTop} {
		for _, txn := range []string{"", longTxnID} {
			t.Run(fmt.Sprintf("%d/txn=%v", mb, txn != ""), func(t *testing.T) {
				o := Options{BootstrapServers: "127.0.0.1:1", DisableTLS: true, MaxMessageBytes: mb, ClientID: longClientID}
				var p *Producer
				var err error
				if txn == "" {
					p, err = NewProducer(o)
				} else {
					p, err = NewTransactionalProducer(o, txn)
				}
				if err != nil {
					t.Fatalf("max_message_bytes %d: %v", mb, err)
				}
				defer p.Close()
				w, _ := p.cl.OptValue(kgo.BrokerMaxWriteBytes).(int32)
				batchCap := p.limits.batchMaxBytes(longTopic)
				// franz-go's maxRecordBatchBytesForTopic: the request
				// header and produce fields (27 bytes with the ids'
				// lengths), the ids, then the topic and partition fields.
				framing := int32(27+len(longClientID)+len(txn)) + 2 + int32(len(longTopic)) + 4 + 4 + 4
				if w-framing < batchCap {
					t.Fatalf("max_message_bytes %d: franz-go caps batches at %d (BrokerMaxWriteBytes %d less %d of framing), below the cap %d", mb, w-framing, w, framing, batchCap)
				}
				if mb <= maxMessageBytesTop-64<<10 && w != 100<<20 {
					t.Fatalf("max_message_bytes %d: BrokerMaxWriteBytes %d, want franz-go's default %d", mb, w, 100<<20)
				}
			})
		}
	}
}

// TestPublishAtTheTopOfMaxMessageBytes: a producer whose max_message_bytes
// is the largest the configuration accepts publishes against the local
// broker (make services-up), as tributary run does.
func TestPublishAtTheTopOfMaxMessageBytes(t *testing.T) {
	const addr = "127.0.0.1:9092"
	adm, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	topic := fmt.Sprintf("max-message-bytes-top-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(adm).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatalf("create %s on %s (make services-up): %v", topic, addr, err)
	}
	defer kadm.NewClient(adm).DeleteTopics(context.Background(), topic)
	p, err := NewProducer(Options{BootstrapServers: addr, DisableTLS: true, MaxMessageBytes: maxMessageBytesTop, CreateMissingTopics: true})
	if err != nil {
		t.Fatalf("max_message_bytes %d: %v", maxMessageBytesTop, err)
	}
	defer p.Close()
	acked := make(chan error, 1)
	if err := p.Publish(ctx, Message{Topic: topic, Key: []byte(`{"id":1}`), Value: []byte(`{"id":1}`), Op: "c", EventID: "e"}, func(err error) { acked <- err }); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-acked; err != nil {
		t.Fatal(err)
	}
}
