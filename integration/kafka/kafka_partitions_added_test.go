package kafka_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestKafkaPartitionColumnPartitionsAdded: partitions are added to a topic
// while a pipeline with destination.partition_column writes it. A row whose column names a new partition goes to that
// partition, as docs/configuration.md promises: it is neither skipped as
// out of range (a partition count cached from before) nor sent where its
// key hashes (franz-go learns of added partitions only at its next
// metadata refresh, up to 5 minutes later, and its partitioner sees the
// old count meanwhile).
func TestKafkaPartitionColumnPartitionsAdded(t *testing.T) {
	e := itest.NewEnv(t, "addparts")
	topic := e.Prefix + ".public.items"
	ctx, adm := plainAdmin(t, 60*time.Second)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	e.Exec(`CREATE TABLE items (id int PRIMARY KEY, shard int NOT NULL)`)
	e.Exec(`INSERT INTO items SELECT g, g % 2 FROM generate_series(1, 20) g`)
	p := e.Start("run", "--config", e.WriteConfig("  partition_column:\n    public.items: shard\n"))
	itest.WaitOrDump(t, p, 60*time.Second, "the rows for 2 partitions", func() bool { return itest.TopicEnd(topic) >= 20 })

	// Streaming goes on (rows on the old partitions), then partitions 2
	// and 3 appear and rows name them at once.
	e.Exec(`INSERT INTO items SELECT g, g % 2 FROM generate_series(21, 40) g`)
	itest.WaitOrDump(t, p, 30*time.Second, "rows 21-40", func() bool { return itest.TopicEnd(topic) >= 40 })
	resp, err := adm.UpdatePartitions(ctx, 4, topic)
	if err == nil {
		_, err = resp.On(topic, nil)
	}
	if err != nil {
		t.Fatalf("add partitions: %v", err)
	}
	e.Exec(`INSERT INTO items SELECT g, g % 4 FROM generate_series(41, 80) g`)
	itest.WaitOrDump(t, p, 30*time.Second, "rows 41-80", func() bool { return itest.TopicEnd(topic) >= 80 || len(e.SkippedLines(t)) > 0 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	if s := e.SkippedLines(t); len(s) > 0 {
		t.Errorf("%d rows skipped, first: %s (%v)", len(s), s[0].Reason, s[0].PrimaryKey)
	}
	seen := map[int]bool{}
	var wrong []string
	for _, m := range itest.ReadTopic(t, topic) {
		id, _ := strconv.Atoi(fmt.Sprint(m.Key["payload"].(map[string]any)["id"]))
		seen[id] = true
		shard, _ := strconv.Atoi(fmt.Sprint(m.Payload()["after"].(map[string]any)["shard"]))
		if int(m.Partition) != shard {
			wrong = append(wrong, fmt.Sprintf("row %d (shard %d) in partition %d", id, shard, m.Partition))
		}
	}
	if len(wrong) > 0 {
		t.Errorf("%d rows not in the partition their column names: %v", len(wrong), wrong)
	}
	for id := 1; id <= 80; id++ {
		if !seen[id] {
			t.Errorf("row %d is not on the topic", id)
		}
	}
}
