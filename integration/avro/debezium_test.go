package avro_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
)

// registryV2 is the test registry's own API, which Apicurio's converter
// uses; its artifacts share content ids with the Confluent API's schema ids.
const registryV2 = "http://127.0.0.1:8081/apis/registry/v2"

// TestAvroAgainstDebezium runs Debezium's PostgreSQL connector with
// Apicurio's AvroConverter (apicurio.registry.as-confluent=true: Confluent's
// framing) beside a Tributary pipeline with format.value/key avro, on the
// same changes and the same topic prefix, both registering with the test
// registry (Debezium in an artifact group of its own, so that the two do not
// share subjects). Debezium runs with schema.name.adjustment.mode and
// field.name.adjustment.mode avro, which an Avro deployment needs when the
// prefix has characters Avro names do not allow (the test's has '-'). For
// every change the key and value schemas each registered are the same text,
// byte for byte, and the two records decode to the same values (the
// processing times of the envelope left out).
func TestAvroAgainstDebezium(t *testing.T) {
	e := itest.NewEnv(t, "avrodbz")
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY, name text, price numeric(10,2) NOT NULL DEFAULT 1.50, amount numeric,
		at timestamptz, d date, ts timestamp(3), data bytea, tags int[], flag bool, j jsonb, f float8, r real, small smallint, u uuid)`)
	e.Exec(`CREATE TABLE warm (id int PRIMARY KEY)`)

	cfg := e.WritePipeline(itest.PipelineConfig{})
	itest.AppendConfig(t, cfg, "format:\n  key: avro\n  value: avro\n  schema_registry:\n    type: confluent\n    url: "+registry+"\n")
	dbzOut := filepath.Join(e.Dir, "debezium-avro.jsonl")
	dbz := startAvroDebezium(t, e, dbzOut)
	p := e.Start("run", "--config", cfg)
	topic := e.Prefix + ".public.t"

	e.Exec(`INSERT INTO warm VALUES (1)`)
	itest.WaitFor(t, 120*time.Second, "both streaming", func() bool {
		return itest.TopicEnd(e.Prefix+".public.warm") >= 1 && itest.CountLines(dbzOut) >= 1 || p.Exited() || dbz.Exited()
	})
	e.Exec(`INSERT INTO t (id, name) VALUES (1, 'first')`)
	e.Exec(`INSERT INTO t VALUES (2, 'héllo "q" ☃', 12345678.99, -3.14159, '2024-02-29 12:34:56.789+02', '1999-12-31', '2001-02-03 04:05:06.789',
		'\x00ff10', '{1,NULL,-3}', true, '{"a": [1, "x"]}', 'NaN', -0.5, -32768, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')`)
	e.Exec(`UPDATE t SET name = 'second', tags = '{}' WHERE id = 2`)
	e.Exec(`DELETE FROM t WHERE id = 1`)
	e.Exec(`ALTER TABLE t ADD COLUMN note text`)
	e.Exec(`INSERT INTO t (id, note) VALUES (3, 'added')`)
	const changes = 5
	// Debezium writes a tombstone after the delete, as Tributary's default
	// delete_mode (record) does not: its file has one record more.
	itest.WaitFor(t, 120*time.Second, "the changes from both", func() bool {
		return itest.TopicEnd(topic) >= changes && itest.CountLines(dbzOut) >= 1+changes+1 || p.Exited() || dbz.Exited()
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("tributary exit %d:\n%s", code, p.Out)
	}
	dbz.Stop()

	compareWithDebezium(t, dbzOut, topic, changes, func(src map[string]any) string { return fmt.Sprint(src["lsn"]) }, nil)
}

// compareWithDebezium compares the records of topic that the Avro harness
// wrote to dbzOut with Tributary's on the topic: changes of each, matched
// by the source position positionOf gives; the key and value schemas the
// same text, the values the same but the envelope's processing times (and
// what mask removes from both).
func compareWithDebezium(t *testing.T, dbzOut, topic string, changes int, positionOf func(source map[string]any) string, mask func(value map[string]any)) {
	t.Helper()
	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: registry})
	if err != nil {
		t.Fatal(err)
	}
	var theirs []avroRecord
	for _, r := range readAvroHarness(t, dbzOut) {
		if r.Destination == topic && r.Value != nil {
			theirs = append(theirs, r)
		}
	}
	ours := itest.ReadRaw(t, topic)
	if len(theirs) != changes || len(ours) != changes {
		t.Fatalf("Debezium %d changes, Tributary %d; want %d each", len(theirs), len(ours), changes)
	}
	type decoded struct {
		schema, keySchema string
		value             map[string]any
		key               any
	}
	decode := func(key, value []byte) decoded {
		var d decoded
		kv, keySchema := decodeConfluent(t, reg, key, nil)
		vv, schema := decodeConfluent(t, reg, value, nil)
		d.key, d.schema, d.keySchema = kv, schema, keySchema
		d.value, _ = vv.(map[string]any)
		return d
	}
	posOf := func(d decoded) string {
		src, _ := d.value["source"].(map[string]any)
		// A key change's delete and create share their position.
		return positionOf(src) + " " + fmt.Sprint(d.value["op"])
	}
	// Tributary's topic has 3 partitions: its records in the changes'
	// order are found by their source position.
	byPos := map[string]decoded{}
	for _, r := range ours {
		d := decode(r.Key, r.Value)
		byPos[posOf(d)] = d
	}
	for i, r := range theirs {
		want := decode(r.Key, r.Value)
		got, ok := byPos[posOf(want)]
		if !ok {
			t.Fatalf("change %d (position %s): Tributary has no record", i, posOf(want))
		}
		// Byte for byte: the registered text is what consumers fetch.
		for _, pair := range [][3]string{{"value", want.schema, got.schema}, {"key", want.keySchema, got.keySchema}} {
			if pair[1] != pair[2] {
				t.Errorf("change %d: %s schemas differ: %s\nDebezium:  %s\nTributary: %s", i, pair[0], sameSchema(pair[1], pair[2]), pair[1], pair[2])
			}
		}
		for _, v := range []map[string]any{want.value, got.value} {
			for _, f := range []string{"ts_ms", "ts_us", "ts_ns"} {
				delete(v, f)
			}
			if mask != nil {
				mask(v)
			}
		}
		// Printed, not reflect.DeepEqual: NaN is not equal to itself.
		if fmt.Sprint(want.key, want.value) != fmt.Sprint(got.key, got.value) {
			t.Errorf("change %d: values differ\nDebezium:  %v %v\nTributary: %v %v", i, want.key, want.value, got.key, got.value)
		}
	}
	t.Logf("%d changes: the same key and value schemas, byte for byte, and the same values from Debezium+AvroConverter and Tributary", changes)
}

