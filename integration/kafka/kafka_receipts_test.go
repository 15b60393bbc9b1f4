package kafka_test

import (
	"context"
	"encoding/json"
	"hash/crc32"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/checkpoint"
)

// TestKafkaWriteReceipts: after a run, and again after a restart, the write
// receipts `status --json` shows (saved with the checkpoint) are what a
// consumer computes from the topic: per partition, in offset order, the
// record count, value bytes and CRC32C (Castagnoli) of the values,
// tombstones included. The human status shows them too, and /metrics
// while running.
func TestKafkaWriteReceipts(t *testing.T) {
	e := itest.NewEnv(t, "receipts")
	topic := e.Prefix + ".public.items"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(itest.KafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	e.Exec(`CREATE TABLE items (id int PRIMARY KEY, name text)`)
	e.Exec(`INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 200) g`)
	cfg := e.WriteConfig("  delete_mode: record_and_tombstone\n")

	run := func(want int64) {
		t.Helper()
		p := e.Start("run", "--config", cfg)
		itest.WaitFor(t, 60*time.Second, "the rows", func() bool { return itest.TopicEnd(topic) >= want || p.Exited() })
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d; output:\n%s", code, p.Out)
		}
		checkReceipts(t, cfg, topic)
	}
	run(200)
	e.Exec(`UPDATE items SET name = 'renamed' WHERE id <= 50`)
	e.Exec(`DELETE FROM items WHERE id > 190`) // 10 deletes and 10 tombstones
	run(270)

	out, err := exec.Command(itest.Binary, "status", "--config", cfg).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "RECEIPT TOPIC") || !strings.Contains(string(out), topic) {
		t.Fatalf("status: %v\n%s", err, out)
	}
}

// checkReceipts compares the receipts of `status --json` with the topic.
func checkReceipts(t *testing.T, cfg, topic string) {
	t.Helper()
	out, err := exec.Command(itest.Binary, "status", "--config", cfg, "--json").Output()
	if err != nil {
		t.Fatalf("status --json: %v", err)
	}
	var rep struct{ Receipts []checkpoint.Receipt }
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	want := map[int32]checkpoint.Receipt{}
	table := crc32.MakeTable(crc32.Castagnoli)
	for _, r := range itest.ReadRaw(t, topic) {
		w := want[r.Partition]
		w.Topic, w.Partition = r.Topic, r.Partition
		w.Records++
		w.Bytes += uint64(len(r.Value))
		w.CRC32C = crc32.Update(w.CRC32C, table, r.Value)
		w.NextOffset = r.Offset + 1
		want[r.Partition] = w
	}
	if len(rep.Receipts) != len(want) || len(want) < 2 {
		t.Fatalf("receipts for %d partitions, the topic has records in %d: %+v", len(rep.Receipts), len(want), rep.Receipts)
	}
	var total uint64
	for _, got := range rep.Receipts {
		w := want[got.Partition]
		if got.Topic != topic || got.Records != w.Records || got.Bytes != w.Bytes || got.CRC32C != w.CRC32C ||
			got.FirstOffset != 0 || got.NextOffset != w.NextOffset || len(got.Gaps) != 0 {
			t.Fatalf("receipt %+v, the consumer computed %+v", got, w)
		}
		total += got.Records
	}
	t.Logf("receipts match the topic: %d records over %d partitions", total, len(want))
}
