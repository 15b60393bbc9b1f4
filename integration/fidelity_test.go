package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDebeziumFidelity runs real Debezium (the embedded engine of
// integration/debezium, PostgreSQL connector, its defaults) and Tributary
// against one database and compares every key and value they produce,
// message by message: schemas must be identical and payloads identical
// except for the fields in volatileFields.
func TestDebeziumFidelity(t *testing.T) {
	e := newEnv(t, "fid")
	hstore := e.tryExec(`CREATE EXTENSION IF NOT EXISTS hstore`)
	for _, sql := range fidelitySchema(hstore) {
		e.exec(sql)
	}
	wideTopic, fullTopic := e.prefix+".public.wide", e.prefix+".public.full_t"
	arrTopic, nopkTopic := e.prefix+".public.arr_t", e.prefix+".public.nopk"
	topics := []string{wideTopic, fullTopic, arrTopic, nopkTopic}
	createSinglePartitionTopics(t, topics...)

	// The snapshot: rows present before either connector starts.
	snapshot := []fidelityStep{
		{fidelityInsert("wide", wideRowFull(hstore)), 1},
		{fidelityInsert("wide", wideRowNulls()), 1},
		{fidelityInsert("wide", wideRowEdges(hstore)), 1},
		{`INSERT INTO full_t (id, name, amount, body) VALUES (1, 'one', 1.50, ` + toastText + `)`, 1},
		{fidelityInsert("arr_t", arrRowSmall("1")), 1},
	}
	// The stream: every statement with the number of messages it makes
	// (a delete is a 'd' and a tombstone).
	stream := []fidelityStep{
		{fidelityInsert("wide", wideRowFull(hstore)), 1},                            // id 4
		{fidelityInsert("wide", wideRowNulls()), 1},                                 // id 5
		{fidelityInsert("wide", wideRowEdges(hstore)), 1},                           // id 6
		{`UPDATE wide SET c_int4 = c_int4 + 1, c_text = 'updated' WHERE id = 4`, 1}, // TOAST unchanged
		{`UPDATE wide SET c_toast = 'short now' WHERE id = 4`, 1},
		{`DELETE FROM wide WHERE id = 5`, 2},         // REPLICA IDENTITY DEFAULT: key-only before
		{`UPDATE wide SET id = 100 WHERE id = 6`, 3}, // PK change: d, tombstone, c
		{`ALTER TABLE wide ADD COLUMN c_added integer DEFAULT 5`, 0},
		{fidelityInsert("wide", wideRowFull(hstore)), 1}, // id 7, with c_added
		{`UPDATE wide SET c_added = 6 WHERE id = 4`, 1},
		{`ALTER TABLE wide DROP COLUMN c_char`, 0},
		{`ALTER TABLE wide ALTER COLUMN c_int2 TYPE integer`, 0},
		{`UPDATE wide SET c_int2 = 70000 WHERE id = 7`, 1},
		{`INSERT INTO full_t (id, name, amount, body) VALUES (2, 'two', 2.25, ` + toastText + `)`, 1},
		{`UPDATE full_t SET name = 'uno' WHERE id = 1`, 1}, // FULL: complete before image, TOAST unchanged
		{`UPDATE full_t SET id = 3 WHERE id = 2`, 3},
		{`DELETE FROM full_t WHERE id = 1`, 2},              // FULL: complete before image
		{`INSERT INTO arr_t (id) VALUES (2)`, 1},            // the defaults
		{fidelityInsert("arr_t", arrRowSmall("3")), 1},      // id 3
		{fidelityInsert("arr_t", arrRowToast()), 1},         // id 4
		{`UPDATE arr_t SET n = n + 1 WHERE id = 4`, 1},      // every array and the bytea unchanged TOAST
		{`UPDATE arr_t SET a_int4 = '{7}' WHERE id = 4`, 1}, // the rest still unchanged
		{`DELETE FROM arr_t WHERE id = 3`, 2},
		// Streamed only (the table is empty during the snapshots): a
		// keyless table with REPLICA IDENTITY FULL, captured because the
		// include list names it (without one, Tributary captures tables
		// with a primary key only, Debezium all).
		{`INSERT INTO nopk (a, b) VALUES (1, 'one'), (2, 'two')`, 2},
		{`UPDATE nopk SET b = 'deux' WHERE a = 2`, 1},
		// A keyless delete: 'd', then a tombstone whose key is null too.
		{`DELETE FROM nopk WHERE a = 1`, 2},
	}
	cfg := e.writeConfig("  delete_mode: record_and_tombstone\n")
	listTables(t, cfg, "public.wide", "public.full_t", "public.arr_t", "public.nopk")
	sideBySide{
		e: e, exec: func(sql string) { e.exec(sql) }, snapshot: snapshot, stream: stream, topics: topics,
		debezium: func(out string, want int) *debeziumProc { return startDebezium(t, e, out, want) },
		config:   cfg, snapshotWait: 60 * time.Second, streamWait: 90 * time.Second,
	}.run(t)
}

// topicsEnd is the sum of the topics' end offsets.
func topicsEnd(topics []string) int64 {
	var n int64
	for _, t := range topics {
		n += topicEnd(t)
	}
	return n
}

// debeziumVersion is the release integration/debezium/pom.xml runs.
const debeziumVersion = "3.6.1.Final"

// volatileFields are the value fields that legitimately differ between two
// connectors reading the same changes: processing and commit times (each
// connector's own clock, and Debezium's snapshot time versus ours), and the
// log coordinates, which depend on where each connector's slot started and
// on Debezium's snapshot transaction (txId, lsn and sequence of 'r' rows).
// Everything else — schemas, keys, row images, op, source.version,
// connector, name, db, schema, table, snapshot markers, xmin, origin — must
// be identical.
var volatileFields = []string{
	"payload.ts_ms", "payload.ts_us", "payload.ts_ns",
	"payload.source.ts_ms", "payload.source.ts_us", "payload.source.ts_ns",
	"payload.source.lsn", "payload.source.txId", "payload.source.sequence",
}

// sanitize replaces every volatile field of a decoded value with a marker.
func sanitize(v any) any { return sanitizeFields(v, volatileFields) }

// sanitizeFields replaces each of fields ("payload.source.ts_ms", …) of a
// decoded value with a marker.
func sanitizeFields(v any, fields []string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for _, path := range fields {
		parts := strings.Split(path, ".")
		cur := m
		for i, p := range parts {
			if i == len(parts)-1 {
				if _, ok := cur[p]; ok {
					cur[p] = "<volatile>"
				}
				break
			}
			next, ok := cur[p].(map[string]any)
			if !ok {
				break
			}
			cur = next
		}
	}
	return m
}

type fidelityStep struct {
	sql    string
	events int
}

// toastText is a value large and random enough to be stored out of line
// (TOASTed), so an update that leaves it alone does not send it.
const toastText = `(SELECT string_agg(md5(g::text), '') FROM generate_series(1, 400) g)`

func fidelitySchema(hstore bool) []string {
	h := ""
	if hstore {
		h = ",\n\t\tc_hstore hstore"
	}
	return []string{
		`CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')`,
		`CREATE DOMAIN posint AS integer CHECK (VALUE > 0)`,
		`CREATE DOMAIN shorttext AS varchar(16)`,
		`CREATE TABLE wide (
		id serial PRIMARY KEY,
		c_int2 smallint,
		c_int4 integer NOT NULL DEFAULT 0,
		c_int8 bigint DEFAULT 42,
		c_oid oid,
		c_bigserial bigserial,
		c_bool boolean DEFAULT true,
		c_real real,
		c_double double precision,
		c_numeric numeric,
		c_numeric_10_2 numeric(10,2) DEFAULT 1.50,
		c_numeric_5 numeric(5),
		c_money money,
		c_text text,
		c_varchar varchar(20) DEFAULT 'dflt',
		c_char char(4),
		c_name name, -- always NULL in the rows: Debezium streams name values as null (see README)
		c_bytea bytea,
		c_date date,
		c_time time,
		c_time3 time(3),
		c_time0 time(0),
		c_timetz timetz,
		c_ts timestamp,
		c_ts3 timestamp(3),
		c_ts0 timestamp(0),
		c_tstz timestamptz,
		c_tstz3 timestamptz(3),
		c_created timestamptz NOT NULL DEFAULT now(),
		c_interval interval,
		c_uuid uuid,
		c_json json,
		c_jsonb jsonb,
		c_xml xml,
		c_inet inet,
		c_cidr cidr,
		c_macaddr macaddr,
		c_bit1 bit,
		c_bit bit(12),
		c_varbit varbit(20),
		c_int_arr integer[],
		c_text_arr text[],
		c_enum mood,
		c_domain posint,
		c_domain_text shorttext,
		c_toast text` + h + `)`,
		`CREATE TABLE full_t (id integer PRIMARY KEY, name text NOT NULL, amount numeric(8,2), body text)`,
		`ALTER TABLE full_t REPLICA IDENTITY FULL`,
		// Arrays of every element type with a TOAST placeholder of its own
		// in Debezium or none, stored out of line uncompressed (EXTERNAL) so
		// that arrRowToast's values are TOASTed whatever their entropy; and
		// the column kinds wide lacks.
		`CREATE TABLE arr_t (
		id integer PRIMARY KEY,
		n integer NOT NULL DEFAULT 0,
		a_int2 smallint[],
		a_int4 integer[] DEFAULT '{1,2}',
		a_int8 bigint[],
		a_text text[] DEFAULT '{a,"b c"}',
		a_varchar varchar(10)[],
		a_numeric numeric[],
		a_numeric_8_3 numeric(8,3)[],
		a_float8 float8[],
		a_bool boolean[],
		a_date date[],
		a_tstz timestamptz[],
		a_uuid uuid[],
		a_enum mood[] DEFAULT '{ok,sad}',
		a_jsonb jsonb[],
		c_bytea bytea,
		c_enum mood DEFAULT 'ok',
		c_interval interval DEFAULT '1 day 02:00:03.5',
		c_varbit varbit,
		c_macaddr8 macaddr8)`,
		`ALTER TABLE arr_t ALTER a_int2 SET STORAGE EXTERNAL, ALTER a_int4 SET STORAGE EXTERNAL,
		ALTER a_int8 SET STORAGE EXTERNAL, ALTER a_text SET STORAGE EXTERNAL, ALTER a_varchar SET STORAGE EXTERNAL,
		ALTER a_numeric SET STORAGE EXTERNAL, ALTER a_numeric_8_3 SET STORAGE EXTERNAL, ALTER a_float8 SET STORAGE EXTERNAL,
		ALTER a_bool SET STORAGE EXTERNAL, ALTER a_date SET STORAGE EXTERNAL, ALTER a_tstz SET STORAGE EXTERNAL,
		ALTER a_uuid SET STORAGE EXTERNAL, ALTER a_enum SET STORAGE EXTERNAL, ALTER a_jsonb SET STORAGE EXTERNAL,
		ALTER c_bytea SET STORAGE EXTERNAL`,
		// No primary key: a null key. FULL so that updates and deletes
		// are allowed and carry the row.
		`CREATE TABLE nopk (a integer, b text)`,
		`ALTER TABLE nopk REPLICA IDENTITY FULL`,
	}
}

// A row is column → SQL expression.
type fidelityRow map[string]string

func wideRowFull(hstore bool) fidelityRow {
	r := fidelityRow{
		"c_int2": "-12", "c_int4": "123456", "c_int8": "9007199254740993", "c_oid": "4000000000",
		"c_bool": "false", "c_real": "3.14", "c_double": "2.718281828459045",
		"c_numeric": "'-12345.6789'", "c_numeric_10_2": "'99.5'", "c_numeric_5": "'12345'", "c_money": "'12.34'",
		"c_text": `E'tab\there "quoted" \\ é ✓'`, "c_varchar": "'hello'", "c_char": "'ab'",
		"c_bytea": `'\x00ff10'`, "c_date": "'2024-02-29'", "c_time": "'13:14:15.123456'", "c_time3": "'13:14:15.123'",
		"c_time0": "'23:59:59'", "c_timetz": "'13:14:15.5+02'", "c_ts": "'2024-03-01 10:00:00.123456'",
		"c_ts3": "'2024-03-01 10:00:00.123'", "c_ts0": "'1969-12-31 23:59:59'", "c_tstz": "'2024-03-01 10:00:00.5+02'",
		"c_tstz3": "'2024-03-01 10:00:00.123+00'", "c_created": "'2024-01-01 00:00:00+00'",
		"c_interval": "'1 year 2 mons 3 days 04:05:06.789'", "c_uuid": "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
		"c_json": `'{"a": 1, "b": [true, null]}'`, "c_jsonb": `'{"b": [1, 2], "a": "x"}'`, "c_xml": "'<a>x</a>'",
		"c_inet": "'192.168.0.1/24'", "c_cidr": "'10.0.0.0/8'", "c_macaddr": "'08:00:2b:01:02:03'",
		"c_bit1": "B'1'", "c_bit": "B'101000000001'", "c_varbit": "B'1101'",
		"c_int_arr": "'{1,2,NULL,-4}'", "c_text_arr": `'{"a b",c,NULL}'`, "c_enum": "'happy'", "c_domain": "5",
		"c_domain_text": "'dom'", "c_toast": toastText,
	}
	if hstore {
		r["c_hstore"] = `'a=>1, "b c"=>NULL'`
	}
	return r
}

func arrRowSmall(id string) fidelityRow {
	return fidelityRow{
		"id": id, "n": "1", "a_int2": "'{1,-2,NULL}'", "a_int4": "'{}'", "a_int8": "'{9007199254740993,NULL}'",
		"a_text": `'{"x,y","",NULL}'`, "a_varchar": "'{ab,cd}'", "a_numeric": "'{1.5,-0.001,NaN,NULL,12345678901234567890}'",
		"a_numeric_8_3": "'{1.5,-2.125}'", "a_float8": "'{1.5,NaN,-Infinity,1e300}'", "a_bool": "'{t,f,NULL}'",
		"a_date": "'{2024-02-29,1900-01-01,NULL}'", "a_tstz": "'{\"2024-03-01 10:00:00.5+02\",infinity,NULL}'",
		"a_uuid": "'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}'", "a_enum": "'{happy,sad,NULL}'",
		"a_jsonb": `ARRAY['{"a": 1}'::jsonb, '[]', NULL]`, "c_bytea": `'\x00ff'`, "c_enum": "'sad'",
		"c_interval": "'-1 mons 3 days'", "c_varbit": "B'1011001110001111000011111'", "c_macaddr8": "'08:00:2b:01:02:03:04:05'",
	}
}

// arrRowToast has arrays and a bytea too long to stay in the row.
func arrRowToast() fidelityRow {
	agg := func(expr string) string {
		return "(SELECT array_agg(" + expr + " ORDER BY g) FROM generate_series(1, 1200) g)"
	}
	return fidelityRow{
		"id": "4", "n": "1",
		"a_int2": agg("(g % 30000)::int2"), "a_int4": agg("hashtext(g::text)"), "a_int8": agg("hashtext(g::text)::int8 * 1000"),
		"a_text": agg("md5(g::text)"), "a_varchar": agg("left(md5(g::text), 10)"), "a_numeric": agg("hashtext(g::text) / 7.0"),
		"a_numeric_8_3": agg("(g / 7.0)::numeric(8,3)"), "a_float8": agg("hashtext(g::text) / 3.0::float8"), "a_bool": "(SELECT array_agg(g % 3 = 0) FROM generate_series(1, 4000) g)",
		"a_date": agg("date '2000-01-01' + g"), "a_tstz": agg("timestamptz '2000-01-01 00:00:00+00' + g * interval '1 second'"),
		"a_uuid": agg("md5(g::text)::uuid"), "a_enum": agg("(enum_range(NULL::mood))[g % 3 + 1]"),
		"a_jsonb": agg("jsonb_build_object('k', g)"), "c_bytea": "(SELECT string_agg(decode(md5(g::text), 'hex'), '') FROM generate_series(1, 300) g)",
	}
}

func wideRowNulls() fidelityRow {
	return fidelityRow{"c_int4": "0"}
}

func wideRowEdges(hstore bool) fidelityRow {
	r := fidelityRow{
		"c_int2": "32767", "c_int4": "-2147483648", "c_int8": "-9223372036854775808", "c_oid": "0",
		"c_bool": "true", "c_real": "'NaN'", "c_double": "'-Infinity'",
		"c_numeric": "'NaN'", "c_numeric_10_2": "'-0.01'", "c_numeric_5": "'-99999'", "c_money": "'-1.05'",
		"c_text": "''", "c_varchar": "''", "c_char": "'abcd'",
		"c_bytea": `''`, "c_date": "'1900-01-01'", "c_time": "'24:00:00'", "c_time3": "'00:00:00'",
		"c_time0": "'00:00:01'", "c_timetz": "'00:00:00-05:30'", "c_ts": "'infinity'",
		"c_ts3": "'-infinity'", "c_ts0": "'0044-03-15 12:00:00 BC'", "c_tstz": "'infinity'",
		"c_tstz3": "'-infinity'", "c_created": "'1900-01-01 00:00:00.000001+00'",
		"c_interval": "'-3 days -00:00:01'", "c_uuid": "'00000000-0000-0000-0000-000000000000'",
		"c_json": `'[]'`, "c_jsonb": `'null'`, "c_xml": "'<r/>'",
		"c_inet": "'::1'", "c_cidr": "'2001:db8::/32'", "c_macaddr": "'ff:ff:ff:ff:ff:ff'",
		"c_bit1": "B'0'", "c_bit": "B'000000000000'", "c_varbit": "B'10000000000000000001'",
		"c_int_arr": "'{}'", "c_text_arr": `'{""}'`, "c_enum": "'sad'", "c_domain": "2147483647",
		"c_domain_text": "''", "c_toast": "''",
	}
	if hstore {
		r["c_hstore"] = `''`
	}
	return r
}

func fidelityInsert(table string, r fidelityRow) string {
	cols := make([]string, 0, len(r))
	for c := range r {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	vals := make([]string, len(cols))
	for i, c := range cols {
		vals[i] = r[c]
	}
	return fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(cols, ", "), strings.Join(vals, ", "))
}

// tryExec runs sql and reports whether it worked (for optional extensions).
func (e *env) tryExec(sql string) bool {
	_, err := e.conn.Exec(context.Background(), sql)
	if err != nil {
		e.t.Logf("%s: %v (skipping what needs it)", sql, err)
	}
	return err == nil
}

// createSinglePartitionTopics makes the topics before Tributary does, with one
// partition each, so that the topic's order is the connector's order and
// can be compared with Debezium's message by message.
func createSinglePartitionTopics(t *testing.T, topics ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopics(ctx, 1, 1, nil, topics...)
	if err != nil {
		t.Fatalf("create topics: %v", err)
	}
	for _, r := range resp.Sorted() {
		if r.Err != nil {
			t.Fatalf("create topic %s: %v", r.Topic, r.Err)
		}
	}
}

// debeziumProc is a running integration/debezium harness.
type debeziumProc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

func (d *debeziumProc) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

func (d *debeziumProc) stop() {
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		d.cmd.Process.Kill()
		<-d.done
	}
}

