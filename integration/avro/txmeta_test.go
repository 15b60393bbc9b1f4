package avro_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
)

// TestAvroTransactionMetadataAgainstDebezium is TestAvroAgainstDebezium
// with format.provide_transaction_metadata (Debezium's
// provide.transaction.metadata=true): every change's value carries its
// transaction block, and <prefix>.transaction gets each transaction's
// BEGIN and END in Avro, under the TransactionMetadataKey/Value schemas.
// The changes' and the BEGIN/END records' key and value schemas are each
// the same text as the ones Debezium's AvroConverter registers, and decode
// to the same values.
func TestAvroTransactionMetadataAgainstDebezium(t *testing.T) {
	e := itest.NewEnv(t, "avrotx")
	e.Exec(`CREATE TABLE a (id int PRIMARY KEY, name text)`)
	e.Exec(`CREATE TABLE b (id int PRIMARY KEY)`)
	e.Exec(`CREATE TABLE warm (id int PRIMARY KEY)`)

	cfg := e.WritePipeline(itest.PipelineConfig{})
	itest.AppendConfig(t, cfg, "format:\n  key: avro\n  value: avro\n  provide_transaction_metadata: true\n  schema_registry:\n    type: confluent\n    url: "+registry+"\n")
	dbzOut := filepath.Join(e.Dir, "debezium-avro.jsonl")
	dbz := startAvroDebezium(t, e, dbzOut, "provide.transaction.metadata=true\n")
	p := e.Start("run", "--config", cfg)
	aTopic, txTopic := e.Prefix+".public.a", e.Prefix+".transaction"

	e.Exec(`INSERT INTO warm VALUES (1)`)
	itest.WaitFor(t, 120*time.Second, "both streaming", func() bool {
		return itest.TopicEnd(e.Prefix+".public.warm") >= 1 && itest.CountLines(dbzOut) >= 1 || p.Exited() || dbz.Exited()
	})
	e.Exec(`BEGIN; INSERT INTO a VALUES (1, 'x'); INSERT INTO b VALUES (1); UPDATE a SET name = 'y' WHERE id = 1; COMMIT`)
	e.Exec(`INSERT INTO a VALUES (2, 'z')`)
	// a: three changes in two transactions; b: one.
	const changes, transactions = 3, 2
	itest.WaitFor(t, 120*time.Second, "the changes and transactions from both", func() bool {
		d := readAvroHarness(t, dbzOut)
		return itest.TopicEnd(aTopic) >= changes && itest.TopicEnd(e.Prefix+".public.b") >= 1 &&
			len(txRecords(t, d, aTopic)) >= changes && len(txRecords(t, d, e.Prefix+".public.b")) >= 1 &&
			len(txRecords(t, d, txTopic)) >= 2*transactions || p.Exited() || dbz.Exited()
	})
	time.Sleep(2 * time.Second) // each side's END after its last change
	if code := p.Stop(t); code != 0 {
		t.Fatalf("tributary exit %d:\n%s", code, p.Out)
	}
	dbz.Stop()

	// The changes, their transaction blocks among them.
	compareWithDebezium(t, dbzOut, aTopic, changes, func(src map[string]any) string { return fmt.Sprint(src["lsn"]) }, nil)
	compareWithDebezium(t, dbzOut, e.Prefix+".public.b", 1, func(src map[string]any) string { return fmt.Sprint(src["lsn"]) }, nil)

	compareTxMarks(t, dbzOut, txTopic, ".public.warm", transactions)
}