// sameSchema is the first difference between two Avro schemas as JSON
// documents (property order within an object aside), to say where two
// texts differ.
func sameSchema(a, b string) string {
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		return err.Error()
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		return err.Error()
	}
	return diffJSON("$", x, y)
}

func diffJSON(path string, x, y any) string {
	switch xv := x.(type) {
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: %v vs %v", path, x, y)
		}
		for k := range xv {
			if _, ok := yv[k]; !ok {
				return fmt.Sprintf("%s.%s: only Debezium's has it (%v)", path, k, xv[k])
			}
			if d := diffJSON(path+"."+k, xv[k], yv[k]); d != "" {
				return d
			}
		}
		for k := range yv {
			if _, ok := xv[k]; !ok {
				return fmt.Sprintf("%s.%s: only Tributary's has it (%v)", path, k, yv[k])
			}
		}
		return ""
	case []any:
		yv, ok := y.([]any)
		if !ok || len(xv) != len(yv) {
			return fmt.Sprintf("%s: %v vs %v", path, x, y)
		}
		for i := range xv {
			if d := diffJSON(fmt.Sprintf("%s[%d]", path, i), xv[i], yv[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(x, y) {
		return fmt.Sprintf("%s: %v vs %v", path, x, y)
	}
	return ""
}

type avroRecord struct {
	Destination string
	Key, Value  []byte
	// Headers are the record's headers as the header converter wrote
	// them, in order (a nil Value: a header without a value).
	Headers []avroHeader
}

type avroHeader struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

func readAvroHarness(t *testing.T, path string) []avroRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []avroRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l struct {
			Destination string       `json:"destination"`
			Key         *string      `json:"key"`
			Value       *string      `json:"value"`
			Headers     []avroHeader `json:"headers"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		r := avroRecord{Destination: l.Destination, Headers: l.Headers}
		if l.Key != nil {
			r.Key, _ = base64.StdEncoding.DecodeString(*l.Key)
		}
		if l.Value != nil {
			r.Value, _ = base64.StdEncoding.DecodeString(*l.Value)
		}
		out = append(out, r)
	}
	return out
}

// avroConverterProps are the converter settings of the Debezium oracle:
// Apicurio's AvroConverter against the test registry with Confluent's
// framing, its artifacts in a group of their own; and Debezium's name
// adjustment for Avro.
func avroConverterProps(group string) string {
	return `schema.name.adjustment.mode=avro
field.name.adjustment.mode=avro
converter.apicurio.registry.url=` + registryV2 + `
converter.apicurio.registry.auto-register=true
converter.apicurio.registry.as-confluent=true
converter.apicurio.registry.id-handler=io.apicurio.registry.serde.Legacy4ByteIdHandler
converter.apicurio.registry.headers.enabled=false
converter.apicurio.registry.use-id=contentId
converter.apicurio.registry.artifact.group-id=debezium-` + group + `
harness.max.runtime.ms=170000
`
}

// startAvroDebezium runs integration/debezium/avro/AvroHarness on e's
// database with its own slot and publication; extra lines are added to
// the connector's properties.
func startAvroDebezium(t *testing.T, e *itest.Env, out string, extra ...string) *harnessProc {
	t.Helper()
	props := itest.PostgresDebeziumProps(e, append([]string{"publication.autocreate.mode=all_tables\n", avroConverterProps(e.DB)}, extra...)...)
	return runAvroHarness(t, e, "avro", props, out)
}

// runAvroHarness runs AvroHarness (compiled with the avro jar set) on the
// jar set jars with the connector properties props.
func runAvroHarness(t *testing.T, e *itest.Env, jars, props, out string) *harnessProc {
	t.Helper()
	root, err := filepath.Abs(".") // itest.Main runs the tests in integration/
	if err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("bash", filepath.Join(root, "debezium", "build.sh"), "avro", jars).CombinedOutput(); err != nil {
		t.Fatalf("integration/debezium/build.sh avro %s: %v\n%s", jars, err, b)
	}
	home := filepath.Join(root, "..", ".services", "debezium")
	propsFile := filepath.Join(e.Dir, "debezium-avro.properties")
	if err := os.WriteFile(propsFile, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &harnessProc{cmd: exec.Command("java", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"-cp", filepath.Join(home, "avro", "classes")+":"+filepath.Join(home, jars, "lib", "*"), "AvroHarness", propsFile, out),
		done: make(chan struct{})}
	h.cmd.Stdout, h.cmd.Stderr = &h.out, &h.out
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.cmd.Wait(); close(h.done) }()
	t.Cleanup(func() {
		h.Stop()
		if t.Failed() {
			t.Logf("AvroHarness output:\n%s", h.out.String())
		}
	})
	return h
}

type harnessProc struct {
	cmd  *exec.Cmd
	out  itest.SyncBuffer
	done chan struct{}
}

func (h *harnessProc) Exited() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

func (h *harnessProc) Stop() {
	if h.Exited() {
		return
	}
	h.cmd.Process.Signal(os.Interrupt)
	select {
	case <-h.done:
	case <-time.After(30 * time.Second):
		h.cmd.Process.Kill()
		<-h.done
	}
}

// TestAvroMariaDBAgainstDebezium is TestAvroAgainstDebezium on MariaDB:
// Debezium's MariaDB connector (3.5.0.Final, the newest on Maven Central;
// integration/debezium/avro-mariadb) with Apicurio's AvroConverter beside a
// Tributary pipeline on the same changes. source.version, which says the
// connector's release, is the one value left out.
func TestAvroMariaDBAgainstDebezium(t *testing.T) {
	e := itest.NewMyEnv(t, "avromydbz")
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY, name varchar(50), price decimal(10,2) NOT NULL DEFAULT 1.50, f double,
		d date, ts timestamp(3) NULL, dt datetime(6), b varbinary(10), e enum('a','b'), j json, tiny tinyint,
		u tinyint unsigned, big bigint unsigned)`)
	e.Exec(`CREATE TABLE warm (id int PRIMARY KEY)`)
	cfg := e.WriteConfig("")
	itest.AppendConfig(t, cfg, "format:\n  key: avro\n  value: avro\n  schema_registry:\n    type: confluent\n    url: "+registry+"\n")
	dbzOut := filepath.Join(e.Dir, "debezium-avro.jsonl")
	dbz := runAvroHarness(t, e.Env, "avro-mariadb", itest.MariaDBDebeziumProps(e, avroConverterProps(e.DB)), dbzOut)
	p := e.Start("run", "--config", cfg)
	topic := e.Prefix + "." + e.DB + ".t"
	e.Exec(`INSERT INTO warm VALUES (1)`)
	itest.WaitFor(t, 120*time.Second, "both streaming", func() bool {
		return itest.TopicEnd(e.Prefix+"."+e.DB+".warm") >= 1 && itest.CountLines(dbzOut) >= 1 || p.Exited() || dbz.Exited()
	})
	e.Exec(`INSERT INTO t VALUES (1, 'héllo ☃', -128.00, -0.5, '1999-12-31', '2024-02-29 12:34:56.789', '2001-02-03 04:05:06.123456',
		x'00ff', 'b', '{"a": [1, "x"]}', -128, 255, 18446744073709551615)`)
	e.Exec(`INSERT INTO t (id, name) VALUES (2, NULL)`)
	e.Exec(`UPDATE t SET name = 'second' WHERE id = 1`)
	e.Exec(`DELETE FROM t WHERE id = 2`)
	const changes = 4
	itest.WaitFor(t, 120*time.Second, "the changes from both", func() bool {
		return itest.TopicEnd(topic) >= changes && itest.CountLines(dbzOut) >= 1+changes+1 || p.Exited() || dbz.Exited()
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("tributary exit %d:\n%s", code, p.Out)
	}
	dbz.Stop()
	compareWithDebezium(t, dbzOut, topic, changes,
		func(src map[string]any) string { return fmt.Sprint(src["file"], src["pos"], src["row"]) },
		func(v map[string]any) {
			if src, ok := v["source"].(map[string]any); ok {
				delete(src, "version")
			}
		})
}
