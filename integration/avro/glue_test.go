package avro_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
)

// glueSerdeVersion is the PyPI release of AWS's Python Glue serializers
// that decodes the records in TestAvroGlueAWSDeserializer.
const glueSerdeVersion = "1.1.3"

// motoEnv points the AWS SDK (ours, the pipeline's and the Python
// deserializer's) at moto's Glue Schema Registry (make services-up).
var motoEnv = []string{"AWS_ENDPOINT_URL=http://127.0.0.1:5000", "AWS_REGION=us-east-1", "AWS_DEFAULT_REGION=us-east-1",
	"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test"}

// TestAvroGlueAWSDeserializer runs a pipeline with format.key/value avro and
// the Glue Schema Registry (moto's) beside a JSON pipeline on the same
// changes. Every Avro record is in Glue's wire format and AWS's own Python
// deserializer (aws-glue-schema-registry), fetching the schema version from
// the registry, decodes it to the JSON pipeline's payload. The column added
// mid-stream is a second version of the value schema.
func TestAvroGlueAWSDeserializer(t *testing.T) {
	python := glueSerdePython(t)
	e := itest.NewEnv(t, "avroglue")
	registryName := e.DB
	motoRegistry(t, registryName)
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY, name text, price numeric(10,2) NOT NULL DEFAULT 1.50, amount numeric,
		at timestamptz, d date, data bytea, tags int[], flag bool, f float8, small smallint)`)
	e.Exec(`CREATE TABLE warm (id int PRIMARY KEY)`)
	avroCfg := e.WritePipeline(itest.PipelineConfig{})
	itest.AppendConfig(t, avroCfg, "format:\n  key: avro\n  value: avro\n  schema_registry:\n    type: glue\n    registry_name: "+registryName+"\n")
	jsonCfg := e.WritePipeline(itest.PipelineConfig{File: "json.yaml", Checkpoint: "  path: " + e.Dir + "/checkpoints-json\n"})
	itest.EditConfig(t, jsonCfg, "name: "+e.Name+"\n", "name: "+e.Name+"-json\n")
	itest.EditConfig(t, jsonCfg, "topic_prefix: "+e.Prefix+"\n", "topic_prefix: "+e.Prefix+"_json\n")
	avroTopic, jsonTopic := e.Prefix+".public.t", e.Prefix+"_json.public.t"
	pa := e.StartWith(motoEnv, "run", "--config", avroCfg)
	pj := e.Start("run", "--config", jsonCfg)
	e.Exec(`INSERT INTO warm VALUES (1)`)
	itest.WaitFor(t, 90*time.Second, "both pipelines streaming", func() bool {
		return itest.TopicEnd(e.Prefix+".public.warm") >= 1 && itest.TopicEnd(e.Prefix+"_json.public.warm") >= 1 || pa.Exited() || pj.Exited()
	})
	e.Exec(`INSERT INTO t VALUES (1, 'héllo ☃', -128.00, 1e-20, '2024-02-29 12:34:56.789+02', '1999-12-31', '\x00ff', '{1,NULL,-3}', true, 'NaN', -32768)`)
	e.Exec(`INSERT INTO t (id, price, amount, f) VALUES (2, 12345678.99, -99999999999999999999.5, '-Infinity')`)
	e.Exec(`UPDATE t SET name = 'second' WHERE id = 1`)
	e.Exec(`DELETE FROM t WHERE id = 2`)
	e.Exec(`ALTER TABLE t ADD COLUMN note text`)
	e.Exec(`INSERT INTO t (id, note) VALUES (3, 'added')`)
	const total = 5
	itest.WaitFor(t, 90*time.Second, fmt.Sprintf("%d records on both topics", total), func() bool {
		return itest.TopicEnd(avroTopic) >= total && itest.TopicEnd(jsonTopic) >= total || pa.Exited() || pj.Exited()
	})
	for _, p := range []*itest.Proc{pa, pj} {
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d:\n%s", code, p.Out)
		}
	}

	// AWS's deserializer on every Avro record.
	avroRecs := itest.ReadRaw(t, avroTopic)
	var in bytes.Buffer
	versions := map[string]bool{}
	for _, r := range avroRecs {
		id, _, err := avro.ParseGlue(r.Value)
		if err != nil {
			t.Fatalf("value: %v", err)
		}
		if _, _, err := avro.ParseGlue(r.Key); err != nil {
			t.Fatalf("key: %v", err)
		}
		versions[id.String()] = true
		fmt.Fprintf(&in, "%s %s %s\n", r.Topic, base64.StdEncoding.EncodeToString(r.Key), base64.StdEncoding.EncodeToString(r.Value))
	}
	script, _ := filepath.Abs(filepath.Join("avro", "testdata", "glue_decode.py"))
	cmd := exec.Command(python, script, registryName)
	cmd.Stdin = &in
	cmd.Env = append(os.Environ(), motoEnv...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("AWS's deserializer: %v\n%s", err, stderr)
	}
	type pair struct{ Key, Value map[string]any }
	theirs := map[string][]pair{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var p pair
		if err := decodeNumbers([]byte(line), &p); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		k := fmt.Sprint(p.Key["id"])
		theirs[k] = append(theirs[k], p)
	}
	seen := map[string]int{}
	for _, r := range itest.ReadRaw(t, jsonTopic) {
		var key, value struct{ Payload json.RawMessage }
		if err := json.Unmarshal(r.Key, &key); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(r.Value, &value); err != nil {
			t.Fatal(err)
		}
		var kp, vp map[string]any
		decodeNumbers(key.Payload, &kp)
		decodeNumbers(value.Payload, &vp)
		k := fmt.Sprint(kp["id"])
		i := seen[k]
		seen[k]++
		if i >= len(theirs[k]) {
			t.Fatalf("JSON record %d of key %s: AWS's deserializer decoded no such record", i, k)
		}
		got := theirs[k][i]
		for _, f := range []string{"ts_ms", "ts_us", "ts_ns"} {
			delete(vp, f)
			delete(got.Value, f)
		}
		delete(vp["source"].(map[string]any), "name")
		delete(got.Value["source"].(map[string]any), "name")
		if fmt.Sprint(kp, vp) != fmt.Sprint(got.Key, got.Value) {
			t.Errorf("key %s record %d:\nJSON pipeline:          %v %v\nAWS's deserializer:     %v %v", k, i, kp, vp, got.Key, got.Value)
		}
	}
	if n := len(avroRecs); n != total || len(seen) != 3 {
		t.Errorf("%d Avro records over %d keys, want %d over 3", n, len(seen), total)
	}
	t.Logf("%d Glue records decoded by AWS's deserializer equal the JSON pipeline's", total)
	if len(versions) != 2 {
		t.Errorf("%d value schema versions, want 2 (the column added)", len(versions))
	}
}

// motoRegistry points the AWS SDK of the test (and the processes it starts
// with motoEnv) at moto and creates a Glue registry there for the test.
func motoRegistry(t *testing.T, name string) {
	t.Helper()
	for _, kv := range motoEnv {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	ctx := context.Background()
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gc := glue.NewFromConfig(awsCfg)
	if _, err := gc.CreateRegistry(ctx, &glue.CreateRegistryInput{RegistryName: aws.String(name)}); err != nil {
		t.Fatalf("creating a Glue registry on moto: %v", err)
	}
	// moto keeps at most 10 registries.
	t.Cleanup(func() {
		gc.DeleteRegistry(context.Background(), &glue.DeleteRegistryInput{RegistryId: &gluetypes.RegistryId{RegistryName: aws.String(name)}})
	})
}

// decodeNumbers unmarshals JSON with numbers as json.Number, normalised so
// that 1.0 and 1 print alike.
func decodeNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// glueSerdePython returns the python of a venv with AWS's Glue
// serializers (PyPI aws-glue-schema-registry), made once under .services.
func glueSerdePython(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".services", "glue-serde-"+glueSerdeVersion))
	if err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(dir, "bin", "python")
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err == nil {
		return python
	}
	os.RemoveAll(dir)
	for _, args := range [][]string{{"python3", "-m", "venv", dir},
		{python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "aws-glue-schema-registry==" + glueSerdeVersion}} {
		if b, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, b)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return python
}
