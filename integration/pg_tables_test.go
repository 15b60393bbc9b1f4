package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeTablesConfig writes a file-store pipeline config whose
// source.tables is tables (none: every table with a primary key).
func (e *env) writeTablesConfig(tables ...string) string {
	list := ""
	if len(tables) > 0 {
		list = "  tables: [" + strings.Join(tables, ", ") + "]\n"
	}
	return e.writePipeline(pipelineConfig{source: list})
}

// pgCaughtUp commits row id into the sentinel table (which must be
// captured) and waits until p published it: everything committed before
// is then handed to the producer, and a SIGTERM delivers it.
func (e *env) pgCaughtUp(p *proc, id int) {
	e.t.Helper()
	e.exec(`INSERT INTO sentinel VALUES ($1)`, id)
	topic := e.prefix + ".public.sentinel"
	p.waitFor(e.t, 120*time.Second, fmt.Sprintf("sentinel row %d", id), func() bool {
		for _, m := range readTopicIfAny(e.t, topic) {
			if after, ok := m.payload()["after"].(map[string]any); ok && after["id"] == float64(id) {
				return true
			}
		}
		return false
	})
}

func readTopicIfAny(t *testing.T, topic string) []message {
	if topicEnd(topic) == 0 {
		return nil
	}
	return readTopic(t, topic)
}

// published returns the tables publication pub lists, as schema.table.
func (e *env) published(pub string) (all bool, tables []string) {
	e.t.Helper()
	ctx := context.Background()
	if err := e.conn.QueryRow(ctx, `SELECT puballtables FROM pg_publication WHERE pubname = $1`, pub).Scan(&all); err != nil {
		e.t.Fatalf("publication %s: %v", pub, err)
	}
	rows, err := e.conn.Query(ctx, `SELECT schemaname || '.' || tablename FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1`, pub)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		rows.Scan(&s)
		tables = append(tables, s)
	}
	return all, tables
}

// finalState is the state a consumer keyed on k ends with after reading
// topic: the last message per key, a delete (or tombstone) removing it.
func finalState(t *testing.T, topic string) map[int]string {
	out := map[int]string{}
	for _, m := range readTopicIfAny(t, topic) {
		k := int(m.Key["payload"].(map[string]any)["k"].(float64))
		if m.Value == nil || m.payload()["op"] == "d" {
			delete(out, k)
			continue
		}
		out[k] = fmt.Sprint(m.payload()["after"].(map[string]any)["v"])
	}
	return out
}

// dbState reads table (k int, v text) from the database.
func (e *env) dbState(table string) map[int]string {
	e.t.Helper()
	rows, err := e.conn.Query(context.Background(), `SELECT k, v FROM `+table)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var k int
		var v string
		rows.Scan(&k, &v)
		out[k] = v
	}
	return out
}

func sameState(a, b map[int]string) string {
	var diffs []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			diffs = append(diffs, fmt.Sprintf("k=%d topic %q db %q", k, v, w))
		}
	}
	for k, w := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("k=%d missing from the topic (db %q)", k, w))
		}
	}
	if len(diffs) > 5 {
		diffs = append(diffs[:5], fmt.Sprintf("… %d differences", len(diffs)))
	}
	return strings.Join(diffs, "; ")
}

