package faults_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestKafkaClusterTopicCreationReplicas: on the three-broker cluster,
// destination.topic_creation's replication factor and
// min.insync.replicas reach the topics Tributary creates: a group's
// topic with 3 replicas and min.insync.replicas 3, the others with the
// default group's 2 and 1.
func TestKafkaClusterTopicCreationReplicas(t *testing.T) {
	startKafkaCluster(t)
	e := itest.NewEnv(t, "clustertopics")
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY)`)
	e.Exec(`CREATE TABLE items (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO orders VALUES (1)`)
	e.Exec(`INSERT INTO items VALUES (1)`)
	cfg := e.ClusterConfig(fmt.Sprintf(`  bootstrap_servers: %s
  disable_tls: true
  topic_creation:
    default:
      replication_factor: 2
      config:
        min.insync.replicas: 1
    groups:
      - name: orders
        include: ['.*\.orders']
        replication_factor: 3
        partitions: 2
        config:
          min.insync.replicas: 3
`, itest.ClusterBootstrap))
	p := e.Start("run", "--config", cfg)
	orders, items := e.Prefix+".public.orders", e.Prefix+".public.items"
	adm := clusterAdmin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	p.WaitFor(t, 90*time.Second, "both topics", func() bool {
		ends, err := adm.ListEndOffsets(ctx, orders, items)
		if err != nil {
			return false
		}
		n := 0
		ends.Each(func(o kadm.ListedOffset) {
			if o.Err == nil {
				n += int(o.Offset)
			}
		})
		return n >= 2
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}
	details, err := adm.ListTopics(ctx, orders, items)
	if err != nil {
		t.Fatal(err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, orders, items)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		topic          string
		partitions, rf int
		minInsync      string
	}{{orders, 2, 3, "3"}, {items, -1, 2, "1"}} {
		d := details[c.topic]
		if d.Err != nil {
			t.Fatalf("%s: %v", c.topic, d.Err)
		}
		if c.partitions > 0 && len(d.Partitions) != c.partitions {
			t.Errorf("%s: %d partitions, want %d", c.topic, len(d.Partitions), c.partitions)
		}
		for _, part := range d.Partitions {
			if len(part.Replicas) != c.rf {
				t.Errorf("%s partition %d: replicas %v, want %d", c.topic, part.Partition, part.Replicas, c.rf)
			}
		}
		rc, err := rcs.On(c.topic, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, cfg := range rc.Configs {
			if cfg.Key == "min.insync.replicas" && strings.HasPrefix(cfg.Source.String(), "DYNAMIC_TOPIC") {
				got = cfg.MaybeValue()
			}
		}
		if got != c.minInsync {
			t.Errorf("%s: min.insync.replicas %q set on the topic, want %s", c.topic, got, c.minInsync)
		}
	}
}
