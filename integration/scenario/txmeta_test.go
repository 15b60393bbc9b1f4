package scenario_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// Transaction metadata (format.provide_transaction_metadata) side by side
// with Debezium's provide.transaction.metadata=true, with schemas (at
// least once) and without (exactly once): the change events (their transaction blocks) and the
// transaction topic's BEGIN and END events, compared byte for byte after
// the format oracle's masking (formatVolatile: times, log positions).

// txmetaStream is what both sides read after a snapshot row: a
// transaction over two tables, a single row, and an update changing a
// key (a delete, its tombstone and a create in one transaction).
var txmetaStream = []string{
	`BEGIN`, `INSERT INTO tx_a VALUES (2, 'two')`, `INSERT INTO tx_b VALUES (20, 'twenty')`,
	`UPDATE tx_a SET v = 'deux' WHERE id = 2`, `INSERT INTO tx_b VALUES (21, 'x')`, `COMMIT`,
	`INSERT INTO tx_a VALUES (3, 'three')`,
	`UPDATE tx_a SET id = 30 WHERE id = 3`,
}

// txmetaWant is the records of each topic: tx_a's snapshot row then c, u,
// c, d, tombstone, c; tx_b's two creates; three BEGIN/END pairs.
var txmetaWant = map[string]int{"tx_a": 7, "tx_b": 2, "transaction": 6}

// txmetaSide is a source's side of the comparison.
type txmetaSide struct {
	exec func(sql string)
	// debezium starts Debezium with extra properties, writing to out; its
	// topics are named with prefix.
	debezium func(dir, name, prefix, out string, extra string) *itest.DebeziumProc
	// pipeline writes Tributary's config with the given name and prefix
	// and top-level text.
	pipeline func(dir, name, prefix, top string) string
	table    func(prefix, table string) string // topic of a table
}

func runTxMetaOracle(t *testing.T, e *itest.Env, side txmetaSide) {
	side.exec(`CREATE TABLE tx_a (id int PRIMARY KEY, v text)`)
	side.exec(`CREATE TABLE tx_b (id int PRIMARY KEY, v text)`)
	side.exec(`INSERT INTO tx_a VALUES (1, 'one')`)
	type run struct {
		label, prefix, out string
		dbz                *itest.DebeziumProc
		trib               *itest.Proc
	}
	var runs []*run
	for _, schemas := range []bool{true, false} {
		r := &run{label: "schemas", prefix: e.Prefix}
		if !schemas {
			r.label, r.prefix = "noschemas", e.Prefix+"-ns"
		}
		dir := filepath.Join(e.Dir, r.label)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		var topics []string
		for tb := range txmetaWant {
			topics = append(topics, side.table(r.prefix, tb))
		}
		itest.CreateSinglePartitionTopics(t, topics...)
		r.out = filepath.Join(dir, "debezium.jsonl")
		r.dbz = side.debezium(dir, e.Name+"_"+r.label, r.prefix, r.out, fmt.Sprintf("provide.transaction.metadata=true\nconverter.schemas.enable=%t\n", schemas))
		format := "format:\n  provide_transaction_metadata: true\n"
		if !schemas {
			// and exactly once: BEGIN and END in the rows' Kafka transactions.
			format += "  schemas: false\n" + itest.ExactlyOnceLines
		}
		r.trib = e.Start("run", "--config", side.pipeline(dir, e.Name+"_"+r.label, r.prefix, format))
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("tributary (%s) output:\n%s", r.label, r.trib.Out)
			}
		})
		runs = append(runs, r)
	}
	itest.WaitFor(t, 120*time.Second, "both snapshots", func() bool {
		for _, r := range runs {
			if r.dbz.Exited() {
				t.Fatalf("debezium (%s) exited early:\n%s", r.label, r.dbz.Out)
			}
			if itest.CountLines(r.out) < 1 || itest.TopicEnd(side.table(r.prefix, "tx_a")) < 1 {
				return false
			}
		}
		return true
	})
	for _, sql := range txmetaStream {
		side.exec(sql)
	}
	itest.WaitFor(t, 180*time.Second, "every record on both sides", func() bool {
		for _, r := range runs {
			written := debeziumWritten(r.out)
			for tb, n := range txmetaWant {
				topic := side.table(r.prefix, tb)
				if written[topic] < n || len(readTopicBytes(t, topic)) < n {
					return false
				}
			}
		}
		return true
	})
	for _, r := range runs {
		if code := r.trib.Stop(t); code != 0 {
			t.Errorf("tributary (%s) exit code %d", r.label, code)
		}
		r.dbz.Stop()
		dbz := readDebeziumRaw(t, r.out)
		for tb, n := range txmetaWant {
			topic := side.table(r.prefix, tb)
			d, trib := dbz[topic], readTopicBytes(t, topic)
			if tb == "transaction" {
				var empty int
				d, empty = withoutEmptyTransactions(t, d)
				t.Logf("%s (%s): left out %d BEGIN/END of Debezium's for transactions without captured changes", topic, r.label, empty)
			}
			if len(d) != n || len(trib) != n {
				t.Errorf("%s (%s): %d records from Debezium, %d from Tributary, %d expected", topic, r.label, len(d), len(trib), n)
				continue
			}
			for i := range d {
				if tb == "tx_a" && i == 0 {
					// The snapshot row: each side's own snapshot source;
					// its transaction is null on both.
					if !bytes.Contains(d[i].value, []byte(`"transaction":null`)) || !bytes.Contains(trib[i].value, []byte(`"transaction":null`)) {
						t.Errorf("%s (%s) snapshot row has a transaction:\n  debezium:  %s\n  tributary: %s", topic, r.label, d[i].value, trib[i].value)
					}
					continue
				}
				dk, tk := maskTx(d[i].key), maskTx(trib[i].key)
				dv, tv := maskTx(d[i].value), maskTx(trib[i].value)
				if !bytes.Equal(dk, tk) || !bytes.Equal(dv, tv) {
					t.Errorf("%s (%s) record %d differs:\n  debezium:  %s\n  tributary: %s", topic, r.label, i, rawKV{key: dk, value: dv}, rawKV{key: tk, value: tv})
				}
			}
			if tb == "transaction" {
				t.Logf("%s (%s): BEGIN %s %s\nEND %s %s", r.label, topic, trib[0].key, trib[0].value, trib[1].key, trib[1].value)
			}
		}
	}
}

