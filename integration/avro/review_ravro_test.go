package avro_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
)

// avroJSONPair starts two pipelines on e's database, one writing Avro keys
// and values, one JSON, with extra (format lines for both, after the
// format key) and more (other top-level sections, %s the pipeline's
// distinguishing suffix) appended. awaitPairStreaming waits until both
// stream.
func avroJSONPair(t *testing.T, e *itest.Env, source, formatLines, more string) (avroPrefix, jsonPrefix string, stop func()) {
	t.Helper()
	e.Exec(`CREATE TABLE IF NOT EXISTS warm (id int PRIMARY KEY)`)
	avroCfg := e.WritePipeline(itest.PipelineConfig{Source: source})
	itest.AppendConfig(t, avroCfg, "format:\n  key: avro\n  value: avro\n"+formatLines+"  schema_registry:\n    type: confluent\n    url: "+registry+"\n"+
		strings.ReplaceAll(more, "%s", "a"))
	jsonCfg := e.WritePipeline(itest.PipelineConfig{Source: source, File: "json.yaml", Checkpoint: "  path: " + e.Dir + "/checkpoints-json\n"})
	itest.EditConfig(t, jsonCfg, "name: "+e.Name+"\n", "name: "+e.Name+"-json\n")
	itest.EditConfig(t, jsonCfg, "topic_prefix: "+e.Prefix+"\n", "topic_prefix: "+e.Prefix+"_json\n")
	if formatLines != "" {
		itest.AppendConfig(t, jsonCfg, "format:\n"+formatLines)
	}
	itest.AppendConfig(t, jsonCfg, strings.ReplaceAll(more, "%s", "j"))
	pa := e.Start("run", "--config", avroCfg)
	pj := e.Start("run", "--config", jsonCfg)
	return e.Prefix, e.Prefix + "_json", func() {
		for _, p := range []*itest.Proc{pa, pj} {
			if code := p.Stop(t); code != 0 {
				t.Fatalf("exit %d:\n%s", code, p.Out)
			}
			if strings.Contains(p.Out.String(), "refused") {
				t.Errorf("a pipeline logged a refusal:\n%s", p.Out)
			}
		}
	}
}

// awaitPairStreaming waits until both pipelines of avroJSONPair stream: a
// row written to warm reaches each side's topic.
func awaitPairStreaming(t *testing.T, e *itest.Env, ap, jp string) {
	t.Helper()
	itest.WaitFor(t, 90*time.Second, "both streaming", func() bool {
		e.Exec(`INSERT INTO warm VALUES (1) ON CONFLICT DO NOTHING`)
		return bothHold(ap, jp, "warm", 1)
	})
}

// bothHold reports whether table's topic holds at least n records on the
// Avro side (prefix ap) and on the JSON side (jp) of avroJSONPair.
func bothHold(ap, jp, table string, n int64) bool {
	return itest.TopicEnd(ap+".public."+table) >= n && itest.TopicEnd(jp+".public."+table) >= n
}

// compareTopics decodes every Avro record of avroTopic and compares it with
// the JSON record of jsonTopic that match pairs with it (same match
// string; "" leaves a record out); a JSON record whose value is a null payload must be an Avro
// record without a value.
func compareTopics(t *testing.T, avroTopic, jsonTopic string, want int, match func(r *kgo.Record, jsonSide bool, reg *avro.Confluent) string) {
	t.Helper()
	compareTopicsRead(t, itest.ReadRaw, avroTopic, jsonTopic, want, match)
}

