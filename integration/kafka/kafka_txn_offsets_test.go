package kafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// TestReadLastCommittedWaitsOutUnknownTopic: an exactly-once task reading
// its position back while the cluster does not show the offsets topic yet
// (UNKNOWN_TOPIC_OR_PARTITION, which a broker that has just restarted
// answers until it caught up with the cluster's metadata: in the rolling
// restart of TestExactlyOnceBrokerFaults the task ended on it) asks again
// instead of failing, and reads the topic once it is there.
func TestReadLastCommittedWaitsOutUnknownTopic(t *testing.T) {
	itest.SkipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := "it-" + itest.UniqueName("txnwait") + ".tributary-offsets"
	d := kafka.Options{BootstrapServers: itest.KafkaAddr, DisableTLS: true}
	cl, err := kgo.NewClient(kgo.SeedBrokers(itest.KafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	t.Cleanup(func() { adm.DeleteTopic(context.Background(), topic) })
	created := make(chan error, 1)
	go func() {
		time.Sleep(2 * time.Second)
		_, err := adm.CreateTopic(ctx, 1, 1, nil, topic)
		created <- err
	}()
	start := time.Now()
	_, found, err := kafka.ReadLastCommitted(ctx, d, topic, []byte("p"))
	if cerr := <-created; cerr != nil {
		t.Fatalf("create %s: %v", topic, cerr)
	}
	if err != nil {
		t.Fatalf("ReadLastCommitted failed %s after start on a topic created 2 s in: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if found {
		t.Fatal("found a position in an empty topic")
	}
	t.Logf("read the empty topic after %s", time.Since(start).Round(time.Millisecond))
}
