package kafka

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestEnsureTopicLetsTheClusterAutoCreate: without create_missing_topics a
// cluster with auto.create.topics.enable creates the topic when Tributary
// asks for it as a producer does; one without it leaves the topic missing
// (ErrTopicMissing, which the pipeline waits on and reports as a metric).
// kfake stands in for the first cluster: the shared test broker has
// auto.create.topics.enable=false (as MSK), a static setting no test may
// change.
func TestEnsureTopicLetsTheClusterAutoCreate(t *testing.T) {
	for _, auto := range []bool{true, false} {
		opts := []kfake.Opt{kfake.NumBrokers(1)}
		if auto {
			opts = append(opts, kfake.AllowAutoTopicCreation())
		}
		c, err := kfake.NewCluster(opts...)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewProducer(Options{BootstrapServers: strings.Join(c.ListenAddrs(), ","), DisableTLS: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = p.EnsureTopic(ctx, "shop.public.orders")
		cancel()
		p.Close()
		c.Close()
		if auto && err != nil {
			t.Errorf("auto-creating cluster: %v", err)
		}
		if !auto && !errors.Is(err, ErrTopicMissing) {
			t.Errorf("cluster without auto-creation: %v, want ErrTopicMissing", err)
		}
	}
}
