package avro_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestAvroOutboxExpandEdgesAgainstDebezium: more payloads for
// table_expand_json_payload with Avro values beside Debezium's
// EventRouter with table.expand.json.payload=true and Apicurio's
// AvroConverter, on a PostgreSQL text column and a MariaDB JSON column
// (both keep the payload's text as written): number literals (-0, -0.0, 1e300, 1.5E-7, the int32
// and int64 bounds), booleans, strings with non-ASCII characters and
// escapes, an empty object inside an object and inside an array, an
// array of objects whose first has a null member (the later object's
// fields the same and more, in order: Debezium merges differing elements'
// schemas in the order of a HashSet, which differs between JVMs, and only
// such arrays come out in one order), two payloads each with an unnamed object
// (their records each ConnectDefault, the converter counting per schema),
// a repeated key (the later value kept), keys that are Avro's primitive
// type names holding objects. Each record the same key and value schema
// text, the same decoded values and headers, each value subject the
// value schemas of Debezium's records in order.
func TestAvroOutboxExpandEdgesAgainstDebezium(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		e, r := pgExpandRun(t, "avroobedge", "outbox_text", "payload text", nil)
		outboxEdgeRows(t, e, &r, func(sql string) { e.Exec(sql) }, func(p string) string { return p })
	})
	t.Run("mariadb", func(t *testing.T) {
		e := itest.NewMyEnv(t, "avroobedgemy")
		e.Exec(`CREATE TABLE outbox_text (id varchar(36) PRIMARY KEY, aggregatetype varchar(255) NOT NULL, aggregateid varchar(255) NOT NULL,
			type varchar(255) NOT NULL, payload json)`)
		r := outboxRun{env: e.Env, cfg: e.WriteConfig(""), debezium: func(props string) *harnessProc {
			return runAvroHarness(t, e.Env, "avro-mariadb", itest.MariaDBDebeziumProps(e, avroConverterProps(e.DB), props),
				filepath.Join(e.Dir, "debezium-avro.jsonl"))
		}}
		// A MariaDB string literal reads a backslash as an escape.
		outboxEdgeRows(t, e.Env, &r, func(sql string) { e.Exec(sql) }, func(p string) string { return strings.ReplaceAll(p, `\`, `\\`) })
	})
}

// outboxEdgeRows runs r on the payloads of
// TestAvroOutboxExpandEdgesAgainstDebezium, inserted into outbox_text by
// exec, each payload quoted for the database's string literal by lit.
func outboxEdgeRows(t *testing.T, e *itest.Env, r *outboxRun, exec func(sql string), lit func(string) string) {
	route := strings.ReplaceAll(e.Prefix, "-", "_") + "_edge"
	topic := "outbox.event." + route
	payloads := []string{
		`{"n": -0, "d": -0.0, "e": 1e300, "f": 1.5E-7, "i": 2147483647, "j": 2147483648, "k": -2147483649, "l": -2147483648, "z": 0.0, "t": true, "u": false}`,
		`{"s": "üñí € 😀 \"q\" \\ \n \u0000x", "nested": {"empty": {}}, "arr": [{}], "objs": [{"a": "y", "b": null}, {"a": "x", "b": 1}], "bools": [true, null, false]}`,
		`{"a": [[{"x": 1}]]}`,
		`{"b": [[{"y": "s"}]]}`,
		`{"a": 1, "a": "x"}`,
		`{"payload": {"payload": {"x": 1}}}`,
		`{"int": {"x": 1}, "string": {"y": 2}, "null": {"z": 3}}`,
	}
	n := 0
	ins := func(payload string) {
		n++
		exec(fmt.Sprintf(`INSERT INTO outbox_text VALUES ('00000000-0000-0000-0000-%012d', '%s', '%d', 'T%d', '%s')`, n, route, n, n, lit(payload)))
	}
	r.expand, r.subjectsToo = true, true
	r.topics = map[string]int{topic: len(payloads)}
	r.first = func() string {
		ins(payloads[0])
		return topic
	}
	r.rest = func() {
		for _, p := range payloads[1:] {
			ins(p)
		}
	}
	outboxAgainstDebezium(t, *r)
}

// TestAvroOutboxExpandDashRouteAgainstDebezium: a route value that is not
// an Avro name (it holds '-'), with the payload expanded, as the whole
// value and beside a column:envelope field (whose envelope record is named
// after the route value), against Debezium's EventRouter and AvroConverter.
func TestAvroOutboxExpandDashRouteAgainstDebezium(t *testing.T) {
	for _, tc := range []struct {
		label     string
		placement []string
	}{
		{"avroobdash", nil},
		{"avroobdashenv", []string{"type:envelope:eventType", "aggregateid:header:agg"}},
	} {
		t.Run(tc.label, func(t *testing.T) {
			if tc.placement != nil {
				t.Skip("finding: with a column:envelope field and a route value holding '-', Debezium registers the envelope record " +
					"in the namespace <adjusted prefix>.<schema>.<table>.<route value as is> (Avro's Java parser does not check " +
					"namespaces), connect.name with the '-' too; Tributary adjusts the route value's '-' to '_' in both")
			}
			e, r := pgExpandRun(t, tc.label, "outbox_text", "payload text", tc.placement)
			twoPayloads(e, &r, "outbox_text", e.Prefix+"-order", `{"a": 1, "b": {"c": "x"}}`, `not json`)
			outboxAgainstDebezium(t, r)
		})
	}
}

// TestAvroOutboxExpandPayloadColumnAgainstDebezium: the payload in a
// column not named payload (table_field_event_payload: body), expanded,
// as the whole value and beside a column:envelope field: the records are
// named after the column as Debezium names them.
func TestAvroOutboxExpandPayloadColumnAgainstDebezium(t *testing.T) {
	for _, tc := range []struct {
		label     string
		placement []string
	}{
		{"avroobbody", nil},
		{"avroobbodyenv", []string{"type:envelope:eventType", "aggregateid:header:agg"}},
	} {
		t.Run(tc.label, func(t *testing.T) {
			e, r := pgExpandRun(t, tc.label, "outbox_body", "body jsonb", tc.placement)
			r.ours = "    table_field_event_payload: body\n"
			r.theirs = "transforms.outbox.table.field.event.payload=body\n"
			twoPayloads(e, &r, "outbox_body", strings.ReplaceAll(e.Prefix, "-", "_")+"_order", `{"a": 1, "b": {"c": "x"}, "d": [{"e": 1}]}`, `{"a": 2}`)
			outboxAgainstDebezium(t, r)
		})
	}
}

// TestAvroOutboxExpandAdjustedKeysAgainstDebezium: payload keys that are
// not Avro names beside Debezium's EventRouter with its own
// field.name.adjustment.mode=avro (transforms.outbox.field.name.adjustment.mode),
// under which Debezium adjusts the keys (and the record names made of
// them) and publishes the payload expanded: keys with '-', '.', a leading
// digit, a non-ASCII letter, in nested objects and arrays of objects;
// then the key "a.b" beside "a" holding "b", and "a-b" beside "a_b".
func TestAvroOutboxExpandAdjustedKeysAgainstDebezium(t *testing.T) {
	t.Skip("finding: Debezium's EventRouter takes transforms.outbox.field.name.adjustment.mode; with avro it expands these " +
		"payloads (it does not fail): the first with the same registered schema as Tributary's but every adjusted key's value " +
		"null (it looks the values up by the adjusted name), the second with records payload.a_b and payload.a.b (it names " +
		"records after the adjusted keys; Tributary, naming them after the keys, finds payload.a.b twice and publishes the " +
		"string), the third as {a_b: 2} (the later key's value; Tributary publishes the string)")
	e, r := pgExpandRun(t, "avroobadj", "outbox_text", "payload text", nil)
	r.theirs = "transforms.outbox.field.name.adjustment.mode=avro\n"
	route := strings.ReplaceAll(e.Prefix, "-", "_") + "_adj"
	topic := "outbox.event." + route
	payloads := []string{
		`{"my-key": 1, "1st": "x", "ü": true, "a.b": 2, "my-obj": {"in-ner": [{"x-y": 1}]}}`,
		`{"a.b": {"p": 1}, "a": {"b": {"q": 2}}}`,
		`{"a-b": 1, "a_b": 2}`,
	}
	n := 0
	ins := func(payload string) {
		n++
		e.Exec(fmt.Sprintf(`INSERT INTO outbox_text VALUES ('%d', '%s', '%d', 'T%d', '%s')`, n, route, n, n, payload))
	}
	r.subjectsToo = false
	r.topics = map[string]int{topic: len(payloads)}
	r.first = func() string {
		ins(payloads[0])
		return topic
	}
	r.rest = func() {
		for _, p := range payloads[1:] {
			ins(p)
		}
	}
	outboxAgainstDebezium(t, r)
}

// TestAvroOutboxExpandEnvelopeTwoTablesAgainstDebezium: two outbox tables
// with a column:envelope field, the same payload on each (to different
// routes): each envelope record named as Debezium names it.
func TestAvroOutboxExpandEnvelopeTwoTablesAgainstDebezium(t *testing.T) {
	e := itest.NewEnv(t, "avroobtwo")
	for _, tb := range []string{"outbox_a", "outbox_b"} {
		e.Exec(`CREATE TABLE ` + tb + ` (id varchar(36) PRIMARY KEY, aggregatetype varchar(255) NOT NULL, aggregateid varchar(255) NOT NULL,
			type varchar(255) NOT NULL, payload text)`)
	}
	r := pgOutboxRun(t, e, "outbox_a", "outbox_b")
	r.placement = []string{"type:envelope:eventType", "aggregateid:header:agg"}
	base := strings.ReplaceAll(e.Prefix, "-", "_")
	ra, rb := base+"_a", base+"_b"
	r.expand, r.subjectsToo, r.oneProcess = true, true, true
	r.topics = map[string]int{"outbox.event." + ra: 2, "outbox.event." + rb: 2}
	r.first = func() string {
		e.Exec(fmt.Sprintf(`INSERT INTO outbox_a VALUES ('1', '%s', '1', 'T1', '{"a": 1}')`, ra))
		return "outbox.event." + ra
	}
	r.rest = func() {
		e.Exec(fmt.Sprintf(`INSERT INTO outbox_b VALUES ('2', '%s', '2', 'T2', '{"a": 2}')`, rb))
		e.Exec(fmt.Sprintf(`INSERT INTO outbox_a VALUES ('3', '%s', '3', 'T3', '{"a": 3}')`, rb))
		e.Exec(fmt.Sprintf(`INSERT INTO outbox_b VALUES ('4', '%s', '4', 'T4', 'text')`, ra))
	}
	outboxAgainstDebezium(t, r)
}

// pgExpandRun is an outboxRun with table_expand_json_payload on both sides,
// on a new PostgreSQL outbox table of a new env (label) whose payload
// column is payloadColumn ("payload text"), with placement (nil: the
// default headers).
func pgExpandRun(t *testing.T, label, table, payloadColumn string, placement []string) (*itest.Env, outboxRun) {
	e := itest.NewEnv(t, label)
	e.Exec(`CREATE TABLE ` + table + ` (id varchar(36) PRIMARY KEY, aggregatetype varchar(255) NOT NULL, aggregateid varchar(255) NOT NULL,
		type varchar(255) NOT NULL, ` + payloadColumn + `)`)
	r := pgOutboxRun(t, e, table)
	r.placement = placement
	r.expand, r.subjectsToo = true, true
	return e, r
}

// twoPayloads has r insert first, then second, into e's outbox table
// under route (event ids 1 and 2), both to route's one topic.
func twoPayloads(e *itest.Env, r *outboxRun, table, route, first, second string) {
	topic := "outbox.event." + route
	r.topics = map[string]int{topic: 2}
	ins := func(n int, payload string) {
		e.Exec(fmt.Sprintf(`INSERT INTO %s VALUES ('%d', '%s', '%d', 'T%d', '%s')`, table, n, route, n, n, payload))
	}
	r.first = func() string { ins(1, first); return topic }
	r.rest = func() { ins(2, second) }
}