// TestPGTableWithoutKeyStaysWritable: with no source.tables list, the
// publication lists the captured tables (those with a primary key), not
// FOR ALL TABLES: a table without a primary key or replica identity in
// the same database keeps accepting UPDATE and DELETE from the
// application while Tributary runs (FOR ALL TABLES makes them fail with
// "cannot update table … because it does not have a replica identity").
// A table created while streaming is still captured, rows written before
// its discovery included.
func TestPGTableWithoutKeyStaysWritable(t *testing.T) {
	e := newEnv(t, "pgnokey")
	e.exec(`CREATE TABLE orders (k int PRIMARY KEY, v text)`)
	e.exec(`INSERT INTO orders SELECT g, 'o' || g FROM generate_series(1, 20) g`)
	e.exec(`CREATE TABLE audit_log (at timestamptz DEFAULT now(), msg text)`)
	e.exec(`INSERT INTO audit_log (msg) VALUES ('one'), ('two')`)
	e.exec(sentinelTable)
	p := e.start("run", "--config", e.writeTablesConfig())
	e.pgCaughtUp(p, 1)

	if _, err := e.conn.Exec(context.Background(), `UPDATE audit_log SET msg = 'changed' WHERE msg = 'one'`); err != nil {
		t.Fatalf("the application's UPDATE of a table without a primary key failed while Tributary runs: %v", err)
	}
	if _, err := e.conn.Exec(context.Background(), `DELETE FROM audit_log WHERE msg = 'two'`); err != nil {
		t.Fatalf("the application's DELETE from a table without a primary key failed while Tributary runs: %v", err)
	}
	all, tables := e.published("tributary_" + e.name)
	if all || strings.Join(tables, ",") != "public.orders,public.sentinel" {
		t.Errorf("publication: all tables %v, tables %v; want exactly public.orders, public.sentinel", all, tables)
	}

	// A table created while streaming: its rows before and after
	// discovery reach its topic, and a new keyless one stays writable.
	e.exec(`CREATE TABLE late (k int PRIMARY KEY, v text)`)
	e.exec(`INSERT INTO late SELECT g, 'l' || g FROM generate_series(1, 5) g`)
	e.exec(`CREATE TABLE late_log (msg text)`)
	e.exec(`INSERT INTO late_log VALUES ('x')`)
	lateTopic := e.prefix + ".public.late"
	p.waitFor(t, 60*time.Second, "the new table's rows", func() bool { return len(finalState(t, lateTopic)) >= 5 })
	e.exec(`UPDATE late SET v = 'updated' WHERE k = 1`)
	e.exec(`DELETE FROM late WHERE k = 2`)
	e.exec(`INSERT INTO late VALUES (6, 'l6')`)
	if _, err := e.conn.Exec(context.Background(), `UPDATE late_log SET msg = 'y'`); err != nil {
		t.Fatalf("UPDATE of a keyless table created while streaming failed: %v", err)
	}
	e.pgCaughtUp(p, 2)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	if d := sameState(finalState(t, lateTopic), e.dbState("late")); d != "" {
		t.Errorf("table created while streaming: topic differs from the database: %s", d)
	}
	if d := sameState(finalState(t, e.prefix+".public.orders"), e.dbState("orders")); d != "" {
		t.Errorf("orders: %s", d)
	}
}

// TestPGTableListReconciled: run with source.tables [a], stop, add b to
// the list (b has rows, gets writes while the pipeline is stopped and
// after the restart): b is backfilled and streamed with no gap, through
// the same slot. Then remove a: it leaves the publication and its changes
// are no longer published.
func TestPGTableListReconciled(t *testing.T) {
	e := newEnv(t, "pgrecon")
	e.exec(`CREATE TABLE a (k int PRIMARY KEY, v text)`)
	e.exec(`CREATE TABLE b (k int PRIMARY KEY, v text)`)
	e.exec(`INSERT INTO a SELECT g, 'a' || g FROM generate_series(1, 10) g`)
	e.exec(`INSERT INTO b SELECT g, 'b' || g FROM generate_series(1, 3000) g`)
	e.exec(sentinelTable)
	pub := "tributary_" + e.name
	aTopic, bTopic := e.prefix+".public.a", e.prefix+".public.b"

	p := e.start("run", "--config", e.writeTablesConfig("public.a", "public.sentinel"))
	e.pgCaughtUp(p, 1)
	e.exec(`UPDATE b SET v = 'while a alone' WHERE k <= 10`)
	e.exec(`INSERT INTO a VALUES (11, 'a11')`)
	e.pgCaughtUp(p, 2)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	if n := topicEnd(bTopic); n != 0 {
		t.Fatalf("b is not listed yet but has %d messages", n)
	}

	// While stopped.
	e.exec(`UPDATE b SET v = 'while stopped' WHERE k BETWEEN 5 AND 20`)
	e.exec(`DELETE FROM b WHERE k BETWEEN 21 AND 30`)
	e.exec(`INSERT INTO b VALUES (3001, 'while stopped')`)

	p = e.start("run", "--config", e.writeTablesConfig("public.a", "public.b", "public.sentinel"))
	e.exec(`UPDATE b SET v = 'after restart' WHERE k BETWEEN 15 AND 40`)
	e.exec(`DELETE FROM b WHERE k = 1`)
	e.exec(`INSERT INTO b VALUES (3002, 'after restart')`)
	e.exec(`INSERT INTO a VALUES (12, 'a12')`)
	e.pgCaughtUp(p, 3)
	// b is snapshotted while streaming: wait for the checkpoint to show
	// it done (every r row acknowledged).
	ckpt := filepath.Join(e.dir, "checkpoints", e.name+".checkpoint.json")
	waitFor(t, 90*time.Second, "the snapshot of b", func() bool {
		st, ok := readSnapshotState(ckpt)
		return ok && len(st.Tables) == 0 && slices.Contains(st.Done, "public.b")
	})
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	if d := sameState(finalState(t, bTopic), e.dbState("b")); d != "" {
		t.Errorf("b after it was added to source.tables: topic differs from the database: %s", d)
	}
	if d := sameState(finalState(t, aTopic), e.dbState("a")); d != "" {
		t.Errorf("a: %s", d)
	}
	if !strings.Contains(p.out.String(), "snapshotting tables added since the last run") {
		t.Errorf("the restart did not say it snapshots b; output:\n%s", p.out)
	}
	if strings.Contains(p.out.String(), "resnapshot") {
		t.Errorf("adding a table needed a resnapshot; output:\n%s", p.out)
	}
	for _, m := range readTopic(t, aTopic) {
		if m.payload()["op"] == "r" && m.Key["payload"].(map[string]any)["k"] == float64(12) {
			t.Errorf("a was backfilled again on the restart")
		}
	}

	// Remove a from the list.
	aBefore := topicEnd(aTopic)
	p = e.start("run", "--config", e.writeTablesConfig("public.b", "public.sentinel"))
	e.exec(`INSERT INTO a VALUES (13, 'a13')`)
	e.exec(`INSERT INTO b VALUES (3003, 'b3003')`)
	e.pgCaughtUp(p, 4)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	if n := topicEnd(aTopic); n != aBefore {
		t.Errorf("a was removed from source.tables but %d more messages were published to it", n-aBefore)
	}
	if _, tables := e.published(pub); strings.Join(tables, ",") != "public.b,public.sentinel" {
		t.Errorf("publication lists %v, want public.b, public.sentinel", tables)
	}
	if d := sameState(finalState(t, bTopic), e.dbState("b")); d != "" {
		t.Errorf("b at the end: %s", d)
	}
}

