package kafka_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestKafkaSinkSettings on the real broker: destination.topic sends every
// table to one topic (schema names and source.name then carry the
// pipeline's name); key_columns keys orders by customer_id (key schema
// too); partition_column puts each order in the partition its shard
// column names, and skips as row.skipped, with the reason, an order whose
// shard is null, negative or beyond the topic's 3 partitions. A key
// column the table does not have stops the pipeline naming it.
func TestKafkaSinkSettings(t *testing.T) {
	e := itest.NewEnv(t, "sink")
	topic := e.Prefix + ".all"
	if _, err := admin(t).CreateTopic(context.Background(), 3, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, shard int)`)
	e.Exec(`ALTER TABLE orders REPLICA IDENTITY FULL`) // a delete carries customer_id (docs/postgresql.md)
	e.Exec(`CREATE TABLE items (id int PRIMARY KEY, name text)`)
	e.Exec(`INSERT INTO orders VALUES (1, 10, 0), (2, 20, 2), (3, 30, NULL), (4, 40, -1), (5, 50, 7)`)
	e.Exec(`INSERT INTO items VALUES (1, 'a')`)
	cfg := e.WriteConfig("  key_columns:\n    public.orders: [customer_id]\n  partition_column:\n    public.orders: shard\n  client_id: it-sink\n")
	itest.EditConfig(t, cfg, "  topic_prefix: "+e.Prefix+"\n", "  topic: "+topic+"\n")

	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "3 messages", func() bool { return itest.TopicEnd(topic) >= 3 || p.Exited() })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	byTable := map[string][]itest.Message{}
	for _, m := range itest.ReadTopic(t, topic) {
		src, _ := m.Payload()["source"].(map[string]any)
		if src["name"] != e.Name {
			t.Errorf("source.name %v, want the pipeline's name %s", src["name"], e.Name)
		}
		byTable[src["table"].(string)] = append(byTable[src["table"].(string)], m)
	}
	orders, items := byTable["orders"], byTable["items"]
	if len(orders) != 2 || len(items) != 1 {
		t.Fatalf("orders %d, items %d on %s; want 2 and 1", len(orders), len(items), topic)
	}
	for _, m := range orders {
		after, _ := m.Payload()["after"].(map[string]any)
		schema, _ := m.Key["schema"].(map[string]any)
		key, _ := m.Key["payload"].(map[string]any)
		if key["customer_id"] != after["customer_id"] || len(key) != 1 || schema["name"] != e.Name+".public.orders.Key" {
			t.Errorf("order %v: key %v (schema %v), want customer_id only", after["id"], key, schema["name"])
		}
		if float64(m.Partition) != after["shard"] {
			t.Errorf("order %v with shard %v is in partition %d", after["id"], after["shard"], m.Partition)
		}
	}
	reasons := map[float64]string{}
	for _, s := range e.SkippedLines(t) {
		reasons[s.PrimaryKey["customer_id"].(float64)] = s.Reason
	}
	for id, want := range map[float64]string{30: "partition_column shard is null", 40: "is negative (-1)", 50: "is 7, out of range: topic " + topic + " has 3 partitions"} {
		if !strings.Contains(reasons[id], want) {
			t.Errorf("customer %v: skip reason %q, want %q", id, reasons[id], want)
		}
	}

	// A key column the table does not have.
	itest.EditConfig(t, cfg, "[customer_id]", "[customer]")
	e.Exec(`INSERT INTO orders VALUES (6, 60, 1)`)
	p = e.Start("run", "--config", cfg)
	select {
	case <-p.Done:
	case <-time.After(60 * time.Second):
		t.Fatalf("still running with an unknown key column:\n%s", p.Out)
	}
	if code := p.Cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(p.Out.String(), "key_columns names column customer") {
		t.Fatalf("exit %d, output:\n%s", code, p.Out)
	}
}
