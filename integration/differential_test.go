package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDebeziumDifferential is the differential oracle (issue 28): real
// Debezium (the embedded harness of integration/debezium) and Tributary
// read the same database at once, over randomized schemas and workloads
// (differential_gen_test.go), and every message pair — grouped by topic and
// key, in the order each side wrote them — must be identical outside the
// volatile fields of the side-by-side tests (fidelity_test.go,
// mysql_fidelity_test.go): key, value schema, payload, op. The state folded
// per key must be the same on both sides and hold as many rows as the
// database.
//
// DIFF_SEED replays a round (each round prints its seed and the command);
// DIFF_MINUTES runs rounds of seed, seed+1, … for that long per source
// (`make fuzz-debezium`), default one round; DIFF_SOURCES (postgres,mariadb),
// DIFF_TABLES, DIFF_ROWS (per table before the start) and DIFF_OPS (changes
// after it) size a round; DIFF_KNOWN=1 also generates what shows the
// differences being fixed (diffKnown); DIFF_UNKNOWN=1 runs every round
// with unknown types included, 0 none (default: one seed in three,
// diffUnknown).
func TestDebeziumDifferential(t *testing.T) {
	skipShort(t)
	seed := diffSeed(t)
	minutes := envInt(t, "DIFF_MINUTES", 0)
	size := diffSize{tables: envInt(t, "DIFF_TABLES", 6), rows: envInt(t, "DIFF_ROWS", 3), ops: envInt(t, "DIFF_OPS", 120)}
	known := diffKnownFromEnv(t)
	sources := "postgres,mariadb"
	if s := os.Getenv("DIFF_SOURCES"); s != "" {
		sources = s
	}
	for _, src := range strings.Split(sources, ",") {
		run, ok := map[string]func(*testing.T, uint64, diffSize, diffKnown){"postgres": runDiffPostgres, "mariadb": runDiffMariaDB}[src]
		if !ok {
			t.Fatalf("DIFF_SOURCES: unknown source %q (postgres, mariadb)", src)
		}
		t.Run(src, func(t *testing.T) {
			deadline := time.Now().Add(time.Duration(minutes) * time.Minute)
			for round := uint64(0); ; round++ {
				s := seed + round
				t.Run(fmt.Sprintf("seed_%d", s), func(t *testing.T) {
					replay := fmt.Sprintf("DIFF_SEED=%d DIFF_TABLES=%d DIFF_ROWS=%d DIFF_OPS=%d", s, size.tables, size.rows, size.ops)
					if v := os.Getenv("DIFF_KNOWN"); v != "" {
						replay += " DIFF_KNOWN=" + v
					}
					if v := os.Getenv("DIFF_UNKNOWN"); v != "" {
						replay += " DIFF_UNKNOWN=" + v
					}
					replay += fmt.Sprintf(" go test -count=1 -v -run 'TestDebeziumDifferential/%s' ./integration/", src)
					t.Logf("seed %d, known differences left out: %s; replay: %s", s, known, replay)
					t.Cleanup(func() {
						if t.Failed() {
							t.Logf("FAILED: seed %d; replay: %s", s, replay)
						}
					})
					run(t, s, size, known)
				})
				if minutes == 0 || time.Now().After(deadline) {
					break
				}
			}
		})
	}
}

type diffSize struct{ tables, rows, ops int }

// diffSeed is DIFF_SEED, or a random seed.
func diffSeed(t *testing.T) uint64 { return envSeed(t, "DIFF_SEED") }

func runDiffPostgres(t *testing.T, seed uint64, size diffSize, known diffKnown) {
	e := newEnv(t, "diff")
	for _, ext := range pgExtensions {
		e.exec(`CREATE EXTENSION IF NOT EXISTS ` + ext)
	}
	g := newDiffGen(seed, known, pgDialect{}, diffUnknown(t, seed))
	w := g.workload(size.tables, size.rows, size.ops)
	for _, sql := range w.ddl() {
		e.exec(sql)
	}
	e.exec(`CREATE TABLE zz_sentinel (id integer PRIMARY KEY)`)
	var tables []string
	for _, tb := range w.tables {
		tables = append(tables, "public."+tb.name)
	}
	tables = append(tables, "public.zz_sentinel")
	src := "  tables: [" + strings.Join(tables, ", ") + "]\n"
	// Debezium captures the same tables, a partitioned one under its root's
	// name as Tributary does (docs/postgresql.md): its publication lists
	// them with publish_via_partition_root, and it snapshots the roots
	// (SELECT from a root reads every partition), not the partitions.
	dbzProps := "harness.max.runtime.ms=900000\npublication.autocreate.mode=filtered\npublish.via.partition.root=true\n" +
		"table.include.list=" + strings.Join(tables, ",") + "\n"
	if g.unknown {
		src += "  include_unknown_types: true\n"
		dbzProps += "include.unknown.datatypes=true\n"
	}
	cfg := e.writeSourceConfig(src, "  delete_mode: record_and_tombstone\n")
	diffRound{
		e: e, g: g, w: w, config: cfg,
		topic: func(table string) string { return e.prefix + ".public." + table },
		exec: func(tx []string) error {
			sql := strings.Join(tx, ";\n")
			if len(tx) > 1 {
				sql = "BEGIN;\n" + sql + ";\nCOMMIT"
			}
			_, err := e.conn.Exec(t.Context(), sql)
			return err
		},
		count: func(table string) (int, error) {
			var n int
			err := e.conn.QueryRow(t.Context(), "SELECT count(*) FROM "+table).Scan(&n)
			return n, err
		},
		debezium: func(out string) *debeziumProc {
			return startDebezium(t, e, out, 0, dbzProps)
		},
	}.run(t)
}

