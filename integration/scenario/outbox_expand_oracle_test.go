package scenario_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// The outbox router's table_expand_json_payload side by side with
// Debezium's EventRouter with table.expand.json.payload=true on the same
// outbox rows: payloads of every JSON shape (nested objects, arrays of
// objects and of arrays, int32/int64/float64 numbers, booleans, nulls,
// empty objects and arrays, strings with escapes), and payloads EventRouter
// leaves as strings (invalid JSON, text that is not JSON, arrays of mixed
// types or of nulls only); on each route's topic the same records, key,
// value and headers byte for byte.

// expandEvent is one outbox row: its route-by value and its payload, as
// the JSON text (nil: a NULL payload).
type expandEvent struct {
	route   string
	payload *string
}

func jsonText(s string) *string { return &s }

// expandSource is what the comparison needs of a database.
type expandSource struct {
	exec   func(sql string)
	create string // CREATE TABLE …, %s the table
	quote  func(s string) string
	// debezium starts Debezium on the table with extra properties.
	debezium func(out string, max int, table string, extra []string) *itest.DebeziumProc
	pipeline func(table, top string) string
	start    func(args ...string) *itest.Proc
}

// expandPayloads are the payloads every run compares, on the route order.
var expandPayloads = []string{
	`{"a": 1}`,
	`{"customer": {"name": "Jo \"Q\" \\ \u00fcn\u00ef \ud83d\ude00\n\t\u0001 </x>", "address": {"city": "Oslo", "zip": null}}, "total": 12.5}`,
	`{"items": [{"sku": "A", "qty": 2, "price": 9.99}, {"sku": "B", "qty": 1, "price": 100.0}], "tags": ["x", "y"], "matrix": [[1, 2], [3]], "aa": [[{"k": {"v": 1}}]]}`,
	`{"i": 2147483647, "l": 2147483648, "neg": -9223372036854775808, "f": 0.001, "big": 12345678.9, "small": 1.5e-7, "nz": -0.0, "zero": 0, "e": 2.5E3, "negf": -3.25}`,
	`{"t": true, "f": false, "n": null, "arr": [1, null, 3], "sarr": ["a", null]}`,
	`{"eo": {}, "ea": [], "s": ""}`,
	`{}`,
	`{"rows": [{"a": 1}, {"a": 2, "b": true}], "same": [{"a": 1}, null, {"a": 2}]}`,
	`{"a": {"b": {"c": [{"d": {"e": 1}}]}}}`,
	// EventRouter keeps these as strings: its inference fails.
	`{"m": [1, "x"]}`,
	`{"nn": [null]}`,
	`{"ml": [1, 3000000000]}`,
	`{"mf": [1, 2.5]}`,
}

func runExpandOracle(t *testing.T, src expandSource, prefix string, events []expandEvent, tributary string, debezium []string) {
	t.Helper()
	table := "outbox"
	src.exec(fmt.Sprintf(src.create, table))
	counts := map[string]int{}
	for _, ev := range events {
		counts["outbox.event."+prefix+"-"+ev.route]++
	}
	var names []string
	for topic := range counts {
		names = append(names, topic)
	}
	itest.CreateSinglePartitionTopics(t, names...)
	ins := func(i int) {
		ev := events[i]
		payload := "NULL"
		if ev.payload != nil {
			payload = src.quote(*ev.payload)
		}
		src.exec(fmt.Sprintf(`INSERT INTO %s VALUES ('e%03d', '%s-%s', 'k%d', 'Created', %s)`, table, i, prefix, ev.route, i%3, payload))
	}
	ins(0) // read by the snapshot
	out := filepath.Join(t.TempDir(), "debezium.jsonl")
	dbz := src.debezium(out, len(events), table, append([]string{"transforms=outbox",
		"transforms.outbox.type=io.debezium.transforms.outbox.EventRouter",
		"transforms.outbox.table.expand.json.payload=true"}, debezium...))
	p := src.start("run", "--config", src.pipeline(table, "transforms:\n  outbox:\n    enabled: true\n    table_expand_json_payload: true\n"+tributary))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tributary output:\n%s\ndebezium lines: %d", p.Out, itest.CountLines(out))
		}
	})
	first := "outbox.event." + prefix + "-" + events[0].route
	itest.WaitFor(t, 120*time.Second, "the snapshot row on both sides", func() bool {
		if dbz.Exited() {
			t.Fatalf("debezium exited early:\n%s", dbz.Out)
		}
		return itest.CountLines(out) >= 1 && itest.TopicEnd(first) >= 1
	})
	for i := 1; i < len(events); i++ {
		ins(i)
	}
	itest.WaitFor(t, 180*time.Second, "every event on both sides", func() bool {
		written := debeziumWritten(out)
		for topic, n := range counts {
			if written[topic] < n || itest.TopicEnd(topic) < int64(n) {
				return false
			}
		}
		return true
	})
	if code := p.Stop(t); code != 0 {
		t.Errorf("tributary exit code %d after SIGTERM; output:\n%s", code, p.Out)
	}
	dbz.Stop()
	d := readDebeziumRaw(t, out)
	compared, expanded := 0, 0
	for topic, n := range counts {
		ds, ts := d[topic], readTopicBytes(t, topic)
		if len(ds) != n || len(ts) != n {
			t.Errorf("%s: Debezium %d records, Tributary %d; want %d", topic, len(ds), len(ts), n)
		}
		for i := 0; i < len(ds) && i < len(ts); i++ {
			compared++
			v := ts[i].value
			if bytes.Contains(v, []byte(`"name":"payload"`)) || len(v) > 0 && v[0] == '{' && !bytes.HasPrefix(v, []byte(`{"schema"`)) {
				expanded++
			}
			if !bytes.Equal(ds[i].key, ts[i].key) || !bytes.Equal(ds[i].value, ts[i].value) || (ds[i].value == nil) != (ts[i].value == nil) {
				t.Errorf("%s record %d differs:\n  debezium:  %s\n  tributary: %s", topic, i, ds[i], ts[i])
			}
			for k, v := range ds[i].headers {
				if strings.HasPrefix(k, "__debezium.context.") {
					continue // the connector's context, which Tributary does not write
				}
				if got, ok := ts[i].headers[k]; !ok || got != v {
					t.Errorf("%s record %d: header %s: Debezium %q, Tributary %q (present %v)", topic, i, k, v, got, ok)
				}
			}
		}
	}
	if expanded == 0 {
		t.Errorf("no record has an expanded payload")
	}
	if !strings.Contains(p.Out.String(), "the outbox payload is not expanded") {
		t.Errorf("no warning for the payloads left as strings; output:\n%s", p.Out)
	}
	t.Logf("compared %d records byte for byte", compared)
}