// startDebezium builds the harness if needed and runs Debezium's PostgreSQL
// connector on e's database with its own slot and publication, stopping
// after max records (0: when stopped). extra lines are added to the
// connector's properties (a later line wins).
func startDebezium(t *testing.T, e *env, out string, max int, extra ...string) *debeziumProc {
	t.Helper()
	props := fmt.Sprintf(`connector.class=io.debezium.connector.postgresql.PostgresConnector
database.hostname=127.0.0.1
database.port=5432
database.user=postgres
database.password=postgres
database.dbname=%s
topic.prefix=%s
plugin.name=pgoutput
slot.name=dbz_%s
publication.name=dbz_%s
harness.max.records=%d
harness.max.runtime.ms=170000
`, e.db, e.prefix, e.name, e.name, max)
	return runDebezium(t, e.dir, "", props+strings.Join(extra, ""), out)
}

// runDebezium builds the harness (and the jar set jars, "" for the main
// one; see integration/debezium/README.md) if needed, writes props to a
// file in dir and runs the harness on it, writing records to out. The
// harness is killed at the end of the test; its output is logged when the
// test failed.
func runDebezium(t *testing.T, dir, jars, props, out string) *debeziumProc {
	t.Helper()
	hdir, err := filepath.Abs("debezium")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join(hdir, "build.sh")}
	if jars != "" {
		args = append(args, jars)
	}
	if b, err := exec.Command("bash", args...).CombinedOutput(); err != nil {
		t.Fatalf("integration/debezium/build.sh: %v\n%s", err, b)
	}
	propsFile := filepath.Join(dir, "debezium.properties")
	if err := os.WriteFile(propsFile, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	d := &debeziumProc{cmd: exec.Command("bash", filepath.Join(hdir, "run.sh"), propsFile, out), out: &syncBuffer{}, done: make(chan struct{})}
	d.cmd.Env = append(os.Environ(), "DEBEZIUM_JARS="+jars)
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		if !d.exited() {
			d.cmd.Process.Kill()
			<-d.done
		}
		if t.Failed() {
			var keep []string
			for _, l := range strings.Split(d.out.String(), "\n") {
				if !strings.HasPrefix(strings.TrimSpace(l), "at ") {
					keep = append(keep, l)
				}
			}
			t.Logf("debezium harness output (stack frames left out):\n%s", strings.Join(keep, "\n"))
		}
	})
	return d
}

