package postgres_test

// Tables dropped while their changes are still in the slot
// (docs/postgresql.md "Tables dropped while their changes are in the
// slot"); TestPGChangesOfTableDroppedWhileStopped is in pg_identity_test.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// countDeletes counts the deletes on topic, logging their keys.
func countDeletes(t *testing.T, topic string) int {
	t.Helper()
	n := 0
	for _, m := range itest.ReadTopic(t, topic) {
		if m.Value != nil && m.Payload()["op"] == "d" {
			n++
			t.Logf("delete key %v", m.Key["payload"])
		}
	}
	return n
}

// TestPGDroppedRecreatedWhileCatchingUp: a table dropped and created again
// under the same name while the pipeline is stopped, and a restart (a
// SIGKILL after the first checkpoint) before the stream has passed the
// old table's changes. The checkpoints record the new table under the
// name (position.tables) and the dropped one apart (position.dropped), so
// after the restart the old table's remaining changes are still published,
// with its own shape; they used to be skipped.
func TestPGDroppedRecreatedWhileCatchingUp(t *testing.T) {
	e := itest.NewEnv(t, "droprecr")
	cfg, topic := e.OneRowAndSentinel()
	backfillAndStop(e, cfg, topic, 1)

	// While stopped: enough WAL for the old table that the catch-up takes
	// more than one checkpoint interval (50 ms here), then drop and
	// recreate it with another shape.
	const txns, per = 20, 1000
	for i := 0; i < txns; i++ {
		e.Exec(`INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series($1::int, $2::int) g`, 1+i*per, (i+1)*per)
	}
	e.Exec(`DROP TABLE t`)
	e.Exec(`CREATE TABLE t (k int PRIMARY KEY, v text, extra int)`)
	e.Exec(`INSERT INTO t VALUES (1000000, 'new', 7)`)

	p := e.StartWith([]string{"TRIBUTARY_TEST_CRASH=after-checkpoint:1", "TRIBUTARY_CHECKPOINT_INTERVAL=50ms"}, "run", "--config", cfg)
	itest.WaitFor(t, 120*time.Second, "the crash after the first checkpoint", p.Exited)
	cp, _ := os.ReadFile(filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json"))
	t.Logf("checkpoint after the crash: %.600s", cp)
	published := itest.TopicEnd(topic) - 1
	t.Logf("messages on %s at the crash: %d of %d old rows", topic, published, txns*per)
	if published >= txns*per {
		t.Skip("the catch-up ended before the first checkpoint (a fast machine): nothing to show")
	}

	p = e.Start("run", "--config", cfg)
	e.PGCaughtUp(p, 2)
	itest.WaitOrDump(t, p, 120*time.Second, "the new table's row", func() bool { _, ok := itest.FinalState(t, topic)[1000000]; return ok })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	seen := map[int]bool{}
	extraOnOld := 0
	for _, m := range itest.ReadTopic(t, topic) {
		k := int(m.Key["payload"].(map[string]any)["k"].(float64))
		if m.Payload()["op"] == "c" && k >= 1 && k <= txns*per {
			seen[k] = true
			if _, ok := m.Payload()["after"].(map[string]any)["extra"]; ok {
				extraOnOld++
			}
		}
	}
	var missing []string
	for k := 1; k <= txns*per; k++ {
		if !seen[k] {
			missing = append(missing, fmt.Sprint(k))
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of the %d inserts into the dropped table were never published (first: %s)", len(missing), txns*per, strings.Join(missing[:min(5, len(missing))], ","))
	}
	if extraOnOld > 0 {
		t.Errorf("%d inserts into the dropped table were published with the new table's column extra", extraOnOld)
	}
	var slot string
	e.Conn.QueryRow(context.Background(), `SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1`, "tributary_"+e.Name).Scan(&slot)
	t.Logf("slot confirmed_flush_lsn %s", slot)
}

// TestPGDroppedFullIdentityKeyedByPrimaryKey: a table with a primary key
// under REPLICA IDENTITY FULL dropped while stopped. pgoutput flags every
// column as identity under FULL, so its Relation messages no longer say
// which columns are the key; the checkpoint records it (position.full_keys)
// and the table's remaining changes are published under {"k":…} as before
// the drop, where they used to be keyed by all its columns (an update
// published as a delete and a create).
func TestPGDroppedFullIdentityKeyedByPrimaryKey(t *testing.T) {
	e, cfg, topic := fullIdentityTableStopped(t, "dropfull")
	e.Exec(`INSERT INTO t VALUES (2, 'two')`)
	e.Exec(`UPDATE t SET v = 'uno' WHERE k = 1`)
	e.Exec(`DELETE FROM t WHERE k = 2`)
	e.Exec(`DROP TABLE t`)

	p := e.Start("run", "--config", cfg)
	e.PGCaughtUp(p, 2)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	var keys []string
	bad := 0
	for _, m := range itest.ReadTopic(t, topic) {
		k, _ := json.Marshal(m.Key["payload"])
		op := "tombstone"
		if m.Value != nil {
			op = m.Payload()["op"].(string)
		}
		keys = append(keys, op+" "+string(k))
		if string(k) != `{"k":1}` && string(k) != `{"k":2}` {
			bad++
		}
	}
	t.Logf("messages (op key): %v", keys)
	if len(keys) < 4 || bad > 0 {
		t.Errorf("%d of %d messages keyed by other than the primary key k (want r, c, u, d under {\"k\":…}): %v", bad, len(keys), keys)
	}
}

// TestPGDroppedFullIdentityNullValue: a table with a primary key under
// REPLICA IDENTITY FULL, dropped while stopped after an insert with a NULL
// in its nullable column v. Were every column taken for the key (pgoutput
// flags them all under FULL), the insert's key would lack v and every run
// would exit (ErrKeyMissing); the checkpoint's key of the table keeps it
// keyed by k (docs/postgresql.md).
func TestPGDroppedFullIdentityNullValue(t *testing.T) {
	e, cfg, _ := fullIdentityTableStopped(t, "rvdropnull")
	e.Exec(`INSERT INTO t VALUES (3, NULL)`)
	e.Exec(`DROP TABLE t`)

	p := e.Start("run", "--config", cfg)
	e.Exec(`INSERT INTO sentinel VALUES (2)`)
	itest.WaitFor(t, 60*time.Second, "the sentinel row or an exit", func() bool {
		if p.Exited() {
			return true
		}
		for _, m := range itest.ReadTopicIfAny(t, e.Prefix+".public.sentinel") {
			if after, ok := m.Payload()["after"].(map[string]any); ok && after["id"] == float64(2) {
				return true
			}
		}
		return false
	})
	if p.Exited() {
		out := p.Out.String()
		if len(out) > 2000 {
			out = out[len(out)-2000:]
		}
		t.Fatalf("exited %d on the insert of a NULL into the dropped FULL table; output (tail):\n%s", p.Cmd.ProcessState.ExitCode(), out)
	}
	p.Stop(t)
}

// fullIdentityTableStopped makes table t (k int PRIMARY KEY, v text) under
// REPLICA IDENTITY FULL with one row, backfills it and stops the pipeline:
// the start of the tests of such a table dropped while stopped.
func fullIdentityTableStopped(t *testing.T, label string) (*itest.Env, string, string) {
	t.Helper()
	e := itest.NewEnv(t, label)
	e.Exec(`CREATE TABLE t (k int PRIMARY KEY, v text)`)
	e.Exec(`ALTER TABLE t REPLICA IDENTITY FULL`)
	e.Exec(`INSERT INTO t VALUES (1, 'one')`)
	e.Exec(itest.SentinelTable)
	cfg := e.WriteTablesConfig("public.t", "public.sentinel")
	topic := e.Prefix + ".public.t"
	backfillAndStop(e, cfg, topic, 1)
	return e, cfg, topic
}

// TestPGDroppedTableTheCheckpointNeverRecorded: a table created again while
// stopped joins the publication at the next start, and that start dies
// before a checkpoint store records the new table as captured (here: an
// exactly_once run killed right after its first Kafka transaction, before
// the store is written after it; a kill between the start's ALTER
// PUBLICATION and its first checkpoint leaves the same). Then, while
// stopped again, rows change in that table and it is dropped. Its changes
// are in the slot's WAL for the publication, and the next start resumes
// from a checkpoint that names only the older table under that name: they
// were skipped as changes of a table not captured (the soak's dropstopped
// shape); they are published.
//
// Under REPLICA IDENTITY FULL the Relation message flags every column, so
// it names no key: the run took all of them as the key, and a null in any
// (v here) stopped the pipeline at every start ("key column missing from
// the row image", the 60-minute soak of seed 447317). It is keyed as the
// table now called that is (Debezium reads the key by the name), and with
// no such table, not keyed (null message keys).
func TestPGDroppedTableTheCheckpointNeverRecorded(t *testing.T) {
	for _, c := range []struct {
		name     string
		identity string // ALTER TABLE t … for the table dropped unrecorded
		recreate bool   // a table t exists again at the last start
		key      string // the message key's payload of the dropped table's changes
	}{
		{"default", "", true, `{"k":2}`},
		{"full", "REPLICA IDENTITY FULL", true, `{"k":2}`},
		{"full-not-recreated", "REPLICA IDENTITY FULL", false, `null`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := itest.NewEnv(t, "dropunrec")
			cfg, topic := e.OneRowAndSentinel()
			backfillAndStop(e, cfg, topic, 1)
			body, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			eos := filepath.Join(e.Dir, "eos.yaml")
			if err := os.WriteFile(eos, append(body, itest.ExactlyOnceLines...), 0o600); err != nil {
				t.Fatal(err)
			}

			e.Exec(`DROP TABLE t`)
			e.Exec(`CREATE TABLE t (k int PRIMARY KEY, v text)`)
			if c.identity != "" {
				e.Exec(`ALTER TABLE t ` + c.identity)
			}
			e.Exec(`INSERT INTO t VALUES (1, 'one')`)
			var oid uint32
			if err := e.Conn.QueryRow(context.Background(), `SELECT 'public.t'::regclass::oid`).Scan(&oid); err != nil {
				t.Fatal(err)
			}
			p := e.StartWith([]string{"TRIBUTARY_TEST_CRASH=after-txn-commit:1"}, "run", "--config", eos)
			itest.WaitFor(t, 120*time.Second, "the crash after the first transaction", p.Exited)
			var published bool
			if err := e.Conn.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_publication_rel WHERE prrelid = $1)`, oid).Scan(&published); err != nil {
				t.Fatal(err)
			}
			cp, _ := os.ReadFile(filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json"))
			if !published || strings.Contains(string(cp), fmt.Sprint(oid)) {
				t.Fatalf("the killed start should leave the new table (OID %d) in the publication (%v) and not in the checkpoint store: %.600s\noutput:\n%s", oid, published, cp, p.Out)
			}

			e.Exec(`INSERT INTO t VALUES (2, NULL), (3, 'three')`)
			e.Exec(`UPDATE t SET v = 'uno' WHERE k = 1`)
			e.Exec(`DROP TABLE t`)
			if c.recreate {
				e.Exec(`CREATE TABLE t (k int PRIMARY KEY, v text)`)
			}

			p = e.Start("run", "--config", cfg)
			e.PGCaughtUp(p, 2)
			if code := p.Stop(t); code != 0 {
				t.Fatalf("exit %d; output:\n%s", code, p.Out)
			}
			got := map[string]bool{}
			keyOf := map[string]string{}
			for _, m := range itest.ReadCommitted(t, topic) { // the first run's records are transactional
				if m.Value == nil {
					continue
				}
				after, _ := json.Marshal(m.Payload()["after"])
				ch := fmt.Sprintf("%v %s", m.Payload()["op"], after)
				got[ch] = true
				k, _ := json.Marshal(m.Key["payload"]) // null for a null key
				keyOf[ch] = string(k)
			}
			for _, want := range []string{`c {"k":2,"v":null}`, `c {"k":3,"v":"three"}`, `u {"k":1,"v":"uno"}`} {
				if !got[want] {
					t.Errorf("the dropped table's change %s, in the WAL for the publication, was never published; messages: %v\noutput:\n%s", want, got, p.Out)
				}
			}
			if k := keyOf[`c {"k":2,"v":null}`]; got[`c {"k":2,"v":null}`] && k != c.key {
				t.Errorf("the insert of k=2 was published under key %s, want %s", k, c.key)
			}
		})
	}
}

// backfillAndStop runs the pipeline of cfg until topic has at least n
// messages (the backfill) and the stream has caught up, then stops it.
func backfillAndStop(e *itest.Env, cfg, topic string, n int64) {
	e.T.Helper()
	p := e.Start("run", "--config", cfg)
	itest.WaitOrDump(e.T, p, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= n })
	e.PGCaughtUp(p, 1)
	if code := p.Stop(e.T); code != 0 {
		e.T.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
}
