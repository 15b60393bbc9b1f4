package scenario_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// The outbox router (docs/configuration.md, "transforms.outbox") side by
// side with Debezium's io.debezium.transforms.outbox.EventRouter on the
// same outbox rows: the same topics (outbox.event.<aggregatetype>), and
// each topic's records equal byte for byte (key and value, and every
// header the EventRouter writes: "id" and the column:header placements, as
// a Connect worker's SimpleHeaderConverter writes them; not the
// connector's __debezium.context.* headers); an update and a delete
// publish nothing on either side. The headers are also checked
// against the rows.

// outboxSource is what the outbox comparison needs of a database.
type outboxSource struct {
	exec   func(sql string)
	create string // CREATE TABLE outbox …, %s the table
	// insert is an INSERT of one event: %s the table, then id,
	// aggregatetype, aggregateid, type and the payload (SQL text).
	insert   string
	debezium func(out string, max int, table string, extra []string) *itest.DebeziumProc
	pipeline func(table, top string) string
	start    func(args ...string) *itest.Proc
}

type outboxCase struct {
	tributary string   // the outbox section's lines
	debezium  []string // transforms.* properties
	// headers are, per event id, the headers besides id that its record
	// carries.
	headers map[string]map[string]string
	// firstValue is part of the value of the first order event.
	firstValue func(prefix string) string
}

func runOutboxOracle(t *testing.T, src outboxSource, prefix string, c outboxCase) {
	t.Helper()
	table := "outbox"
	src.exec(fmt.Sprintf(src.create, table))
	order, customer := prefix+"-order", prefix+"-customer"
	ins := func(id, agg, aggID, typ, payload string) {
		src.exec(fmt.Sprintf(src.insert, table, id, agg, aggID, typ, payload))
	}
	const u1, u2, u3, u4 = "11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222",
		"33333333-3333-3333-3333-333333333333", "44444444-4444-4444-4444-444444444444"
	ins(u1, order, "1", "OrderCreated", `'{"a": 1}'`) // read by the snapshot
	topics := map[string]int{"outbox.event." + order: 3, "outbox.event." + customer: 1}
	var names []string
	for topic := range topics {
		names = append(names, topic)
	}
	itest.CreateSinglePartitionTopics(t, names...)

	out := filepath.Join(t.TempDir(), "debezium.jsonl")
	dbz := src.debezium(out, 4, table, c.debezium)
	p := src.start("run", "--config", src.pipeline(table, "transforms:\n  outbox:\n    enabled: true\n"+c.tributary))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tributary output:\n%s\ndebezium lines: %d", p.Out, itest.CountLines(out))
		}
	})
	itest.WaitFor(t, 120*time.Second, "the snapshot row on both sides", func() bool {
		if dbz.Exited() {
			t.Fatalf("debezium exited early:\n%s", dbz.Out)
		}
		return itest.CountLines(out) >= 1 && itest.TopicEnd("outbox.event."+order) >= 1
	})
	ins(u2, order, "1", "OrderShipped", `'{"b": [1, 2], "s": "x"}'`)
	ins(u3, customer, "7", "CustomerCreated", "NULL")
	src.exec(fmt.Sprintf(`UPDATE %s SET type = 'Changed' WHERE id = '%s'`, table, u2)) // dropped with a warning
	src.exec(fmt.Sprintf(`DELETE FROM %s WHERE id = '%s'`, table, u1))                 // dropped
	ins(u4, order, "2", "OrderCreated", `'{}'`)
	itest.WaitFor(t, 180*time.Second, "every event on both sides", func() bool {
		written := debeziumWritten(out)
		for topic, n := range topics {
			if written[topic] < n || itest.TopicEnd(topic) < int64(n) {
				return false
			}
		}
		return true
	})
	// Nothing more comes: the update and the delete are not events.
	time.Sleep(2 * time.Second)
	if code := p.Stop(t); code != 0 {
		t.Errorf("tributary exit code %d after SIGTERM; output:\n%s", code, p.Out)
	}
	if !strings.Contains(p.Out.String(), "an update of an outbox table is not an event") {
		t.Errorf("no warning for the update; output:\n%s", p.Out)
	}
	dbz.Stop()
	d := readDebeziumRaw(t, out)
	if len(d) != len(topics) {
		t.Errorf("Debezium wrote to %d topics, want %v", len(d), names)
	}
	ids := map[string][]string{"outbox.event." + order: {u1, u2, u4}, "outbox.event." + customer: {u3}}
	compared := 0
	for topic, n := range topics {
		ds, ts := d[topic], readTopicBytes(t, topic)
		if len(ds) != n || len(ts) != n {
			t.Errorf("%s: Debezium %d records, Tributary %d; want %d", topic, len(ds), len(ts), n)
		}
		for i := 0; i < len(ds) && i < len(ts); i++ {
			compared++
			if !bytes.Equal(ds[i].key, ts[i].key) || !bytes.Equal(ds[i].value, ts[i].value) || (ds[i].value == nil) != (ts[i].value == nil) {
				t.Errorf("%s record %d differs:\n  debezium:  %s\n  tributary: %s", topic, i, ds[i], ts[i])
			}
		}
		for i := 0; i < len(ds) && i < len(ts); i++ {
			if _, ok := ds[i].headers["id"]; !ok {
				t.Errorf("%s record %d: Debezium's record has no id header (the harness did not record headers?): %v", topic, i, ds[i].headers)
			}
			for k, v := range ds[i].headers {
				if strings.HasPrefix(k, "__debezium.context.") {
					// The connector's context (extended.headers.enabled,
					// on by default), which Tributary does not write.
					continue
				}
				if got, ok := ts[i].headers[k]; !ok || got != v {
					t.Errorf("%s record %d: header %s: Debezium %q, Tributary %q (present %v)", topic, i, k, v, got, ok)
				}
			}
		}
		for i := 0; i < len(ts) && i < len(ids[topic]); i++ {
			id := ids[topic][i]
			if got := ts[i].headers["id"]; got != id {
				t.Errorf("%s record %d: header id %q, want %q", topic, i, got, id)
			}
			for k, v := range c.headers[id] {
				if ts[i].headers[k] != v {
					t.Errorf("%s record %d: header %s %q, want %q", topic, i, k, ts[i].headers[k], v)
				}
			}
		}
	}
	if c.firstValue != nil {
		ts := readTopicBytes(t, "outbox.event."+order)
		if want := c.firstValue(prefix); len(ts) == 0 || !bytes.Contains(ts[0].value, []byte(want)) {
			t.Errorf("the first order event's value lacks %s", want)
		}
	}
	t.Logf("compared %d records byte for byte", compared)
}