// compareTopicsRead is compareTopics reading the topics with read.
func compareTopicsRead(t *testing.T, read func(*testing.T, string) []*kgo.Record, avroTopic, jsonTopic string, want int, match func(r *kgo.Record, jsonSide bool, reg *avro.Confluent) string) {
	t.Helper()
	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: registry})
	if err != nil {
		t.Fatal(err)
	}
	jsonRecs := map[string][]*kgo.Record{}
	for _, r := range read(t, jsonTopic) {
		if m := match(r, true, reg); m != "" {
			jsonRecs[m] = append(jsonRecs[m], r)
		}
	}
	compared := 0
	defer func() {
		if compared != want {
			t.Errorf("%s: %d Avro records compared, want %d", avroTopic, compared, want)
		}
	}()
	seen := map[string]int{}
	for _, r := range read(t, avroTopic) {
		m := match(r, false, reg)
		if m == "" {
			continue
		}
		compared++
		i := seen[m]
		seen[m]++
		if i >= len(jsonRecs[m]) {
			t.Errorf("%s: Avro record %q #%d has no JSON counterpart", avroTopic, m, i)
			continue
		}
		jr := jsonRecs[m][i]
		_, jk, err := avro.Split(jr.Key)
		if err != nil {
			t.Fatal(err)
		}
		if string(jk) == "null" {
			// AvroConverter writes no bytes for a null key.
			if r.Key != nil {
				t.Errorf("%s %q: the JSON key's payload is null, the Avro record has a key", avroTopic, m)
			}
		} else {
			decodeConfluent(t, reg, r.Key, jk)
		}
		if jr.Value == nil {
			if r.Value != nil {
				t.Errorf("%s %q: the JSON record is a tombstone, the Avro one has a value", avroTopic, m)
			}
			continue
		}
		_, jv, err := avro.Split(jr.Value)
		if err != nil {
			t.Fatal(err)
		}
		if string(jv) == "null" {
			if r.Value != nil {
				t.Errorf("%s %q: the JSON value's payload is null, the Avro record has a value", avroTopic, m)
			}
			continue
		}
		if r.Value == nil {
			t.Errorf("%s %q: the Avro record has no value, the JSON one %s", avroTopic, m, jv)
			continue
		}
		decodeConfluent(t, reg, r.Value, jv)
	}
}

func jsonPayload(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v struct{ Payload map[string]any }
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v.Payload
}

