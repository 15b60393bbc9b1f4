package avro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro/avrotest"
)

// registry is the Confluent API of the test registry (Apicurio,
// integration/services/apicurio.sh).
const registry = "http://127.0.0.1:8081/apis/ccompat/v7"

// TestAvroConfluentAgainstJSON runs two pipelines on the same PostgreSQL
// changes, one writing Avro keys and values through the registry, one the
// default JSON. Every Avro record carries Confluent's framing, its schema is
// fetched by id from the registry as a consumer does, and it decodes (with
// an independent Avro library) to the JSON pipeline's record of the same
// change, field by field. A column added mid-stream registers a second
// version of the value subject before the first record that has it; the
// key subject keeps one.
func TestAvroConfluentAgainstJSON(t *testing.T) {
	if resp, err := http.Get(registry + "/subjects"); err != nil {
		t.Fatalf("the test schema registry does not answer (make services-up starts it): %v", err)
	} else {
		resp.Body.Close()
	}
	e := itest.NewEnv(t, "avro")
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY, name text, price numeric(10,2) NOT NULL DEFAULT 1.50, amount numeric,
		at timestamptz, d date, data bytea, tags int[], flag bool, j jsonb, f float8, r real, small smallint, u uuid)`)
	e.Exec(`CREATE TABLE warm (id int PRIMARY KEY)`)

	avroCfg := e.WritePipeline(itest.PipelineConfig{})
	itest.AppendConfig(t, avroCfg, "format:\n  key: avro\n  value: avro\n  schema_registry:\n    type: confluent\n    url: "+registry+"\n")
	jsonCfg := e.WritePipeline(itest.PipelineConfig{File: "json.yaml", Checkpoint: "  path: " + e.Dir + "/checkpoints-json\n"})
	itest.EditConfig(t, jsonCfg, "name: "+e.Name+"\n", "name: "+e.Name+"-json\n")
	itest.EditConfig(t, jsonCfg, "topic_prefix: "+e.Prefix+"\n", "topic_prefix: "+e.Prefix+"_json\n")
	avroTopic, jsonTopic := e.Prefix+".public.t", e.Prefix+"_json.public.t"

	pa := e.Start("run", "--config", avroCfg)
	pj := e.Start("run", "--config", jsonCfg)
	ends := func(n int64) bool {
		return itest.TopicEnd(avroTopic) >= n && itest.TopicEnd(jsonTopic) >= n || pa.Exited() || pj.Exited()
	}
	// Both stream before the changes are made, so both see them as
	// changes (a snapshot's position fields would differ): a row of
	// another table on both topics says so.
	e.Exec(`INSERT INTO warm VALUES (1)`)
	itest.WaitFor(t, 90*time.Second, "both pipelines streaming", func() bool {
		return itest.TopicEnd(e.Prefix+".public.warm") >= 1 && itest.TopicEnd(e.Prefix+"_json.public.warm") >= 1 || pa.Exited() || pj.Exited()
	})
	e.Exec(`INSERT INTO t (id, name) VALUES (1, 'first')`)

	e.Exec(`INSERT INTO t VALUES (2, 'héllo "q" ☃', 12345678.99, -3.14159, '2024-02-29 12:34:56.789+02', '1999-12-31',
		'\x00ff10', '{1,NULL,-3}', true, '{"a": [1, "x"]}', 'NaN', -0.5, -32768, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')`)
	e.Exec(`INSERT INTO t (id, price, amount, f) VALUES (3, -0.01, 1e-20, '-Infinity'), (4, 0, 99999999999999999999.5, 1e300)`)
	e.Exec(`UPDATE t SET name = 'second', tags = '{}' WHERE id = 2`)
	e.Exec(`DELETE FROM t WHERE id = 3`)
	e.Exec(`ALTER TABLE t ADD COLUMN note text`)
	e.Exec(`INSERT INTO t (id, note) VALUES (5, 'added')`)
	e.Exec(`UPDATE t SET note = 'later' WHERE id = 4`)
	const total = 8
	itest.WaitFor(t, 90*time.Second, fmt.Sprintf("%d records on both topics", total), func() bool { return ends(total) })
	for _, p := range []*itest.Proc{pa, pj} {
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d:\n%s", code, p.Out)
		}
	}
	if strings.Contains(pa.Out.String(), "schema registry refused") {
		t.Fatalf("the registry refused a schema:\n%s", pa.Out)
	}

	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: registry})
	if err != nil {
		t.Fatal(err)
	}
	jsonRecs := map[string][]*kgo.Record{}
	for _, r := range itest.ReadRaw(t, jsonTopic) {
		var k struct {
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(r.Key, &k); err != nil {
			t.Fatal(err)
		}
		jsonRecs[string(k.Payload)] = append(jsonRecs[string(k.Payload)], r)
	}
	avroRecs := itest.ReadRaw(t, avroTopic)
	if len(avroRecs) != total {
		t.Fatalf("%d Avro records, want %d", len(avroRecs), total)
	}
	seen := map[string]int{}
	avroBytes, jsonBytes := 0, 0
	for _, r := range avroRecs {
		keyJSON, _ := decodeConfluent(t, reg, r.Key, nil)
		// The key decodes to {"id":n}, as the JSON key's payload.
		id := keyJSON.(map[string]any)["id"]
		jkey := fmt.Sprintf(`{"id":%v}`, id)
		i := seen[jkey]
		seen[jkey]++
		if i >= len(jsonRecs[jkey]) {
			t.Fatalf("Avro record %d of key %s has no JSON counterpart", i, jkey)
		}
		jr := jsonRecs[jkey][i]
		_, jkeyPayload, _ := avro.Split(jr.Key)
		decodeConfluent(t, reg, r.Key, jkeyPayload)
		_, jvalPayload, err := avro.Split(jr.Value)
		if err != nil {
			t.Fatal(err)
		}
		decodeConfluent(t, reg, r.Value, jvalPayload)
		avroBytes += len(r.Key) + len(r.Value)
		jsonBytes += len(jr.Key) + len(jr.Value)
	}
	t.Logf("%d records: Avro %d bytes, JSON %d bytes", total, avroBytes, jsonBytes)

	// Versions: the value subject has two (the column added), the key one.
	if v := versions(t, avroTopic+"-value"); !slices.Equal(v, []int{1, 2}) {
		t.Errorf("value subject versions %v, want [1 2]", v)
	}
	if v := versions(t, avroTopic+"-key"); !slices.Equal(v, []int{1}) {
		t.Errorf("key subject versions %v, want [1]", v)
	}
}

// decodeConfluent decodes a Confluent-framed record with the schema its id
// names in the registry; with payload, it compares the result with that
// JSON payload (the processing times of the envelope and the pipeline's
// name in source.name differ between the two pipelines and are left out).
func decodeConfluent(t *testing.T, reg *avro.Confluent, rec, payload []byte) (any, string) {
	t.Helper()
	id, body, err := avro.ParseConfluent(rec)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := reg.SchemaByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	decoded, s, err := avrotest.Decode(schema, body)
	if err != nil {
		t.Fatalf("%v\nschema %d: %s", err, id, schema)
	}
	if payload != nil {
		skip := func(path string) bool {
			switch path {
			case "$.ts_ms", "$.ts_us", "$.ts_ns", "$.source.name":
				return true
			}
			return false
		}
		if err := avrotest.CompareExcept(payload, s, decoded, skip); err != nil {
			t.Fatalf("Avro record (schema %d) differs from the JSON: %v\nJSON: %s", id, err, payload)
		}
	}
	return decoded, schema
}

func versions(t *testing.T, subject string) []int {
	t.Helper()
	resp, err := http.Get(registry + "/subjects/" + subject + "/versions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v []int
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("versions of %s: %v", subject, err)
	}
	return v
}