// TestOutboxOraclePostgres: the router's defaults (a uuid event id, a
// jsonb payload, a null payload).
func TestOutboxOraclePostgres(t *testing.T) {
	e := itest.NewEnv(t, "outboxpg")
	runOutboxOracle(t, outboxSource{
		exec: func(sql string) { e.Exec(sql) },
		create: `CREATE TABLE %s (id uuid PRIMARY KEY, aggregatetype varchar(255) NOT NULL, aggregateid varchar(255) NOT NULL,
			type varchar(255) NOT NULL, payload jsonb)`,
		insert: `INSERT INTO %s VALUES ('%s', '%s', '%s', '%s', %s)`,
		debezium: func(out string, max int, table string, extra []string) *itest.DebeziumProc {
			extra = append(extra, "table.include.list=public\\\\."+table)
			return itest.StartDebezium(t, e, out, max, strings.Join(extra, "\n")+"\n")
		},
		pipeline: func(table, top string) string {
			return e.WritePipeline(itest.PipelineConfig{Source: "  tables: [public." + table + "]\n",
				Checkpoint: "  path: " + filepath.Join(e.Dir, "checkpoints") + "\n" + top})
		},
		start: e.Start,
	}, e.Prefix, outboxCase{
		debezium: []string{"transforms=outbox", "transforms.outbox.type=io.debezium.transforms.outbox.EventRouter"},
	})
}

