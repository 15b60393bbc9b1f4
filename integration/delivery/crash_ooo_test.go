package delivery_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestOutOfOrderAcksCheckpointPrefix runs the binary against an in-process
// Kafka (kfake: the one place we use a fake, because a real broker cannot
// be told to hold back one partition's acknowledgements) with three
// brokers, one partition leader each. Produce requests to one broker are
// stalled while transactions, one row each, are committed (after one
// acknowledged row): rows on the other partitions are acknowledged out of
// order, after the first stalled one. Then the binary is SIGKILLed and
// started again with the stall lifted. The checkpoint must have been
// exactly the contiguous acknowledged prefix, which the restart shows in
// what it publishes: the first stalled row and every row after it (a
// checkpoint past the prefix loses them), and none of the rows before it
// (a checkpoint behind the prefix publishes them again). On every source:
// the prefix is the pipeline's, the positions the source's.
func TestOutOfOrderAcksCheckpointPrefix(t *testing.T) {
	itest.ForEachBackend(t, "ooo", outOfOrderAcks)
}

func outOfOrderAcks(t *testing.T, b itest.Backend) {
	e := b.Env()
	itest.CreateTables(t, b, "ledger")
	topic := b.Topic("ledger")

	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, topic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// kfake picks leaders at random; give each partition its own broker so
	// that stalling one leaves the other two acknowledging.
	for part := int32(0); part < 3; part++ {
		if err := c.MoveTopicPartition(topic, part, part); err != nil {
			t.Fatal(err)
		}
	}
	stalledNode := c.LeaderFor(topic, 0)
	var stalling atomic.Bool
	release := make(chan struct{})
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if stalling.Load() && c.CurrentNode() == stalledNode {
			c.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	defer close(release)

	cfgPath := b.Config(nil, "")
	cfg, _ := os.ReadFile(cfgPath)
	cfg = []byte(strings.Replace(string(cfg), itest.KafkaAddr, strings.Join(c.ListenAddrs(), ","), 1))
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	insert := func(k int) {
		itest.MustExecOn(t, b, fmt.Sprintf(`INSERT INTO ledger (k, seq, v) VALUES (%d, %d, 'x')`, k, k))
	}

	p := e.Start("run", "--config", cfgPath)
	insert(1)
	p.WaitFor(t, 60*time.Second, "key 1", func() bool { return len(producersIn(t, c.ListenAddrs(), topic)[1]) > 0 })
	stalling.Store(true)
	const n = 30
	for k := 2; k <= n; k++ {
		insert(k)
	}

	// Wait until every unstalled row is acknowledged and checkpointed.
	var acked map[int][]int64
	prev := -1
	p.WaitFor(t, 30*time.Second, "the unstalled partitions", func() bool {
		acked = producersIn(t, c.ListenAddrs(), topic)
		stable := len(acked) > 1 && len(acked) == prev
		prev = len(acked)
		time.Sleep(500 * time.Millisecond)
		return stable
	})
	first := 0
	for k := 1; k <= n; k++ {
		if len(acked[k]) == 0 {
			first = k
			break
		}
	}
	later := 0
	for k := first + 1; k <= n; k++ {
		if len(acked[k]) > 0 {
			later++
		}
	}
	if first < 2 || later == 0 {
		t.Fatalf("the stalled partition got key %d first and %d later keys were acknowledged: nothing out of order to check", first, later)
	}
	time.Sleep(2 * time.Second) // two checkpoint intervals
	p.Kill()
	oldPIDs := map[int64]bool{}
	for _, pids := range acked {
		for _, pid := range pids {
			oldPIDs[pid] = true
		}
	}

	// Restart without the stall; a row committed after the restart, once
	// published, tells that everything before it is handed over (commit
	// order), and SIGTERM flushes it.
	stalling.Store(false)
	p = e.Start("run", "--config", cfgPath)
	insert(n + 1)
	var after map[int][]int64
	p.WaitFor(t, 60*time.Second, fmt.Sprintf("key %d", n+1), func() bool {
		after = producersIn(t, c.ListenAddrs(), topic)
		return len(after[n+1]) > 0
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	after = producersIn(t, c.ListenAddrs(), topic)
	republished := func(k int) bool {
		for _, pid := range after[k] {
			if !oldPIDs[pid] {
				return true
			}
		}
		return false
	}
	var again, lost []int
	for k := 1; k <= n; k++ {
		switch {
		case k < first && republished(k):
			again = append(again, k)
		case k >= first && len(acked[k]) == 0 && !republished(k):
			lost = append(lost, k)
		}
	}
	t.Logf("%s: stalled broker %d: first unacknowledged key %d, %d later keys acknowledged out of order; the restart published again keys before it %v, lost %v",
		b.Kind(), stalledNode, first, later, again, lost)
	if len(lost) > 0 {
		t.Errorf("keys %v (from the first unacknowledged key %d on) were never published: the checkpoint passed them", lost, first)
	}
	if len(again) > 0 {
		t.Errorf("the restart published keys %v again, before the first unacknowledged key %d: the checkpoint was behind the acknowledged prefix", again, first)
	}
}

// producersIn returns, per ledger key present in topic on the kfake
// cluster, the producer ids that wrote it (one per process).
func producersIn(t *testing.T, addrs []string, topic string) map[int][]int64 {
	t.Helper()
	keys := map[int][]int64{}
	itest.EachRawRecordWithin(t, topic, 10*time.Second, []kgo.Opt{kgo.SeedBrokers(addrs...)}, func(r *kgo.Record) {
		var key struct{ Payload struct{ K int } }
		if json.Unmarshal(r.Key, &key) == nil {
			keys[key.Payload.K] = append(keys[key.Payload.K], r.ProducerID)
		}
	})
	return keys
}