func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte{'\n'})
}

// rawRecord is one key/value pair, decoded with json.Number so that int64
// values and Java's number formatting survive.
type rawRecord struct {
	topic string
	key   any // nil: no key
	value any // nil: tombstone
}

func decodeJSON(b []byte) (any, error) {
	if b == nil {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// debeziumLine is one record the Debezium harness wrote (Harness.java):
// its topic, key and value as JSON text ("null" for none), and whether it
// is a Kafka tombstone.
type debeziumLine struct {
	Destination string          `json:"destination"`
	Key         json.RawMessage `json:"key"`
	Value       json.RawMessage `json:"value"`
	Tombstone   bool            `json:"tombstone"`
}

// eachDebeziumLine calls fn with every record of the harness's output file.
func eachDebeziumLine(t *testing.T, path string, fn func(debeziumLine)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("debezium output: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line debeziumLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("debezium output line: %v", err)
		}
		fn(line)
	}
}

func readDebeziumOutput(t *testing.T, path string) []rawRecord {
	t.Helper()
	var recs []rawRecord
	eachDebeziumLine(t, path, func(line debeziumLine) {
		r := rawRecord{topic: line.Destination}
		if string(line.Key) != "null" {
			r.key, _ = decodeJSON(line.Key)
		}
		if string(line.Value) != "null" {
			r.value, _ = decodeJSON(line.Value)
		}
		recs = append(recs, r)
	})
	return recs
}

// readTopicRaw reads a one-partition topic from the start to its end.
func readTopicRaw(t *testing.T, topic string) []rawRecord {
	t.Helper()
	n := topicEnd(topic)
	if n == 0 {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []rawRecord
	for int64(len(recs)) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: got %d of %d records", topic, len(recs), n)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch %s: %v", topic, err) })
		fs.EachRecord(func(r *kgo.Record) {
			k, err := decodeJSON(r.Key)
			if err != nil {
				t.Fatalf("%s offset %d: key is not JSON: %v", topic, r.Offset, err)
			}
			v, err := decodeJSON(r.Value)
			if err != nil {
				t.Fatalf("%s offset %d: value is not JSON: %v", topic, r.Offset, err)
			}
			recs = append(recs, rawRecord{topic: topic, key: k, value: v})
		})
	}
	return recs
}