// maskTx is maskFormatVolatile; nil (a tombstone) stays nil.
func maskTx(b []byte) []byte {
	if b == nil {
		return nil
	}
	return maskFormatVolatile(bytes.Clone(b))
}

func TestTransactionMetadataPostgres(t *testing.T) {
	e := itest.NewEnv(t, "txmpg")
	runTxMetaOracle(t, e, txmetaSide{
		exec: func(sql string) { e.Exec(sql) },
		debezium: func(dir, name, prefix, out, extra string) *itest.DebeziumProc {
			de := *e
			de.Dir, de.Name, de.Prefix = dir, name, prefix
			return itest.StartDebezium(t, &de, out, 0, extra+`table.include.list=public\\.tx_.*`+"\n")
		},
		pipeline: func(dir, name, prefix, top string) string {
			pe := *e
			pe.Dir, pe.Name, pe.Prefix = dir, name, prefix
			return pe.WritePipeline(itest.PipelineConfig{Source: "  tables: [public.tx_a, public.tx_b]\n",
				Destination: "  delete_mode: record_and_tombstone\n", Checkpoint: "  path: " + filepath.Join(dir, "cp") + "\n" + top, File: "tributary.yaml"})
		},
		table: func(prefix, table string) string {
			if table == "transaction" {
				return prefix + ".transaction"
			}
			return prefix + ".public." + table
		},
	})
}

func TestTransactionMetadataMySQL(t *testing.T) {
	e := itest.NewMyEnv(t, "txmmy")
	runTxMetaOracle(t, e.Env, txmetaSide{
		exec: func(sql string) { e.Exec(sql) },
		debezium: func(dir, name, prefix, out, extra string) *itest.DebeziumProc {
			de := *e
			env := *e.Env
			env.Dir, env.Name, env.Prefix = dir, name, prefix
			de.Env = &env
			return itest.StartMariaDBDebezium(t, &de, out, 0, extra)
		},
		pipeline: func(dir, name, prefix, top string) string {
			pe := *e.Env
			pe.Dir, pe.Name, pe.Prefix = dir, name, prefix
			return pe.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: e.URL(), Source: "  tables: [" + e.DB + ".tx_a, " + e.DB + ".tx_b]\n",
				Destination: "  delete_mode: record_and_tombstone\n", Checkpoint: "  path: " + filepath.Join(dir, "cp") + "\n" + top, File: "tributary.yaml"})
		},
		table: func(prefix, table string) string {
			if table == "transaction" {
				return prefix + ".transaction"
			}
			return prefix + "." + e.DB + "." + table
		},
	})
}

// withoutEmptyTransactions leaves out of Debezium's transaction topic
// what its binlog connectors write for a transaction that changed no
// captured table (another database's, on the shared server): a BEGIN and
// an END with event_count 0, or a BEGIN alone (a statement that ends
// without a commit event); Tributary writes neither (docs/formats.md).
func withoutEmptyTransactions(t *testing.T, recs []rawKV) (kept []rawKV, left int) {
	t.Helper()
	status := func(r rawKV) string {
		switch {
		case bytes.Contains(r.value, []byte(`"status":"BEGIN"`)):
			return "BEGIN"
		case bytes.Contains(r.value, []byte(`"event_count":0,`)):
			return "END0"
		}
		return "END"
	}
	for i := 0; i < len(recs); i++ {
		if status(recs[i]) == "BEGIN" {
			if i+1 == len(recs) || status(recs[i+1]) == "BEGIN" {
				left++
				continue
			}
			if status(recs[i+1]) == "END0" {
				left += 2
				i++
				continue
			}
		}
		kept = append(kept, recs[i])
	}
	return kept, left
}
