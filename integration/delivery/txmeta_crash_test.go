package delivery_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// A crash inside a source transaction, with transaction metadata and
// exactly once: the rows handed over before the SIGKILL, and the BEGIN
// before them, are in a Kafka transaction that never commits; the restart
// reads the source transaction again whole. A read_committed consumer
// sees its BEGIN, its four changes numbered 1 to 4 and its END once each.
func TestTransactionMetadataCrashExactlyOnce(t *testing.T) {
	e := itest.NewEnv(t, "txmcrash")
	e.Exec(`CREATE TABLE tx_a (id int PRIMARY KEY, v text)`)
	e.Exec(`CREATE TABLE tx_b (id int PRIMARY KEY, v text)`)
	cfg := e.WritePipeline(itest.PipelineConfig{Source: "  tables: [public.tx_a, public.tx_b]\n",
		Checkpoint: "  path: " + filepath.Join(e.Dir, "cp") + "\n" + itest.ExactlyOnceLines + "format:\n  provide_transaction_metadata: true\n"})
	txTopic := e.Prefix + ".transaction"

	// A first transaction, published; the pipeline stops cleanly.
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the pipeline streaming", func() bool {
		return strings.Contains(p.Out.String(), "streaming from the replication slot")
	})
	// confirmed waits until the slot confirms what is in the log now: the
	// Kafka transaction with it committed and was checkpointed (a
	// read_committed reader of a topic whose end is still open would
	// wait on it).
	confirmed := func(what string) {
		t.Helper()
		var lsn string
		if err := e.Conn.QueryRow(context.Background(), `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
			t.Fatal(err)
		}
		itest.WaitFor(t, 90*time.Second, "the slot past "+what, func() bool {
			var past bool
			err := e.Conn.QueryRow(context.Background(), `SELECT coalesce(confirmed_flush_lsn >= $1::pg_lsn, false) FROM pg_replication_slots WHERE slot_name = $2`,
				lsn, "tributary_"+e.Name).Scan(&past)
			return err == nil && past
		})
	}
	e.Exec(`INSERT INTO tx_a VALUES (1, 'one')`)
	confirmed("the first transaction")
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	// The second, over two tables, read by a pipeline that SIGKILLs
	// itself after handing over its second row.
	e.Exec(`BEGIN; INSERT INTO tx_a VALUES (2, 'two'); INSERT INTO tx_b VALUES (20, 'x'); INSERT INTO tx_a VALUES (3, 'three'); INSERT INTO tx_b VALUES (21, 'y'); COMMIT`)
	startToCrash(t, e, nil, cfg, "after-produce:2", 60*time.Second)
	p = e.Start("run", "--config", cfg)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("output after the restart:\n%s", p.Out)
		}
	})
	// A change committed now: the pipeline is not behind, and commits
	// its Kafka transaction at once.
	e.Exec(`INSERT INTO tx_b VALUES (99, 'z')`)
	confirmed("the last insert")
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	// Keyed by id, the transactions are on several partitions.
	count := map[string]int{}
	for _, m := range itest.ReadCommitted(t, txTopic) {
		pl := m.Payload()
		count[fmt.Sprint(pl["status"], " ", pl["event_count"])]++
	}
	if want := map[string]int{"BEGIN <nil>": 3, "END 1": 2, "END 4": 1}; fmt.Sprint(count) != fmt.Sprint(want) {
		t.Errorf("transaction topic %v, want %v", count, want)
	}
	orders := map[string]string{}
	for _, topic := range []string{e.Prefix + ".public.tx_a", e.Prefix + ".public.tx_b"} {
		for _, m := range itest.ReadCommitted(t, topic) {
			tx := m.Payload()["transaction"].(map[string]any)
			key := fmt.Sprint(m.Key["payload"].(map[string]any)["id"])
			if orders[key] != "" {
				t.Errorf("%s: row %s twice", topic, key)
			}
			orders[key] = fmt.Sprint(tx["total_order"], "/", tx["data_collection_order"])
		}
	}
	want := map[string]string{"1": "1/1", "2": "1/1", "20": "2/1", "3": "3/2", "21": "4/2", "99": "1/1"}
	if fmt.Sprint(orders) != fmt.Sprint(want) {
		t.Errorf("transaction blocks by id %v, want %v", orders, want)
	}
}