// fidelityDiffs collects differences; a schema difference repeated on
// every message of a table version is reported once with a count.
type fidelityDiffs struct {
	// sanitize masks the volatile fields of a value; nil: sanitize (PostgreSQL's).
	sanitize func(v any) any
	lines    []string
	seen     map[string]int // line → index in lines
	count    []int
}

func (d *fidelityDiffs) add(topic string, i int, path, dbz, trib string) {
	line := fmt.Sprintf("%s %s\n      debezium:  %s\n      tributary: %s", topic, path, dbz, trib)
	if strings.Contains(path, ".schema") {
		if j, ok := d.seen[line]; ok {
			d.count[j]++
			return
		}
	}
	if d.seen == nil {
		d.seen = map[string]int{}
	}
	d.seen[line] = len(d.lines)
	d.lines = append(d.lines, fmt.Sprintf("#%d ", i)+line)
	d.count = append(d.count, 1)
}

func (d *fidelityDiffs) String() string {
	var b strings.Builder
	for i, l := range d.lines {
		if i == 60 {
			fmt.Fprintf(&b, "... and %d more\n", len(d.lines)-i)
			break
		}
		b.WriteString("  ")
		b.WriteString(l)
		if d.count[i] > 1 {
			fmt.Fprintf(&b, "\n      (same in %d messages)", d.count[i])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func (d *fidelityDiffs) compareTopic(topic string, dbz, trib []rawRecord) {
	if len(dbz) != len(trib) {
		d.add(topic, -1, "count", fmt.Sprintf("%d messages %s", len(dbz), summary(dbz)), fmt.Sprintf("%d messages %s", len(trib), summary(trib)))
	}
	for i := 0; i < len(dbz) && i < len(trib); i++ {
		d.compare(topic, i, "key", dbz[i].key, trib[i].key)
		clean := d.sanitize
		if clean == nil {
			clean = sanitize
		}
		d.compare(topic, i, "value", clean(dbz[i].value), clean(trib[i].value))
	}
}

// summary lists the ops of records ("r r c u d ∅") to explain a count mismatch.
func summary(recs []rawRecord) string {
	var ops []string
	for _, r := range recs {
		op := "∅"
		if m, ok := r.value.(map[string]any); ok {
			if p, ok := m["payload"].(map[string]any); ok {
				op, _ = p["op"].(string)
			}
		}
		ops = append(ops, op)
	}
	return "[" + strings.Join(ops, " ") + "]"
}

// compare walks two decoded JSON values and records each difference by path.
func (d *fidelityDiffs) compare(topic string, i int, path string, a, b any) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			d.add(topic, i, path, brief(a), brief(b))
			return
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case !inA:
				d.add(topic, i, path+"."+k, "(absent)", brief(y))
			case !inB:
				d.add(topic, i, path+"."+k, brief(x), "(absent)")
			default:
				d.compare(topic, i, path+"."+k, x, y)
			}
		}
	case []any:
		bv, ok := b.([]any)
		if !ok {
			d.add(topic, i, path, brief(a), brief(b))
			return
		}
		// Schema field lists: name elements by their "field" for a readable path.
		for j := 0; j < len(av) || j < len(bv); j++ {
			label := fmt.Sprintf("[%d]", j)
			if j < len(av) {
				if m, ok := av[j].(map[string]any); ok && m["field"] != nil {
					label = fmt.Sprintf("[%v]", m["field"])
				}
			}
			switch {
			case j >= len(av):
				d.add(topic, i, path+label, "(absent)", brief(bv[j]))
			case j >= len(bv):
				d.add(topic, i, path+label, brief(av[j]), "(absent)")
			default:
				d.compare(topic, i, path+label, av[j], bv[j])
			}
		}
	default:
		if !reflect.DeepEqual(a, b) {
			d.add(topic, i, path, brief(a), brief(b))
		}
	}
}

func brief(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// listTables gives the config at path a source.tables include list.
func listTables(t *testing.T, path string, tables ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	list := "  tables: [" + strings.Join(tables, ", ") + "]\n"
	out := strings.Replace(string(b), "  type: postgres\n", "  type: postgres\n"+list, 1)
	if out == string(b) {
		t.Fatalf("%s: no postgres source section to add tables to", path)
	}
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
}
