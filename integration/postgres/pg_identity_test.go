package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGTableWithoutReplicaIdentityRefused: a listed table
// whose UPDATE and DELETE PostgreSQL would refuse once it is in a
// publication (no primary key and REPLICA IDENTITY DEFAULT, or REPLICA
// IDENTITY NOTHING) fails test-connection and run with the table and
// the fix named, and never joins the publication: the application's
// writes to it keep working. With no source.tables list, a table with
// a primary key but REPLICA IDENTITY NOTHING is left out of the
// publication (with a warning) instead of breaking its writes, and a
// captured table that loses its replica identity while streaming leaves
// the publication, so that its writes work again.
func TestPGTableWithoutReplicaIdentityRefused(t *testing.T) {
	e := itest.NewEnv(t, "pgnoident")
	e.Exec(`CREATE TABLE audit (at timestamptz DEFAULT now(), msg text)`)
	e.Exec(`CREATE TABLE quiet (k int PRIMARY KEY, v text)`)
	e.Exec(`ALTER TABLE quiet REPLICA IDENTITY NOTHING`)
	e.Exec(`INSERT INTO audit (msg) VALUES ('one')`)
	e.Exec(`INSERT INTO quiet VALUES (1, 'q')`)
	e.Exec(`CREATE TABLE later (k int PRIMARY KEY)`)
	e.Exec(itest.SentinelTable)
	pub := "tributary_" + e.Name
	writable := func(when string) {
		t.Helper()
		for _, q := range []string{`UPDATE audit SET msg = 'changed'`, `DELETE FROM audit WHERE false`, `UPDATE quiet SET v = 'changed'`} {
			if _, err := e.Conn.Exec(context.Background(), q); err != nil {
				t.Fatalf("%s: the application's %q failed: %v", when, q, err)
			}
		}
	}

	listed := e.WriteTablesConfig("public.audit", "public.quiet", "public.sentinel")
	code, out := itest.TestConnection(t, e, listed, "--json")
	var r itest.ConnReport
	if err := json.NewDecoder(strings.NewReader(out[max(strings.Index(out, "{"), 0):])).Decode(&r); err != nil || code != 1 || r.OK {
		t.Fatalf("test-connection with tables lacking a replica identity: exit %d, want 1 (a failed check):\n%s", code, out)
	}
	var seen bool
	for _, c := range r.Source {
		if c.Name == "replica identity" {
			seen = true
			line := c.Detail + " " + c.Fix
			if c.OK || !strings.Contains(line, "public.audit") || !strings.Contains(line, "public.quiet") || !strings.Contains(line, "REPLICA IDENTITY FULL") {
				t.Errorf("replica identity check: ok %v, %q; want it failed, naming public.audit, public.quiet and REPLICA IDENTITY FULL", c.OK, line)
			}
		}
	}
	if !seen {
		t.Errorf("no replica identity check in:\n%s", out)
	}

	p := e.Start("run", "--config", listed)
	itest.WaitFor(t, 60*time.Second, "run to refuse the tables", p.Exited)
	if p.Cmd.ProcessState.ExitCode() == 0 || !strings.Contains(p.Out.String(), "public.audit") || !strings.Contains(p.Out.String(), "REPLICA IDENTITY FULL") {
		t.Errorf("run: exit %d, want a failure naming public.audit and REPLICA IDENTITY FULL; output:\n%s", p.Cmd.ProcessState.ExitCode(), p.Out)
	}
	var pubs int
	e.Conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_publication_tables WHERE pubname = $1 AND tablename IN ('audit', 'quiet')`, pub).Scan(&pubs)
	if pubs != 0 {
		t.Errorf("run put %d of the refused tables into the publication", pubs)
	}
	writable("after the refused run")

	// No list: every table with a primary key, except one whose replica
	// identity is NOTHING.
	p = e.Start("run", "--config", e.WriteTablesConfig())
	e.PGCaughtUp(p, 1)
	writable("while capturing every table with a primary key")
	if _, tables := e.Published(pub); strings.Join(tables, ",") != "public.later,public.sentinel" {
		t.Errorf("publication lists %v, want public.later, public.sentinel", tables)
	}
	e.Exec(`ALTER TABLE later REPLICA IDENTITY NOTHING`)
	p.WaitFor(t, 30*time.Second, "later to leave the publication", func() bool {
		_, tables := e.Published(pub)
		return strings.Join(tables, ",") == "public.sentinel"
	})
	if _, err := e.Conn.Exec(context.Background(), `UPDATE later SET k = k`); err != nil {
		t.Errorf("UPDATE of a table whose replica identity became NOTHING while streaming: %v", err)
	}
	if code := p.Stop(t); code != 0 || !strings.Contains(p.Out.String(), "public.quiet") {
		t.Errorf("exit %d; want 0 and a warning naming public.quiet; output:\n%s", code, p.Out)
	}
}

// TestPGReplicaIdentityUsingIndex: a table whose replica
// identity is a unique index other than its primary key is keyed by the
// index's columns, which every old image PostgreSQL sends carries: a
// delete, a change of the index column and a change of the primary key
// all publish real keys (never a key column invented as 0 or null), and
// a consumer keyed on them ends with the table's rows. key_columns of
// other columns, which a delete would not carry, are refused at start.
func TestPGReplicaIdentityUsingIndex(t *testing.T) {
	e := itest.NewEnv(t, "pgidx")
	e.Exec(`CREATE TABLE acct (id int PRIMARY KEY, code text NOT NULL, v text, CONSTRAINT acct_code UNIQUE (code))`)
	e.Exec(`ALTER TABLE acct REPLICA IDENTITY USING INDEX acct_code`)
	e.Exec(`INSERT INTO acct VALUES (1, 'a', 'x'), (2, 'keep', 'y')`)
	e.Exec(itest.SentinelTable)

	p := e.Start("run", "--config", e.WriteTablesConfig())
	topic := e.Prefix + ".public.acct"
	itest.WaitOrDump(t, p, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 2 })
	e.Exec(`UPDATE acct SET code = 'b' WHERE id = 1`) // the identity changes
	e.Exec(`UPDATE acct SET id = 10 WHERE id = 1`)    // the primary key changes, the identity does not
	e.Exec(`DELETE FROM acct WHERE id = 10`)
	e.Exec(`UPDATE acct SET v = 'z' WHERE id = 2`)
	e.PGCaughtUp(p, 2)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	// Per key, in order (a key's messages share a partition).
	got := map[string][]string{}
	state := map[string]string{}
	for _, m := range itest.ReadTopic(t, topic) {
		key, _ := json.Marshal(m.Key["payload"])
		got[string(key)] = append(got[string(key)], fmt.Sprint(m.Payload()["op"]))
		if m.Payload()["op"] == "d" {
			delete(state, string(key))
		} else {
			after, _ := json.Marshal(m.Payload()["after"])
			state[string(key)] = string(after)
		}
	}
	want := map[string][]string{`{"code":"a"}`: {"r", "d"}, `{"code":"b"}`: {"c", "u", "d"}, `{"code":"keep"}`: {"r", "u"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ops per message key:\n got %v\nwant %v", got, want)
	}
	if len(state) != 1 || state[`{"code":"keep"}`] != `{"code":"keep","id":2,"v":"z"}` {
		t.Errorf("a consumer keyed on the message key ends with %v; want only the row of id 2", state)
	}

	p = e.Start("run", "--config", e.WritePipeline(itest.PipelineConfig{Destination: "  key_columns:\n    public.acct: [id]\n", File: "keyed.yaml"}))
	itest.WaitFor(t, 60*time.Second, "run to refuse key_columns outside the replica identity", p.Exited)
	if out := p.Out.String(); p.Cmd.ProcessState.ExitCode() == 0 || !strings.Contains(out, "destination.key_columns[public.acct]") || !strings.Contains(out, "REPLICA IDENTITY FULL") {
		t.Errorf("run with key_columns [id]: exit %d, want a failure naming destination.key_columns[public.acct] and REPLICA IDENTITY FULL; output:\n%s", p.Cmd.ProcessState.ExitCode(), out)
	}
}

// TestPGChangesOfTableDroppedWhileStopped: stop; INSERT,
// UPDATE, DROP TABLE, CREATE TABLE of the same name, INSERT; start: the
// insert and the update of the dropped table, which its WAL holds, are
// published (the Relation message describes the table the catalog no
// longer has), and so is the new table's row.
func TestPGChangesOfTableDroppedWhileStopped(t *testing.T) {
	e := itest.NewEnv(t, "pgdropped")
	e.Exec(`CREATE TABLE t (k int PRIMARY KEY, v text, n numeric(6,2))`)
	e.Exec(`INSERT INTO t VALUES (1, 'one', 1.5)`)
	e.Exec(itest.SentinelTable)
	cfg := e.WriteTablesConfig("public.t", "public.sentinel")
	topic := e.Prefix + ".public.t"
	backfillAndStop(e, cfg, topic, 1)
	e.Exec(`INSERT INTO t VALUES (2, 'two', 2.25)`)
	e.Exec(`UPDATE t SET v = 'uno' WHERE k = 1`)
	e.Exec(`DROP TABLE t`)
	e.Exec(`CREATE TABLE t (k int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO t VALUES (3, 'three')`)

	p := e.Start("run", "--config", cfg)
	e.PGCaughtUp(p, 2)
	itest.WaitOrDump(t, p, 60*time.Second, "the new table's row", func() bool { _, ok := itest.FinalState(t, topic)[3]; return ok })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	got := map[float64][]string{} // per key, in order
	for _, m := range itest.ReadTopic(t, topic) {
		after, _ := json.Marshal(m.Payload()["after"])
		k := m.Key["payload"].(map[string]any)["k"].(float64)
		got[k] = append(got[k], fmt.Sprintf("%v %s", m.Payload()["op"], after))
	}
	want := map[float64][]string{
		1: {`r {"k":1,"n":"AJY=","v":"one"}`, `u {"k":1,"n":"AJY=","v":"uno"}`},
		2: {`c {"k":2,"n":"AOE=","v":"two"}`},
		3: {`r {"k":3,"v":"three"}`},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("messages per key:\n got %v\nwant %v", got, want)
	}
}

// TestPGIdentityChangedWithDeleteInWAL: a table's replica identity changed
// (its primary key, then USING INDEX) while a delete written under the old
// identity is still in the slot (here: while the pipeline is stopped). The
// delete's old image carries the identity of when it was written (id), so
// it is keyed by that identity, which its Relation message flags (not by
// the catalog's current one, which it lacks): it is published, and the
// pipeline runs on, where every run used to exit on it.
func TestPGIdentityChangedWithDeleteInWAL(t *testing.T) {
	e := itest.NewEnv(t, "identwal")
	e.Exec(`CREATE TABLE acct (id int PRIMARY KEY, code text NOT NULL, v text, CONSTRAINT acct_code UNIQUE (code))`)
	e.Exec(`INSERT INTO acct VALUES (1, 'a', 'x'), (2, 'b', 'y')`)
	e.Exec(itest.SentinelTable)
	cfg := e.WriteTablesConfig("public.acct", "public.sentinel")
	topic := e.Prefix + ".public.acct"
	backfillAndStop(e, cfg, topic, 2)

	// While stopped (as while the stream lags): a delete under the primary
	// key identity, then the identity becomes the unique index.
	e.Exec(`DELETE FROM acct WHERE id = 1`)
	e.Exec(`ALTER TABLE acct REPLICA IDENTITY USING INDEX acct_code`)
	e.Exec(`UPDATE acct SET v = 'z' WHERE id = 2`)

	var exits []string
	for run := 1; run <= 2; run++ {
		p := e.Start("run", "--config", cfg)
		e.Exec(`INSERT INTO sentinel VALUES ($1)`, 10+run)
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) && !p.Exited() && !strings.Contains(p.Out.String(), `"id":11`) {
			time.Sleep(time.Second)
			var found bool
			for _, m := range itest.ReadTopicIfAny(t, e.Prefix+".public.sentinel") {
				if after, ok := m.Payload()["after"].(map[string]any); ok && after["id"] == float64(10+run) {
					found = true
				}
			}
			if found {
				break
			}
		}
		if p.Exited() {
			t.Logf("run %d: output (tail):\n%s", run, itest.OutTail(p.Out.String()))
			exits = append(exits, fmt.Sprintf("run %d exited %d", run, p.Cmd.ProcessState.ExitCode()))
			continue
		}
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d; output:\n%s", code, p.Out)
		}
	}
	if len(exits) > 0 {
		t.Fatalf("after the identity change, with a delete in the WAL: %s (want both running on, the delete published)", strings.Join(exits, ", "))
	}
	if deletes := countDeletes(t, topic); deletes != 1 {
		t.Errorf("%d deletes published, want 1 (row 1)", deletes)
	}
}

// TestPGPartitionIdentityWithoutTableKeyRefused: a partition with a
// REPLICA IDENTITY USING INDEX of its own that lacks the partitioned
// table's key columns (here code, under a table keyed by (id, region)):
// its deletes carry only code, and the table's messages are keyed by
// (id, region), so they could not be keyed. run refuses the listed table,
// naming the partition and the fix, where every run used to exit on the
// first such delete; with the partition's identity back to DEFAULT, its
// delete is published.
func TestPGPartitionIdentityWithoutTableKeyRefused(t *testing.T) {
	e := itest.NewEnv(t, "partident")
	e.Exec(`CREATE TABLE m (id int, region text, code text NOT NULL, v text, PRIMARY KEY (id, region)) PARTITION BY LIST (region)`)
	e.Exec(`CREATE TABLE m_eu PARTITION OF m FOR VALUES IN ('eu')`)
	e.Exec(`CREATE TABLE m_us PARTITION OF m FOR VALUES IN ('us')`)
	e.Exec(`CREATE UNIQUE INDEX m_eu_code ON m_eu (code)`)
	e.Exec(`ALTER TABLE m_eu REPLICA IDENTITY USING INDEX m_eu_code`)
	e.Exec(`INSERT INTO m VALUES (1, 'eu', 'a', 'x'), (2, 'us', 'b', 'y')`)
	e.Exec(itest.SentinelTable)
	cfg := e.WriteTablesConfig("public.m", "public.sentinel")
	topic := e.Prefix + ".public.m"
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "run to refuse the table", p.Exited)
	out, code := p.Out.String(), p.Cmd.ProcessState.ExitCode()
	if code == 0 || !strings.Contains(out, "public.m_eu (a partition whose replica identity lacks key columns of public.m") ||
		!strings.Contains(out, "ALTER TABLE public.m_eu REPLICA IDENTITY DEFAULT") {
		t.Fatalf("run exited %d; want it refused, naming the partition m_eu and the fix; output:\n%s", code, out)
	}
	// Keyed by its own primary key (inherited from m), the partition is
	// captured: its delete is published under m's key.
	e.Exec(`ALTER TABLE m_eu REPLICA IDENTITY DEFAULT`)
	p = e.Start("run", "--config", cfg)
	itest.WaitOrDump(t, p, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 2 })
	e.Exec(`DELETE FROM m WHERE id = 1 AND region = 'eu'`)
	e.Exec(`INSERT INTO sentinel VALUES (1)`)
	itest.WaitFor(t, 60*time.Second, "the sentinel or an exit", func() bool {
		if p.Exited() {
			return true
		}
		for _, m := range itest.ReadTopicIfAny(t, e.Prefix+".public.sentinel") {
			if after, ok := m.Payload()["after"].(map[string]any); ok && after["id"] == float64(1) {
				return true
			}
		}
		return false
	})
	if p.Exited() {
		t.Fatalf("exited %d on the delete from the partition; output (tail):\n%s", p.Cmd.ProcessState.ExitCode(), itest.OutTail(p.Out.String()))
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	if deletes := countDeletes(t, topic); deletes != 1 {
		t.Errorf("%d deletes, want 1", deletes)
	}
}
