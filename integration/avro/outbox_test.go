package avro_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestAvroOutboxAgainstDebezium: the outbox router (transforms.outbox) with
// Avro keys and values beside Debezium's EventRouter with Apicurio's
// AvroConverter on the same outbox rows: on each route's topic the same
// key and value schemas, byte for byte, and the same decoded values; a
// null payload is a record without a value on both sides; the same
// headers the EventRouter writes (id and two column:header placements),
// byte for byte, as a Connect worker's SimpleHeaderConverter writes them.
func TestAvroOutboxAgainstDebezium(t *testing.T) {
	e := itest.NewEnv(t, "avrooutbox")
	e.Exec(`CREATE TABLE outbox (id uuid PRIMARY KEY, aggregatetype varchar(255) NOT NULL, aggregateid varchar(255) NOT NULL,
		type varchar(255) NOT NULL, payload jsonb)`)
	order, customer := e.Prefix+"-order", e.Prefix+"-customer"
	topics := map[string]int{"outbox.event." + order: 2, "outbox.event." + customer: 1}
	var names []string
	for topic := range topics {
		names = append(names, topic)
	}
	itest.CreateSinglePartitionTopics(t, names...)

	cfg := e.WritePipeline(itest.PipelineConfig{Source: "  tables: [public.outbox]\n"})
	itest.AppendConfig(t, cfg, "transforms:\n  outbox:\n    enabled: true\n    table_fields_additional_placement: ['type:header:eventType', 'aggregateid:header:agg']\n"+
		"format:\n  key: avro\n  value: avro\n  schema_registry:\n    type: confluent\n    url: "+registry+"\n")
	dbzOut := filepath.Join(e.Dir, "debezium-avro.jsonl")
	dbz := startAvroDebezium(t, e, dbzOut, "table.include.list=public\\\\.outbox\n",
		"transforms=outbox\ntransforms.outbox.type=io.debezium.transforms.outbox.EventRouter\n"+
			"transforms.outbox.table.fields.additional.placement=type:header:eventType,aggregateid:header:agg\n")
	p := e.Start("run", "--config", cfg)
	ins := func(id, agg, aggID, typ, payload string) {
		e.Exec(fmt.Sprintf(`INSERT INTO outbox VALUES ('%s', '%s', '%s', '%s', %s)`, id, agg, aggID, typ, payload))
	}
	ins("11111111-1111-1111-1111-111111111111", order, "1", "OrderCreated", `'{"a": 1, "b": [1, "x"]}'`)
	itest.WaitFor(t, 120*time.Second, "the first event on both sides", func() bool {
		return itest.TopicEnd("outbox.event."+order) >= 1 && itest.CountLines(dbzOut) >= 1 || p.Exited() || dbz.Exited()
	})
	ins("22222222-2222-2222-2222-222222222222", customer, "7", "CustomerCreated", "NULL")
	ins("33333333-3333-3333-3333-333333333333", order, "2", "OrderShipped", `'{}'`)
	itest.WaitFor(t, 120*time.Second, "every event on both sides", func() bool {
		d := readAvroHarness(t, dbzOut)
		for topic, n := range topics {
			if itest.TopicEnd(topic) < int64(n) || len(txRecords(t, d, topic)) < n {
				return false
			}
		}
		return true
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("tributary exit %d:\n%s", code, p.Out)
	}
	dbz.Stop()

	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: registry})
	if err != nil {
		t.Fatal(err)
	}
	d := readAvroHarness(t, dbzOut)
	compared := 0
	for topic, n := range topics {
		theirs := txRecords(t, d, topic)
		ours := itest.ReadRaw(t, topic)
		if len(theirs) != n || len(ours) != n {
			t.Errorf("%s: Debezium %d records, Tributary %d; want %d", topic, len(theirs), len(ours), n)
			continue
		}
		for i := range theirs {
			compared++
			wk, wks := decodeConfluent(t, reg, theirs[i].Key, nil)
			gk, gks := decodeConfluent(t, reg, ours[i].Key, nil)
			if wks != gks || fmt.Sprint(wk) != fmt.Sprint(gk) {
				t.Errorf("%s record %d: keys differ: %s\nDebezium:  %v %s\nTributary: %v %s", topic, i, sameSchema(wks, gks), wk, wks, gk, gks)
			}
			compareOutboxHeaders(t, topic, i, theirs[i].Headers, ours[i].Headers)
			if (theirs[i].Value == nil) != (ours[i].Value == nil) {
				t.Errorf("%s record %d: Debezium's value %v, Tributary's %v", topic, i, theirs[i].Value, ours[i].Value)
				continue
			}
			if theirs[i].Value == nil {
				continue
			}
			wv, wvs := decodeConfluent(t, reg, theirs[i].Value, nil)
			gv, gvs := decodeConfluent(t, reg, ours[i].Value, nil)
			if wvs != gvs {
				t.Errorf("%s record %d: value schemas differ: %s\nDebezium:  %s\nTributary: %s", topic, i, sameSchema(wvs, gvs), wvs, gvs)
			}
			if fmt.Sprint(wv) != fmt.Sprint(gv) {
				t.Errorf("%s record %d: values differ\nDebezium:  %v\nTributary: %v", topic, i, wv, gv)
			}
		}
	}
	t.Logf("%d outbox events: the same key and value schemas and values from Debezium's EventRouter+AvroConverter and Tributary", compared)
}

// compareOutboxHeaders checks that every header Debezium's record carries
// (but the connector's own __debezium.context.* ones, which Tributary does
// not write) is on Tributary's record with the same bytes, and that the
// EventRouter's were there to compare.
func compareOutboxHeaders(t *testing.T, topic string, i int, theirs []avroHeader, ours []kgo.RecordHeader) {
	t.Helper()
	got := map[string]string{}
	for _, h := range ours {
		got[h.Key] = string(h.Value)
	}
	seen := map[string]bool{}
	for _, h := range theirs {
		if strings.HasPrefix(h.Key, "__debezium.context.") {
			continue
		}
		seen[h.Key] = true
		want := ""
		if h.Value != nil {
			want = *h.Value
		}
		if g, ok := got[h.Key]; !ok || g != want {
			t.Errorf("%s record %d: header %s: Debezium %q, Tributary %q (present %v)", topic, i, h.Key, want, g, ok)
		}
	}
	for _, k := range []string{"id", "eventType", "agg"} {
		if !seen[k] {
			t.Errorf("%s record %d: Debezium's record has no %s header: %v", topic, i, k, theirs)
		}
	}
}