func runDiffMariaDB(t *testing.T, seed uint64, size diffSize, known diffKnown) {
	e := newMyEnv(t, "mydiff")
	// Zero dates and values the column cannot hold (clipped, '?') are
	// written as MariaDB stores them; both sides read what it stored.
	e.exec(`SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'`)
	e.exec(`SET SESSION time_zone = '+00:00'`)
	d := newMyDialect(t, e)
	g := newDiffGen(seed, known, d, diffUnknown(t, seed))
	w := g.workload(size.tables, size.rows, size.ops)
	for _, sql := range w.ddl() {
		e.exec(sql)
	}
	e.exec(`CREATE TABLE zz_sentinel (id INT PRIMARY KEY)`)
	var tables []string
	for _, tb := range w.tables {
		tables = append(tables, e.db+"."+tb.name)
	}
	src := "  tables: [" + strings.Join(append(tables, e.db+".zz_sentinel"), ", ") + "]\n"
	dbzProps := "harness.max.runtime.ms=900000\n"
	if g.unknown {
		// MariaDB 10.11 ships no type Debezium's MariaDB connector lacks a
		// converter for (its VECTOR is 11.7's; UUID, INET4 and INET6 fail
		// Debezium's DDL parser, myType): the round checks that the
		// setting changes nothing on either side.
		src += "  include_unknown_types: true\n"
		dbzProps += "include.unknown.datatypes=true\n"
	}
	cfg := e.writeConfigWith(src, "  delete_mode: record_and_tombstone\n")
	diffRound{
		e: e.env, g: g, w: w, config: cfg, mariadb: true,
		topic: func(table string) string { return e.prefix + "." + e.db + "." + table },
		exec: func(tx []string) error {
			if len(tx) > 1 {
				tx = append(append([]string{"BEGIN"}, tx...), "COMMIT")
			}
			for _, sql := range tx {
				if _, err := e.my.Execute(sql); err != nil {
					return fmt.Errorf("%s: %w", sql, err)
				}
			}
			return nil
		},
		count: func(table string) (int, error) {
			r, err := e.my.Execute("SELECT COUNT(*) FROM " + table)
			if err != nil {
				return 0, err
			}
			n, err := r.GetInt(0, 0)
			return int(n), err
		},
		debezium: func(out string) *debeziumProc {
			return startMariaDBDebezium(t, e, out, 0, dbzProps)
		},
	}.run(t)
}

// diffRound is one round of the oracle on one source.
type diffRound struct {
	e        *env
	g        *diffGen
	w        *diffWorkload
	config   string
	mariadb  bool
	topic    func(table string) string
	exec     func(tx []string) error
	count    func(table string) (int, error)
	debezium func(out string) *debeziumProc
}

