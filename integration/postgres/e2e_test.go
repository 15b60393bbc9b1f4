package postgres_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPostgresToKafka runs the binary against a real database and broker:
// backfill (r), then c/u/d, a graceful stop, a change while stopped, and a
// restart that resumes without backfilling again.
func TestPostgresToKafka(t *testing.T) {
	e := itest.NewEnv(t, "e2e")
	e.Exec(`CREATE TABLE orders (
		id serial PRIMARY KEY,
		customer text NOT NULL,
		amount numeric(10,2) NOT NULL,
		paid boolean NOT NULL DEFAULT false,
		qty smallint,
		big bigint,
		created_at timestamp(6) NOT NULL,
		updated_at timestamptz,
		note varchar(200))`)
	e.Exec(`INSERT INTO orders (customer, amount, paid, qty, big, created_at, updated_at, note) VALUES
		('ada', 12.50, true, 2, 9007199254740993, '2024-03-01 10:00:00.123456', '2024-03-01 10:00:00.5+02', 'first'),
		('bob', -0.99, false, NULL, NULL, '1969-12-31 23:59:59', NULL, NULL)`)
	cfg := e.WriteConfig("")
	topic := e.Prefix + ".public.orders"

	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "2 backfilled rows", func() bool { return itest.TopicEnd(topic) >= 2 })
	e.Exec(`INSERT INTO orders (customer, amount, created_at) VALUES ('cy', 100, '2025-01-01 00:00:00')`)
	e.Exec(`UPDATE orders SET paid = true, note = 'paid' WHERE customer = 'bob'`)
	e.Exec(`DELETE FROM orders WHERE customer = 'ada'`)
	itest.WaitFor(t, 30*time.Second, "5 messages", func() bool { return itest.TopicEnd(topic) >= 5 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0; output:\n%s", code, p.Out)
	}

	msgs := itest.ReadTopic(t, topic)
	if len(msgs) != 5 {
		t.Fatalf("got %d messages, want 5", len(msgs))
	}
	byOp := map[string][]itest.Message{}
	for _, m := range msgs {
		op, _ := m.Payload()["op"].(string)
		byOp[op] = append(byOp[op], m)
		if m.Headers["content-type"] != "application/json" || m.Headers["tributary-op"] != op || m.Headers["tributary-event-id"] == "" {
			t.Errorf("headers %v for op %s", m.Headers, op)
		}
	}
	if len(byOp["r"]) != 2 || len(byOp["c"]) != 1 || len(byOp["u"]) != 1 || len(byOp["d"]) != 1 {
		t.Fatalf("ops: r=%d c=%d u=%d d=%d, want 2,1,1,1", len(byOp["r"]), len(byOp["c"]), len(byOp["u"]), len(byOp["d"]))
	}

	// Key: Debezium JSON with schema, named <topic>.Key.
	k := byOp["c"][0].Key
	if name := k["schema"].(map[string]any)["name"]; name != topic+".Key" {
		t.Errorf("key schema name %v, want %s.Key", name, topic)
	}
	if id := k["payload"].(map[string]any)["id"]; id != float64(3) {
		t.Errorf("key payload id %v, want 3", id)
	}

	// The backfilled 'ada' row, every type as Debezium writes it.
	var ada map[string]any
	for _, m := range byOp["r"] {
		if after := m.Payload()["after"].(map[string]any); after["customer"] == "ada" {
			ada = after
		}
	}
	if ada == nil {
		t.Fatal("no r message for ada")
	}
	want := map[string]any{
		"id": float64(1), "customer": "ada", "amount": "BOI=", // 1250 unscaled, scale 2
		"paid": true, "qty": float64(2), "big": float64(9007199254740993),
		"created_at": float64(1709287200123456), // MicroTimestamp
		"updated_at": "2024-03-01T08:00:00.500000Z", "note": "first",
	}
	for col, w := range want {
		if col == "updated_at" {
			if got, _ := ada[col].(string); !strings.HasPrefix(got, "2024-03-01T08:00:00.5") || !strings.HasSuffix(got, "Z") {
				t.Errorf("after.%s = %v, want 2024-03-01T08:00:00.5…Z", col, ada[col])
			}
			continue
		}
		if col == "big" {
			continue // float64 cannot hold it; checked on the raw bytes below
		}
		if ada[col] != w {
			t.Errorf("after.%s = %#v, want %#v", col, ada[col], w)
		}
	}
	src := byOp["r"][0].Payload()["source"].(map[string]any)
	for _, f := range []string{"table", "schema", "db", "lsn", "ts_ms", "snapshot", "connector", "name"} {
		if _, ok := src[f]; !ok {
			t.Errorf("source has no %s: %v", f, src)
		}
	}
	if src["db"] != e.DB || src["schema"] != "public" || src["table"] != "orders" || src["connector"] != "postgresql" || src["name"] != e.Prefix {
		t.Errorf("source block %v", src)
	}

	// Update and delete images.
	u := byOp["u"][0].Payload()
	if after := u["after"].(map[string]any); after["paid"] != true || after["note"] != "paid" || after["qty"] != nil {
		t.Errorf("update after %v", after)
	}
	if s := u["source"].(map[string]any); s["snapshot"] != "false" || s["lsn"] == nil || s["txId"] == nil {
		t.Errorf("streamed source block %v", s)
	}
	d := byOp["d"][0].Payload()
	if d["after"] != nil || d["before"].(map[string]any)["id"] != float64(1) {
		t.Errorf("delete payload before=%v after=%v", d["before"], d["after"])
	}

	// An independent client sees the same shape.
	if kcat, err := exec.LookPath("kcat"); err == nil {
		out, err := exec.Command(kcat, "-C", "-b", itest.KafkaAddr, "-t", topic, "-J", "-e", "-q").Output()
		if err != nil {
			t.Fatalf("kcat: %v", err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 5 {
			t.Fatalf("kcat read %d messages, want 5", len(lines))
		}
		var rec struct{ Key, Payload string }
		if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rec.Key, `"payload":{"id":`) || !strings.Contains(rec.Payload, `"before"`) {
			t.Errorf("kcat record %s", lines[0])
		}
		// kcat prints the value as a JSON string, so its quotes are escaped.
		if !strings.Contains(string(out), `\"big\":9007199254740993`) {
			t.Errorf("int64 value 9007199254740993 not found verbatim in kcat's output")
		}
	}

	// A change while stopped is streamed on restart; nothing is backfilled again.
	cpFile := filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")
	if _, err := os.Stat(cpFile); err != nil {
		t.Fatalf("no checkpoint after a graceful stop: %v", err)
	}
	e.Exec(`INSERT INTO orders (customer, amount, created_at) VALUES ('dee', 7, now())`)
	p = e.Start("run", "--config", cfg)
	itest.WaitFor(t, 30*time.Second, "the change made while stopped", func() bool { return itest.TopicEnd(topic) >= 6 })
	time.Sleep(2 * time.Second) // anything extra (a second backfill) would show up by now
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0; output:\n%s", code, p.Out)
	}
	msgs = itest.ReadTopic(t, topic)
	if len(msgs) != 6 {
		t.Fatalf("after restart: %d messages, want 6", len(msgs))
	}
	last := msgs[len(msgs)-1].Payload()
	for _, m := range msgs {
		if a, _ := m.Payload()["after"].(map[string]any); a != nil && a["customer"] == "dee" {
			last = m.Payload()
		}
	}
	if last["op"] != "c" || last["after"].(map[string]any)["customer"] != "dee" {
		t.Errorf("after restart got %v, want the create of dee", last)
	}
}