// TestOutboxOracleMySQL: MariaDB, with the event type as a header and as
// a value field under aliases, and the aggregate id in the value too.
func TestOutboxOracleMySQL(t *testing.T) {
	e := itest.NewMyEnv(t, "outboxmy")
	runOutboxOracle(t, outboxSource{
		exec: func(sql string) { e.Exec(sql) },
		create: `CREATE TABLE %s (id VARCHAR(36) PRIMARY KEY, aggregatetype VARCHAR(255) NOT NULL, aggregateid VARCHAR(255) NOT NULL,
			type VARCHAR(255) NOT NULL, payload JSON)`,
		insert: `INSERT INTO %s VALUES ('%s', '%s', '%s', '%s', %s)`,
		debezium: func(out string, max int, _ string, extra []string) *itest.DebeziumProc {
			return itest.StartMariaDBDebezium(t, e, out, max, strings.Join(extra, "\n")+"\n")
		},
		pipeline: func(table, top string) string {
			return e.Env.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: e.URL(), Source: "  tables: [" + e.DB + "." + table + "]\n",
				Checkpoint: "  path: " + filepath.Join(e.Dir, "checkpoints") + "\n" + top})
		},
		start: e.Env.Start,
	}, e.Prefix, outboxCase{
		tributary: "    table_fields_additional_placement: ['type:header:eventType', 'type:envelope:eventType', 'aggregateid:envelope']\n",
		debezium: []string{"transforms=outbox", "transforms.outbox.type=io.debezium.transforms.outbox.EventRouter",
			"transforms.outbox.table.fields.additional.placement=type:header:eventType,type:envelope:eventType,aggregateid:envelope"},
		// EventRouter names the value after the outbox table and the
		// route-by value.
		firstValue: func(prefix string) string {
			return `"name":"` + prefix + "." + e.DB + ".outbox." + prefix + `-order.Value"},"payload":{"payload":"{\"a\": 1}","eventType":"OrderCreated","aggregateid":"1"}}`
		},
		headers: map[string]map[string]string{
			"11111111-1111-1111-1111-111111111111": {"eventType": "OrderCreated"},
			"22222222-2222-2222-2222-222222222222": {"eventType": "OrderShipped"},
			"33333333-3333-3333-3333-333333333333": {"eventType": "CustomerCreated"},
		},
	})
}

// TestOutboxUpdateFatal: with table_op_invalid_behavior fatal an update of
// the outbox table stops the pipeline, saying why, after the events before
// it are published.
func TestOutboxUpdateFatal(t *testing.T) {
	e := itest.NewEnv(t, "outboxfatal")
	e.Exec(`CREATE TABLE outbox (id text PRIMARY KEY, aggregatetype text NOT NULL, aggregateid text NOT NULL, payload text)`)
	topic := "outbox.event." + e.Prefix + "-a"
	itest.CreateSinglePartitionTopics(t, topic)
	cfg := e.WritePipeline(itest.PipelineConfig{Source: "  tables: [public.outbox]\n",
		Checkpoint: "  path: " + filepath.Join(e.Dir, "checkpoints") + "\n" +
			"transforms:\n  outbox:\n    enabled: true\n    table_op_invalid_behavior: fatal\n"})
	p := e.Start("run", "--config", cfg)
	e.Exec(fmt.Sprintf(`INSERT INTO outbox VALUES ('e1', '%s-a', 'k', 'one')`, e.Prefix))
	itest.WaitOrDump(t, p, 60*time.Second, "the event", func() bool { return itest.TopicEnd(topic) >= 1 })
	e.Exec(`UPDATE outbox SET payload = 'two' WHERE id = 'e1'`)
	itest.WaitOrDump(t, p, 60*time.Second, "the stop", func() bool {
		return strings.Contains(p.Out.String(), "table_op_invalid_behavior: fatal")
	})
	itest.WaitFor(t, 30*time.Second, "the process to exit", p.Exited)
	if !strings.Contains(p.Out.String(), "until table_op_invalid_behavior is warn or error") {
		t.Errorf("the error gives no fix:\n%s", p.Out)
	}
	if n := itest.TopicEnd(topic); n != 1 {
		t.Errorf("%d records on %s, want the insert's alone", n, topic)
	}
}