func (r diffRound) run(t *testing.T) {
	t.Helper()
	topics := map[string]*diffTable{}
	var order []string
	for _, tb := range r.w.tables {
		topics[r.topic(tb.name)] = tb
		order = append(order, r.topic(tb.name))
	}
	sentinel := r.topic("zz_sentinel")
	createSinglePartitionTopics(t, append(slices.Clone(order), sentinel)...)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\nschema:\n%s", fmt.Sprintf(format, args...), strings.Join(r.w.ddl(), ";\n"))
	}
	for _, sql := range r.w.snapshot {
		if err := r.exec([]string{sql}); err != nil {
			fail("snapshot row: %s: %v", sql, err)
		}
	}
	oneTableAtATime(t, r.config)
	dbzOut := filepath.Join(r.e.dir, "debezium.jsonl")
	dbz := r.debezium(dbzOut)
	p := r.e.start("run", "--config", r.config)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tributary output:\n%s", p.out)
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("schema:\n%s", strings.Join(r.w.ddl(), ";\n"))
		}
	})
	alive := func() {
		if strings.Contains(dbz.out.String(), "ErrorHandler - Producer failure") {
			t.Fatalf("debezium failed (nothing to compare):\n%s", dbz.out)
		}
		if dbz.exited() {
			t.Fatalf("debezium exited early:\n%s", dbz.out)
		}
		if p.exited() {
			t.Fatalf("tributary exited early:\n%s", p.out)
		}
	}
	// Changes start once both have read the snapshot (their slots exist by then).
	snap := len(r.w.snapshot)
	waitFor(t, 180*time.Second, "both snapshots", func() bool {
		alive()
		return countLines(dbzOut) >= snap && topicsEnd(append(order, sentinel)) >= int64(snap)
	})
	for _, tx := range r.w.stream {
		if err := r.exec(tx); err != nil {
			fail("stream: %s: %v", strings.Join(tx, "; "), err)
		}
	}
	// The sentinel: once both have published it, Debezium has written all
	// before it; Tributary's other topics may still be taking theirs.
	if err := r.exec([]string{"INSERT INTO zz_sentinel VALUES (2)"}); err != nil {
		t.Fatal(err)
	}
	// zz_sentinel sorts last and is empty in the snapshot: the snapshot's
	// "last" row is in an earlier table (pkg/snapshot/engine.go
	// markLocked), compared with the rest.
	dest := []byte(`"destination":"` + sentinel + `"`)
	want := 1
	waitFor(t, 180*time.Second, "the sentinel on both sides", func() bool {
		alive()
		b, _ := os.ReadFile(dbzOut)
		return bytes.Count(b, dest) >= want && topicEnd(sentinel) >= int64(want)
	})
	dbzRecs := readDebeziumOutput(t, dbzOut)
	byTopic := map[string][]rawRecord{}
	for _, rec := range dbzRecs {
		if topics[rec.topic] != nil {
			byTopic[rec.topic] = append(byTopic[rec.topic], rec)
		}
	}
	var dbzCount int
	for _, recs := range byTopic {
		dbzCount += len(recs)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && topicsEnd(order) < int64(dbzCount) {
		time.Sleep(250 * time.Millisecond)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("tributary exit code %d after SIGTERM", code)
	}
	dbz.stop()

	diffs := fidelityDiffs{sanitize: sanitize}
	if r.mariadb {
		diffs.sanitize = sanitizeMySQL
	}
	compared := 0
	for _, topic := range order {
		tb := topics[topic]
		trib := readTopicRaw(t, topic)
		keepFidelityOutput(t, topic, byTopic[topic], trib)
		if r.mariadb {
			checkSourceVersions(&diffs, topic, byTopic[topic], trib)
		}
		compared += diffs.compareByKey(topic, byTopic[topic], trib)
		dbzState, tribState := foldByKey(byTopic[topic], diffs.sanitize), foldByKey(trib, diffs.sanitize)
		if !mapsEqual(dbzState, tribState) {
			diffs.add(topic, -1, "final state", fmt.Sprintf("%d rows", len(dbzState)), fmt.Sprintf("%d rows (or other row images)", len(tribState)))
		}
		n, err := r.count(tb.name)
		if err != nil {
			t.Fatal(err)
		}
		if rows := stateRows(tribState); rows != n {
			diffs.add(topic, -1, "final state: rows", fmt.Sprintf("%d in the database", n), fmt.Sprintf("%d folded from Tributary's messages", rows))
		}
		if rows := stateRows(dbzState); rows != n {
			diffs.add(topic, -1, "final state: rows (Debezium)", fmt.Sprintf("%d folded from Debezium's messages", rows), fmt.Sprintf("%d in the database", n))
		}
	}
	var types []string
	for typ := range r.g.covered {
		types = append(types, typ)
	}
	slices.Sort(types)
	parted, unknown := 0, 0
	for _, tb := range r.w.tables {
		if tb.partitioned {
			parted++
		}
		if slices.ContainsFunc(tb.cols, func(c diffColumn) bool { return c.typ.unknown }) {
			unknown++
		}
	}
	t.Logf("%d tables (%d partitioned, %d with unknown types; unknown types included: %v), %d snapshot rows, %d transactions; %d message pairs compared, %d difference(s); column types: %s",
		len(r.w.tables), parted, unknown, r.g.unknown, snap, len(r.w.stream), compared, len(diffs.lines), strings.Join(types, ", "))
	if len(diffs.lines) > 0 {
		var ddl []string
		for _, tb := range r.w.tables {
			if strings.Contains(diffs.String(), r.topic(tb.name)+" ") {
				ddl = append(ddl, tb.ddl...)
			}
		}
		t.Errorf("Tributary differs from Debezium (%d difference(s)):\n%s\nthe tables that differ:\n%s", len(diffs.lines), diffs.String(), strings.Join(ddl, ";\n"))
	}
}