// TestAvroMariaDBTransactionMetadataAgainstDebezium is
// TestAvroTransactionMetadataAgainstDebezium on MariaDB: Debezium's
// MariaDB connector (as in TestAvroMariaDBAgainstDebezium) with
// provide.transaction.metadata=true beside a Tributary pipeline with
// format.provide_transaction_metadata: the changes (their transaction
// blocks among them) and the BEGIN and END records have the same key and
// value schemas, byte for byte, and decode to the same values.
// source.version, which says the connector's release, is left out.
func TestAvroMariaDBTransactionMetadataAgainstDebezium(t *testing.T) {
	e := itest.NewMyEnv(t, "avromytx")
	e.Exec(`CREATE TABLE a (id int PRIMARY KEY, name varchar(50))`)
	e.Exec(`CREATE TABLE b (id int PRIMARY KEY)`)
	e.Exec(`CREATE TABLE warm (id int PRIMARY KEY)`)
	cfg := e.WriteConfig("")
	itest.AppendConfig(t, cfg, "format:\n  key: avro\n  value: avro\n  provide_transaction_metadata: true\n  schema_registry:\n    type: confluent\n    url: "+registry+"\n")
	dbzOut := filepath.Join(e.Dir, "debezium-avro.jsonl")
	dbz := runAvroHarness(t, e.Env, "avro-mariadb",
		itest.MariaDBDebeziumProps(e, "provide.transaction.metadata=true\n", avroConverterProps(e.DB)), dbzOut)
	p := e.Start("run", "--config", cfg)
	table := func(name string) string { return e.Prefix + "." + e.DB + "." + name }
	aTopic, bTopic, txTopic := table("a"), table("b"), e.Prefix+".transaction"

	e.Exec(`INSERT INTO warm VALUES (1)`)
	itest.WaitFor(t, 120*time.Second, "both streaming", func() bool {
		return itest.TopicEnd(table("warm")) >= 1 && itest.CountLines(dbzOut) >= 1 || p.Exited() || dbz.Exited()
	})
	for _, sql := range []string{`BEGIN`, `INSERT INTO a VALUES (1, 'x')`, `INSERT INTO b VALUES (1)`,
		`UPDATE a SET name = 'y' WHERE id = 1`, `COMMIT`, `INSERT INTO a VALUES (2, 'z')`} {
		e.Exec(sql)
	}
	// a: three changes in two transactions; b: one.
	const changes, transactions = 3, 2
	itest.WaitFor(t, 120*time.Second, "the changes and transactions from both", func() bool {
		d := readAvroHarness(t, dbzOut)
		return itest.TopicEnd(aTopic) >= changes && itest.TopicEnd(bTopic) >= 1 &&
			len(txRecords(t, d, aTopic)) >= changes && len(txRecords(t, d, bTopic)) >= 1 &&
			len(txRecords(t, d, txTopic)) >= 2*transactions || p.Exited() || dbz.Exited()
	})
	time.Sleep(2 * time.Second) // each side's END after its last change
	if code := p.Stop(t); code != 0 {
		t.Fatalf("tributary exit %d:\n%s", code, p.Out)
	}
	dbz.Stop()

	position := func(src map[string]any) string { return fmt.Sprint(src["file"], src["pos"], src["row"]) }
	noVersion := func(v map[string]any) {
		if src, ok := v["source"].(map[string]any); ok {
			delete(src, "version")
		}
	}
	compareWithDebezium(t, dbzOut, aTopic, changes, position, noVersion)
	compareWithDebezium(t, dbzOut, bTopic, 1, position, noVersion)
	compareTxMarks(t, dbzOut, txTopic, "."+e.DB+".warm", transactions)
}

// txRecords are the records of recs on topic.
func txRecords(t *testing.T, recs []avroRecord, topic string) []avroRecord {
	t.Helper()
	var out []avroRecord
	for _, r := range recs {
		if r.Destination == topic {
			out = append(out, r)
		}
	}
	return out
}

