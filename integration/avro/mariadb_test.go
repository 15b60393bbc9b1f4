package avro_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
)

// TestAvroMariaDBAgainstJSON is TestAvroConfluentAgainstJSON on the
// MariaDB source (its binlog connector's source block, its types): every
// Avro record decodes to the JSON pipeline's record of the same change, and
// a column added registers a second value schema.
func TestAvroMariaDBAgainstJSON(t *testing.T) {
	e := itest.NewMyEnv(t, "avromy")
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY, name varchar(50), price decimal(10,2) NOT NULL DEFAULT 1.50, f double,
		d date, ts timestamp(3) NULL, dt datetime(6), b varbinary(10), e enum('a','b'), j json, bits bit(3), tiny tinyint,
		u tinyint unsigned, big bigint unsigned, tm time(3))`)
	e.Exec(`CREATE TABLE warm (id int PRIMARY KEY)`)
	avroCfg := e.WriteConfig("")
	itest.AppendConfig(t, avroCfg, "format:\n  key: avro\n  value: avro\n  schema_registry:\n    type: confluent\n    url: "+registry+"\n")
	j := e.Sub(t, "json")
	jsonCfg := j.WriteConfig("")
	avroTopic, jsonTopic := e.Prefix+"."+e.DB+".t", j.Prefix+"."+e.DB+".t"
	pa := e.Start("run", "--config", avroCfg)
	pj := j.Start("run", "--config", jsonCfg)
	e.Exec(`INSERT INTO warm VALUES (1)`)
	itest.WaitFor(t, 90*time.Second, "both pipelines streaming", func() bool {
		return itest.TopicEnd(e.Prefix+"."+e.DB+".warm") >= 1 && itest.TopicEnd(j.Prefix+"."+e.DB+".warm") >= 1 || pa.Exited() || pj.Exited()
	})
	e.Exec(`INSERT INTO t VALUES (1, 'héllo ☃', -128.00, -0.5, '1999-12-31', '2024-02-29 12:34:56.789', '2001-02-03 04:05:06.123456',
		x'00ff', 'b', '{"a": [1, "x"]}', b'101', -128, 255, 18446744073709551615, '-12:34:56.789')`)
	e.Exec(`INSERT INTO t (id, name) VALUES (2, NULL)`)
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
	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: registry})
	if err != nil {
		t.Fatal(err)
	}
	jsonRecs := map[string][]*kgo.Record{}
	for _, r := range itest.ReadRaw(t, jsonTopic) {
		var k struct{ Payload json.RawMessage }
		if err := json.Unmarshal(r.Key, &k); err != nil {
			t.Fatal(err)
		}
		jsonRecs[string(k.Payload)] = append(jsonRecs[string(k.Payload)], r)
	}
	seen := map[string]int{}
	avroRecs := itest.ReadRaw(t, avroTopic)
	for _, r := range avroRecs {
		keyJSON, _ := decodeConfluent(t, reg, r.Key, nil)
		jkey := fmt.Sprintf(`{"id":%v}`, keyJSON.(map[string]any)["id"])
		i := seen[jkey]
		seen[jkey]++
		if i >= len(jsonRecs[jkey]) {
			t.Fatalf("Avro record %d of key %s has no JSON counterpart", i, jkey)
		}
		_, jv, err := avro.Split(jsonRecs[jkey][i].Value)
		if err != nil {
			t.Fatal(err)
		}
		decodeConfluent(t, reg, r.Value, jv)
	}
	if len(avroRecs) != total {
		t.Errorf("%d Avro records, want %d", len(avroRecs), total)
	}
	if v := versions(t, avroTopic+"-value"); len(v) != 2 {
		t.Errorf("value subject versions %v, want 2", v)
	}
}