// rawKeyText is the canonical text of a record's key ("null" for none).
func rawKeyText(r rawRecord) string {
	m, _ := r.key.(map[string]any)
	b, _ := json.Marshal(m["payload"])
	return string(b)
}

// compareByKey compares two sides' records of a topic key by key, each
// key's records in the order written, and returns the number of pairs
// compared. Schemas are compared under the topic's name alone, so that a
// schema difference is reported once for all keys.
func (d *fidelityDiffs) compareByKey(topic string, dbz, trib []rawRecord) int {
	group := func(recs []rawRecord) ([]string, map[string][]rawRecord) {
		var keys []string
		m := map[string][]rawRecord{}
		for _, r := range recs {
			k := rawKeyText(r)
			if m[k] == nil {
				keys = append(keys, k)
			}
			m[k] = append(m[k], r)
		}
		return keys, m
	}
	// Each side reads a table's snapshot in its own order (Debezium the
	// heap, Tributary the key): the snapshot markers (first,
	// last_in_data_collection, …) are compared as the topic's sequence,
	// then left out of the per-key comparison.
	markers := func(recs []rawRecord) []any {
		var out []any
		for _, r := range recs {
			if p := valuePayload(r.value); p != nil && p["op"] == "r" {
				out = append(out, p["source"].(map[string]any)["snapshot"])
			}
		}
		return out
	}
	d.compare(topic, -1, "snapshot markers in order", markers(dbz), markers(trib))
	clean := d.sanitize
	d.sanitize = func(v any) any {
		v = clean(v)
		if p := valuePayload(v); p != nil && p["op"] == "r" {
			p["source"].(map[string]any)["snapshot"] = "<compared in order>"
		}
		return v
	}
	defer func() { d.sanitize = clean }()
	dk, dm := group(dbz)
	tk, tm := group(trib)
	for _, k := range tk {
		if dm[k] == nil {
			dk = append(dk, k)
		}
	}
	n := 0
	for _, k := range dk {
		a, b := dm[k], tm[k]
		label := topic + " key=" + k
		if len(a) != len(b) {
			d.add(label, -1, "count", fmt.Sprintf("%d messages %s", len(a), summary(a)), fmt.Sprintf("%d messages %s", len(b), summary(b)))
		}
		for i := 0; i < len(a) && i < len(b); i++ {
			n++
			ak, _ := a[i].key.(map[string]any)
			bk, _ := b[i].key.(map[string]any)
			d.compare(topic, i, "key.schema", ak["schema"], bk["schema"])
			d.compare(label, i, "key.payload", ak["payload"], bk["payload"])
			av, _ := d.sanitize(a[i].value).(map[string]any)
			bv, _ := d.sanitize(b[i].value).(map[string]any)
			if (av == nil) != (bv == nil) {
				d.add(label, i, "value", brief(av), brief(bv))
				continue
			}
			d.compare(topic, i, "value.schema", av["schema"], bv["schema"])
			d.compare(label, i, "value.payload", av["payload"], bv["payload"])
		}
	}
	return n
}

func valuePayload(v any) map[string]any {
	m, _ := v.(map[string]any)
	p, _ := m["payload"].(map[string]any)
	return p
}

// foldByKey is the state the records leave: per key the last row image
// (keyed tables), or the multiset of row images (keyless ones: a create
// adds its after image, a delete removes its before image, an update
// both), as image JSON → count.
func foldByKey(recs []rawRecord, clean func(any) any) map[string]int {
	byKey := map[string]string{}
	multi := map[string]int{}
	for _, r := range recs {
		v, _ := clean(r.value).(map[string]any)
		p, _ := v["payload"].(map[string]any)
		if p == nil {
			continue // a tombstone
		}
		after, before := brief2(p["after"]), brief2(p["before"])
		if r.key == nil {
			if p["op"] != "c" && p["op"] != "r" {
				multi[before]--
			}
			if p["op"] != "d" {
				multi[after]++
			}
			continue
		}
		if p["op"] == "d" {
			delete(byKey, rawKeyText(r))
		} else {
			byKey[rawKeyText(r)] = after
		}
	}
	for k, img := range byKey {
		multi[k+" "+img]++
	}
	for k, n := range multi {
		if n == 0 {
			delete(multi, k)
		}
	}
	return multi
}

func brief2(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func stateRows(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