// TestPGPublicationRepaired: an installation whose publication is FOR ALL
// TABLES without publish_via_partition_root (what earlier versions
// created) and whose checkpoint predates the captured-table record: the
// restart replaces the publication with one listing the captured tables,
// says so, publishes what was committed meanwhile, backfills nothing
// again, and the keyless table accepts UPDATE again.
func TestPGPublicationRepaired(t *testing.T) {
	e := newEnv(t, "pgrepair")
	e.exec(`CREATE TABLE a (k int PRIMARY KEY, v text)`)
	e.exec(`INSERT INTO a SELECT g, 'a' || g FROM generate_series(1, 10) g`)
	e.exec(`CREATE TABLE keyless (msg text)`)
	e.exec(sentinelTable)
	pub := "tributary_" + e.name
	cfg := e.writeTablesConfig()
	p := e.start("run", "--config", cfg)
	e.pgCaughtUp(p, 1)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}

	// Make it look like an installation of an earlier version.
	ckpt := filepath.Join(e.dir, "checkpoints", e.name+".checkpoint.json")
	b, err := os.ReadFile(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	delete(f["position"].(map[string]any), "tables")
	b, _ = json.Marshal(f)
	if err := os.WriteFile(ckpt, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e.exec(`BEGIN; DROP PUBLICATION ` + pub + `; CREATE PUBLICATION ` + pub + ` FOR ALL TABLES; COMMIT`)
	e.exec(`INSERT INTO a VALUES (11, 'while stopped')`)
	e.exec(`INSERT INTO keyless VALUES ('insert works')`)

	p = e.start("run", "--config", cfg)
	e.pgCaughtUp(p, 2)
	e.exec(`INSERT INTO a VALUES (12, 'after restart')`)
	if _, err := e.conn.Exec(context.Background(), `UPDATE keyless SET msg = 'update works'`); err != nil {
		t.Fatalf("UPDATE of the keyless table still fails after the restart: %v", err)
	}
	e.pgCaughtUp(p, 3)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	if !strings.Contains(p.out.String(), "replacing it with one that lists the captured tables") {
		t.Errorf("the replacement of the FOR ALL TABLES publication was not reported; output:\n%s", p.out)
	}
	var all, viaRoot bool
	e.conn.QueryRow(context.Background(), `SELECT puballtables, pubviaroot FROM pg_publication WHERE pubname = $1`, pub).Scan(&all, &viaRoot)
	if all || !viaRoot {
		t.Errorf("publication: all tables %v, publish_via_partition_root %v", all, viaRoot)
	}
	msgs := readTopic(t, e.prefix+".public.a")
	reads := 0
	for _, m := range msgs {
		if m.payload()["op"] == "r" {
			reads++
		}
	}
	if reads != 10 {
		t.Errorf("a has %d backfill reads, want the first run's 10 (no backfill again)", reads)
	}
	if d := sameState(finalState(t, e.prefix+".public.a"), e.dbState("a")); d != "" {
		t.Errorf("a: %s", d)
	}
}