// TestReviewAvroTxMetaSchemaChangeMidTransaction: with transaction
// metadata, a source transaction that changes a table's columns between
// its changes (a column added, another's type widened), and rolls in a
// second table: every Avro change and BEGIN/END record decodes to the JSON
// pipeline's record of the same change or transaction mark.
func TestReviewAvroTxMetaSchemaChangeMidTransaction(t *testing.T) {
	e := itest.NewEnv(t, "rvavrotx")
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY, n int, name text)`)
	e.Exec(`CREATE TABLE u (id int PRIMARY KEY)`)
	ap, jp, stop := avroJSONPair(t, e, "", "  provide_transaction_metadata: true\n", "")
	awaitPairStreaming(t, e, ap, jp)
	e.Exec(`BEGIN; INSERT INTO t VALUES (1, 1, 'a'); INSERT INTO u VALUES (1);
		ALTER TABLE t ADD COLUMN note text DEFAULT 'dflt'; INSERT INTO t VALUES (2, 2, 'b', 'noted');
		ALTER TABLE t ALTER COLUMN n TYPE bigint; UPDATE t SET n = 9000000000 WHERE id = 1;
		INSERT INTO u VALUES (2); DELETE FROM t WHERE id = 2; COMMIT`)
	e.Exec(`BEGIN; ALTER TABLE t DROP COLUMN name; INSERT INTO t (id, n) VALUES (3, 3); COMMIT`)
	e.Exec(`INSERT INTO u VALUES (3)`)
	const tChanges, uChanges = 5, 3
	itest.WaitFor(t, 90*time.Second, "every change on both sides", func() bool {
		return bothHold(ap, jp, "t", tChanges) &&
			bothHold(ap, jp, "u", uChanges)
	})
	time.Sleep(2 * time.Second) // the ENDs
	stop()
	byKey := func(r *kgo.Record, jsonSide bool, reg *avro.Confluent) string {
		if jsonSide {
			return fmt.Sprint(jsonPayload(t, r.Key))
		}
		k, _ := decodeConfluent(t, reg, r.Key, nil)
		return fmt.Sprint(k)
	}
	compareTopics(t, ap+".public.t", jp+".public.t", tChanges, byKey)
	compareTopics(t, ap+".public.u", jp+".public.u", uChanges, byKey)
	// BEGIN and END share their key: matched by status and id, those of
	// the transactions of t and u (the warm-up's may be a snapshot read
	// on one side).
	ids := map[string]bool{}
	for _, topic := range []string{jp + ".public.t", jp + ".public.u"} {
		for _, r := range itest.ReadRaw(t, topic) {
			tx, _ := jsonPayload(t, r.Value)["transaction"].(map[string]any)
			// Debezium's "<xid>:<the change's LSN>": the xid names it.
			xid, _, _ := strings.Cut(fmt.Sprint(tx["id"]), ":")
			ids[xid] = true
		}
	}
	if len(ids) != 3 {
		t.Errorf("the JSON changes name transactions %v, want 3", ids)
	}
	byMark := func(r *kgo.Record, jsonSide bool, reg *avro.Confluent) string {
		var v any
		if jsonSide {
			v = jsonPayload(t, r.Value)
		} else {
			v, _ = decodeConfluent(t, reg, r.Value, nil)
		}
		m := v.(map[string]any)
		if xid, _, _ := strings.Cut(fmt.Sprint(m["id"]), ":"); !ids[xid] {
			return ""
		}
		return fmt.Sprint(m["status"], " ", m["id"])
	}
	compareTopics(t, ap+".transaction", jp+".transaction", 6, byMark)
}

// TestReviewAvroOutboxAgainstJSON: the outbox router with an envelope field,
// a header field, a text payload column, a null and a blank payload, and a
// column added to the outbox table mid-stream: every Avro record decodes
// to the JSON pipeline's record of the same event.
func TestReviewAvroOutboxAgainstJSON(t *testing.T) {
	e := itest.NewEnv(t, "rvavroob")
	e.Exec(`CREATE TABLE outbox (id uuid PRIMARY KEY, aggregatetype text NOT NULL, aggregateid text,
		type text NOT NULL, payload jsonb, at timestamptz, n numeric(6,2))`)
	// Each side routes to its own topics.
	more := "transforms:\n  outbox:\n    enabled: true\n    route_topic_replacement: '" + e.Prefix + "_%s.ev.${routedByValue}'\n" +
		"    table_fields_additional_placement: ['type:envelope:eventType', 'at:envelope', 'n:header']\n"
	// Only the outbox table: the router takes every captured table. A
	// row read by the snapshot is routed as one streamed.
	_, _, stop := avroJSONPair(t, e, "  tables: [public.outbox]\n", "", more)
	ins := func(id int, agg, aggID, payload string) {
		e.Exec(fmt.Sprintf(`INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, at, n)
			VALUES ('00000000-0000-0000-0000-%012d', '%s', %s, 'T%d', %s, '2024-01-02 03:04:05.678+00', %d.25)`, id, agg, aggID, id, payload, id))
	}
	ins(1, "order", "'1'", `'{"a": 1, "b": {"c": [1, 2]}}'`)
	ins(2, "order", "NULL", "NULL")
	ins(3, "customer", "'7'", `'""'`)
	e.Exec(`BEGIN; INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES
		('00000000-0000-0000-0000-000000000004', 'order', '4', 'T4', '[1, "x", null]');
		ALTER TABLE outbox ADD COLUMN extra int; ALTER TABLE outbox ALTER COLUMN n TYPE numeric(12,4);
		INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, n) VALUES
		('00000000-0000-0000-0000-000000000005', 'customer', '5', 'T5', '{"z": true}', 5.5); COMMIT`)
	want := map[string]int{"order": 3, "customer": 2}
	itest.WaitFor(t, 90*time.Second, "every event on both sides", func() bool {
		for route, n := range want {
			if itest.TopicEnd(e.Prefix+"_a.ev."+route) < int64(n) || itest.TopicEnd(e.Prefix+"_j.ev."+route) < int64(n) {
				return false
			}
		}
		return true
	})
	stop()
	byID := func(r *kgo.Record, jsonSide bool, reg *avro.Confluent) string {
		for _, h := range r.Headers {
			if h.Key == "id" {
				return string(h.Value)
			}
		}
		t.Fatalf("a record without the id header")
		return ""
	}
	for route, n := range want {
		compareTopics(t, e.Prefix+"_a.ev."+route, e.Prefix+"_j.ev."+route, n, byID)
	}
}