func orderEvents(payloads []string) []expandEvent {
	var evs []expandEvent
	for _, s := range payloads {
		evs = append(evs, expandEvent{route: "order", payload: jsonText(s)})
	}
	return append(evs, expandEvent{route: "order"}, expandEvent{route: "customer", payload: jsonText(`{"a": 1}`)})
}

func pgExpandSource(t *testing.T, e *itest.Env, payloadType string) expandSource {
	return expandSource{
		exec: func(sql string) { e.Exec(sql) },
		create: `CREATE TABLE %s (id text PRIMARY KEY, aggregatetype varchar(255) NOT NULL, aggregateid varchar(255) NOT NULL,
			type varchar(255) NOT NULL, payload ` + payloadType + `)`,
		quote: func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" },
		debezium: func(out string, max int, table string, extra []string) *itest.DebeziumProc {
			extra = append(extra, "table.include.list=public\\\\."+table)
			return itest.StartDebezium(t, e, out, max, strings.Join(extra, "\n")+"\n")
		},
		pipeline: func(table, top string) string {
			return e.WritePipeline(itest.PipelineConfig{Source: "  tables: [public." + table + "]\n",
				Checkpoint: "  path: " + filepath.Join(e.Dir, "checkpoints") + "\n" + top})
		},
		start: e.Start,
	}
}

// TestOutboxExpandOraclePostgresJSONB: a jsonb payload (PostgreSQL's
// normalized text: keys ordered, numbers as numeric prints them), with
// schemas.
func TestOutboxExpandOraclePostgresJSONB(t *testing.T) {
	e := itest.NewEnv(t, "outboxexpjb")
	runExpandOracle(t, pgExpandSource(t, e, "jsonb"), e.Prefix, orderEvents(expandPayloads), "", nil)
}

// TestOutboxExpandOraclePostgresText: a text payload, as written, without
// schemas; also text that is not JSON, invalid JSON, JSON after a space,
// trailing text after the object, a repeated key, the empty string, and
// keys that are empty or hold dots.
func TestOutboxExpandOraclePostgresText(t *testing.T) {
	e := itest.NewEnv(t, "outboxexptx")
	payloads := append(slices.Clone(expandPayloads), `{"a": `, `not json`, ` {"a": 1}`, `{"a": 1} trailing`,
		`{"d": 1, "x": true, "d": "two"}`, ``, `{"deep":{"k":[{"z":1,"y":[true]}]},"u":"\u00e9\u2028"}`,
		`{"a.b": {"c": 1}, "x-y": [1], "n": 1.0, "big": 1e300, "tiny": 4.9e-324}`, `{"": {"": 1}}`, `{"": null, "k": 1}`)
	top := "format:\n  schemas: false\n"
	src := pgExpandSource(t, e, "text")
	pipeline := src.pipeline
	src.pipeline = func(table, t string) string { return pipeline(table, t+top) }
	runExpandOracle(t, src, e.Prefix, orderEvents(payloads), "", []string{"converter.schemas.enable=false"})
}

// TestOutboxExpandOracleMySQL: MariaDB's JSON column (its text as
// written), with schemas, and an envelope field: the value's schema is
// then a struct named after the route-by value of the first event with
// the same payload schema (the customer event shares the order events'
// {"a": 1} schema).
func TestOutboxExpandOracleMySQL(t *testing.T) {
	e := itest.NewMyEnv(t, "outboxexpmy")
	src := expandSource{
		exec: func(sql string) { e.Exec(sql) },
		create: `CREATE TABLE %s (id VARCHAR(36) PRIMARY KEY, aggregatetype VARCHAR(255) NOT NULL, aggregateid VARCHAR(255) NOT NULL,
			type VARCHAR(255) NOT NULL, payload JSON) DEFAULT CHARSET utf8mb4`,
		quote: func(s string) string {
			return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
		},
		debezium: func(out string, max int, _ string, extra []string) *itest.DebeziumProc {
			return itest.StartMariaDBDebezium(t, e, out, max, strings.Join(extra, "\n")+"\n")
		},
		pipeline: func(table, top string) string {
			return e.Env.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: e.URL(), Source: "  tables: [" + e.DB + "." + table + "]\n",
				Checkpoint: "  path: " + filepath.Join(e.Dir, "checkpoints") + "\n" + top})
		},
		start: e.Env.Start,
	}
	runExpandOracle(t, src, e.Prefix, orderEvents(expandPayloads),
		"    table_fields_additional_placement: ['type:envelope:eventType', 'type:header:eventType']\n",
		[]string{"transforms.outbox.table.fields.additional.placement=type:envelope:eventType,type:header:eventType"})
}