// compareTxMarks compares the BEGIN and END records of the transactions
// on txTopic from Debezium (in dbzOut) and from Tributary: the
// transactions that did not change warm (the warm-up's may be a snapshot
// read on one side), matched by status and id; key and value schemas the
// same text, the same decoded values. transactions is how many ENDs.
func compareTxMarks(t *testing.T, dbzOut, txTopic, warm string, transactions int) {
	t.Helper()
	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: registry})
	if err != nil {
		t.Fatal(err)
	}
	type mark struct {
		keySchema, schema string
		key, value        any
	}
	// The warm-up's transaction is left out, its BEGIN too: Debezium's
	// MariaDB connector dates the first transaction it streams after
	// connecting by an earlier event (the server's start, minutes before).
	decodeAll := func(recs []avroRecord) map[string]mark {
		out := map[string]mark{}
		warmIDs := map[string]bool{}
		for _, r := range recs {
			v, _ := decodeConfluent(t, reg, r.Value, nil)
			if m, _ := v.(map[string]any); m["status"] == "END" && strings.Contains(fmt.Sprint(m["data_collections"]), warm) {
				warmIDs[fmt.Sprint(m["id"])] = true
			}
		}
		for _, r := range recs {
			k, ks := decodeConfluent(t, reg, r.Key, nil)
			v, vs := decodeConfluent(t, reg, r.Value, nil)
			m, _ := v.(map[string]any)
			// Debezium's binlog connectors also mark the transactions of
			// other databases on the shared server, with no event of
			// theirs (event_count 0): Tributary marks none.
			if n := fmt.Sprint(m["event_count"]); n == "0" || n == "map[long:0]" {
				continue
			}
			if !warmIDs[fmt.Sprint(m["id"])] && (m["status"] == "END" || m["status"] == "BEGIN") {
				out[fmt.Sprint(m["status"], " ", m["id"])] = mark{ks, vs, k, v}
			}
		}
		return out
	}
	var ours []avroRecord
	for _, r := range itest.ReadRaw(t, txTopic) {
		ours = append(ours, avroRecord{Destination: txTopic, Key: r.Key, Value: r.Value})
	}
	theirs, got := decodeAll(txRecords(t, readAvroHarness(t, dbzOut), txTopic)), decodeAll(ours)
	begins, ends := 0, 0
	for id, want := range theirs {
		g, ok := got[id]
		if !ok {
			if strings.HasPrefix(id, "END") {
				t.Errorf("Debezium's %s: Tributary has no such record (it has %d)", id, len(got))
			}
			continue // a BEGIN of another database's transaction (Debezium marks those too)
		}
		if strings.HasPrefix(id, "END") {
			ends++
		} else {
			begins++
		}
		for _, pair := range [][3]string{{"value", want.schema, g.schema}, {"key", want.keySchema, g.keySchema}} {
			if pair[1] != pair[2] {
				t.Errorf("%s: %s schemas differ: %s\nDebezium:  %s\nTributary: %s", id, pair[0], sameSchema(pair[1], pair[2]), pair[1], pair[2])
			}
		}
		wv, gv := want.value, g.value
		if strings.HasPrefix(id, "BEGIN") {
			// Debezium's MariaDB connector dates the BEGIN of the first
			// transaction it streams after connecting by the binlog file's
			// start (its format description event), minutes before; the
			// ENDs' ts_ms, the commit time, are compared.
			wv, gv = withoutTS(wv), withoutTS(gv)
		}
		if fmt.Sprint(want.key, wv) != fmt.Sprint(g.key, gv) {
			t.Errorf("%s: values differ\nDebezium:  %v %v\nTributary: %v %v", id, want.key, want.value, g.key, g.value)
		}
	}
	if ends != transactions || begins != transactions {
		t.Errorf("%d BEGINs and %d ENDs compared, want %d each\nDebezium: %v\nTributary: %v", begins, ends, transactions, theirs, got)
	}
	t.Logf("%d transactions' BEGIN and END: the same schemas and values from Debezium+AvroConverter and Tributary", ends)
}

// withoutTS is a decoded BEGIN or END value without its ts_ms.
func withoutTS(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		if k != "ts_ms" {
			out[k] = x
		}
	}
	return out
}
