package scenario_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestDebeziumDifferential is the differential oracle: real
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
	itest.SkipShort(t)
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
					replay += fmt.Sprintf(" go test -count=1 -v -run 'TestDebeziumDifferential/%s' ./integration/scenario/", src)
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
	e := itest.NewEnv(t, "diff")
	for _, ext := range pgExtensions {
		e.Exec(`CREATE EXTENSION IF NOT EXISTS ` + ext)
	}
	g := newDiffGen(seed, known, pgDialect{}, diffUnknown(t, seed))
	w := g.workload(size.tables, size.rows, size.ops)
	for _, sql := range w.ddl() {
		e.Exec(sql)
	}
	e.Exec(`CREATE TABLE zz_sentinel (id integer PRIMARY KEY)`)
	// What Debezium cannot read, beside: checked against the documented
	// behaviour (pgSpecial).
	special := g.pgSpecial(size.rows*2, size.ops/6)
	for _, sql := range append(special.ddl, special.snapshot...) {
		e.Exec(sql)
	}
	// What a small max_message_bytes and tables without columns do, in a
	// pipeline of its own (diffEdges).
	edges := g.diffEdges(size.rows, size.ops/6, false)
	for _, sql := range append(edges.ddl, edges.snapshot...) {
		e.Exec(sql)
	}
	special.interleave(g, w)
	edges.interleave(g, w)
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
	cfg := e.WriteSourceConfig(src, "  delete_mode: record_and_tombstone\n")
	diffRound{
		e: e, g: g, w: w, config: cfg,
		topic: func(table string) string { return e.Prefix + ".public." + table },
		exec: func(tx []string) error {
			sql := strings.Join(tx, ";\n")
			if len(tx) > 1 {
				sql = "BEGIN;\n" + sql + ";\nCOMMIT"
			}
			_, err := e.Conn.Exec(t.Context(), sql)
			return err
		},
		count: func(table string) (int, error) {
			var n int
			err := e.Conn.QueryRow(t.Context(), "SELECT count(*) FROM "+table).Scan(&n)
			return n, err
		},
		debezium: func(out string) *itest.DebeziumProc {
			return itest.StartDebezium(t, e, out, 0, dbzProps)
		},
		beside: []*diffBeside{special.beside(e), edges.pgBeside(e)},
	}.Run(t)
}

func runDiffMariaDB(t *testing.T, seed uint64, size diffSize, known diffKnown) {
	e := itest.NewMyEnv(t, "mydiff")
	// Zero dates and values the column cannot hold (clipped, '?') are
	// written as MariaDB stores them; both sides read what it stored.
	e.Exec(`SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'`)
	e.Exec(`SET SESSION time_zone = '+00:00'`)
	d := newMyDialect(t, e)
	g := newDiffGen(seed, known, d, diffUnknown(t, seed))
	w := g.workload(size.tables, size.rows, size.ops)
	// The side tables (mySideWorkload): not Debezium's; checked against
	// the database.
	inet, stmt := myInetTable(), myStatementTable()
	mySideWorkload(g, w, inet, stmt)
	for _, sql := range append(w.ddl(), append(inet.ddl, stmt.ddl...)...) {
		e.Exec(sql)
	}
	// Keys near a small max_message_bytes, in a pipeline of its own
	// (diffEdges).
	edges := g.diffEdges(size.rows, size.ops/6, true)
	for _, sql := range append(edges.ddl, edges.snapshot...) {
		e.Exec(sql)
	}
	edges.interleave(g, w)
	e.Exec(`CREATE TABLE zz_sentinel (id INT PRIMARY KEY)`)
	var tables []string
	for _, tb := range w.tables {
		tables = append(tables, e.DB+"."+tb.name)
	}
	src := "  tables: [" + strings.Join(append(tables, e.DB+".zz_sentinel", e.DB+".zz_inet", e.DB+".zz_stmt"), ", ") + "]\n"
	// Debezium's DDL parser has no INET4/INET6: it skips zz_inet's DDL
	// (StartMariaDBDebezium), and captures no side table.
	dbzProps := "harness.max.runtime.ms=900000\n" +
		fmt.Sprintf("table.exclude.list=%[1]s.tributary_signal,%[1]s.zz_inet,%[1]s.zz_stmt,%[1]s.%[2]s\n", e.DB, edgesTable)
	if g.unknown {
		// MariaDB 10.11 ships no type Debezium's MariaDB connector lacks a
		// converter for (its VECTOR is 11.7's; UUID, INET4 and INET6 fail
		// Debezium's DDL parser, myType): the round checks that the
		// setting changes nothing on either side.
		src += "  include_unknown_types: true\n"
		dbzProps += "include.unknown.datatypes=true\n"
	}
	cfg := e.WriteConfigWith(src, "  delete_mode: record_and_tombstone\n")
	diffRound{
		e: e.Env, g: g, w: w, config: cfg, mariadb: true,
		topic: func(table string) string { return e.Prefix + "." + e.DB + "." + table },
		exec: func(tx []string) error {
			statement := len(tx) > 0 && tx[0] == myStatementFormat
			if statement {
				tx = tx[1:]
			}
			if len(tx) > 1 {
				tx = append(append([]string{"BEGIN"}, tx...), "COMMIT")
			}
			if statement {
				tx = append(append([]string{"SET SESSION binlog_format = 'STATEMENT'"}, tx...), "SET SESSION binlog_format = 'ROW'")
			}
			for _, sql := range tx {
				if _, err := e.My.Execute(sql); err != nil {
					return fmt.Errorf("%s: %w", sql, err)
				}
			}
			return nil
		},
		side: func() []string {
			var diffs []string
			for _, tb := range []*diffTable{inet, stmt} {
				diffs = append(diffs, mySideDiffs(t, e, e.Prefix+"."+e.DB+"."+tb.name, tb)...)
			}
			return diffs
		},
		count: func(table string) (int, error) {
			r, err := e.My.Execute("SELECT COUNT(*) FROM " + table)
			if err != nil {
				return 0, err
			}
			n, err := r.GetInt(0, 0)
			return int(n), err
		},
		debezium: func(out string) *itest.DebeziumProc {
			return itest.StartMariaDBDebezium(t, e, out, 0, dbzProps)
		},
		beside: []*diffBeside{edges.myBeside(t, e)},
	}.Run(t)
}

// diffRound is one round of the oracle on one source.
type diffRound struct {
	e        *itest.Env
	g        *diffGen
	w        *diffWorkload
	config   string
	mariadb  bool
	topic    func(table string) string
	exec     func(tx []string) error
	count    func(table string) (int, error)
	debezium func(out string) *itest.DebeziumProc
	// side, when set, checks the tables Debezium does not capture against
	// the database: the differences (none once Tributary has caught up).
	side func() []string
	// beside are pipelines checked apart, on what Debezium cannot read
	// (pgSpecial) or what the compared pipeline cannot have (diffEdges).
	beside []*diffBeside
}

// diffBeside is a pipeline run beside a round's: started before it, its
// snapshot awaited before Debezium starts, and checked after the round.
type diffBeside struct {
	start func(t *testing.T)
	ready func(t *testing.T) bool
	check func(t *testing.T)
}

// backfilled says whether a pipeline's log out says it is done with the
// snapshot of every table of tables: it writes no more watermarks.
func backfilled(out string, tables ...string) bool {
	for _, tb := range tables {
		if !slices.ContainsFunc(strings.Split(out, "\n"), func(line string) bool {
			return strings.Contains(line, `"backfill: table done"`) && strings.Contains(line, `"table":"`+tb+`"`)
		}) {
			return false
		}
	}
	return true
}

func (r diffRound) Run(t *testing.T) {
	t.Helper()
	topics := map[string]*diffTable{}
	var order []string
	for _, tb := range r.w.tables {
		topics[r.topic(tb.name)] = tb
		order = append(order, r.topic(tb.name))
	}
	sentinel := r.topic("zz_sentinel")
	itest.CreateSinglePartitionTopics(t, append(slices.Clone(order), sentinel)...)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\nschema:\n%s", fmt.Sprintf(format, args...), strings.Join(r.w.ddl(), ";\n"))
	}
	for _, sql := range r.w.snapshot {
		if err := r.exec([]string{sql}); err != nil {
			fail("snapshot row: %s: %v", sql, err)
		}
	}
	// The pipelines beside start first and are done with their snapshots
	// before Debezium's slot exists: their watermarks (transactions of a
	// logical decoding message) are not in its stream, where they would
	// move its last commit (source.sequence) and not Tributary's, which
	// does not have them in its publication's stream either.
	for _, b := range r.beside {
		b.start(t)
	}
	itest.WaitFor(t, 180*time.Second, "the snapshots of the pipelines beside", func() bool {
		return !slices.ContainsFunc(r.beside, func(b *diffBeside) bool { return !b.ready(t) })
	})
	itest.OneTableAtATime(t, r.config)
	dbzOut := filepath.Join(r.e.Dir, "debezium.jsonl")
	dbz := r.debezium(dbzOut)
	p := r.e.Start("run", "--config", r.config)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tributary output:\n%s", p.Out)
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("schema:\n%s", strings.Join(r.w.ddl(), ";\n"))
		}
	})
	alive := func() {
		if strings.Contains(dbz.Out.String(), "ErrorHandler - Producer failure") {
			t.Fatalf("debezium failed (nothing to compare):\n%s", dbz.Out)
		}
		if dbz.Exited() {
			t.Fatalf("debezium exited early:\n%s", dbz.Out)
		}
		if p.Exited() {
			t.Fatalf("tributary exited early:\n%s", p.Out)
		}
	}
	// Changes start once both have read the snapshot (their slots exist by then).
	snap := len(r.w.snapshot)
	itest.WaitFor(t, 180*time.Second, "both snapshots", func() bool {
		alive()
		return itest.CountLines(dbzOut) >= snap && itest.TopicsEnd(append(order, sentinel)) >= int64(snap)
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
	itest.WaitFor(t, 180*time.Second, "the sentinel on both sides", func() bool {
		alive()
		b, _ := os.ReadFile(dbzOut)
		return bytes.Count(b, dest) >= want && itest.TopicEnd(sentinel) >= int64(want)
	})
	dbzRecs := itest.ReadDebeziumOutput(t, dbzOut)
	byTopic := map[string][]itest.RawRecord{}
	for _, rec := range dbzRecs {
		if topics[rec.Topic] != nil {
			byTopic[rec.Topic] = append(byTopic[rec.Topic], rec)
		}
	}
	var dbzCount int
	for _, recs := range byTopic {
		dbzCount += len(recs)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && itest.TopicsEnd(order) < int64(dbzCount) {
		time.Sleep(250 * time.Millisecond)
	}
	var side []string
	if r.side != nil {
		// Tributary's backfills of the STATEMENT format table may still run.
		deadline := time.Now().Add(60 * time.Second)
		for side = r.side(); len(side) > 0 && time.Now().Before(deadline); side = r.side() {
			time.Sleep(2 * time.Second)
		}
	}
	if code := p.Stop(t); code != 0 {
		t.Errorf("tributary exit code %d after SIGTERM", code)
	}
	dbz.Stop()
	if len(side) > 0 {
		t.Errorf("the tables Debezium does not capture differ from the database (%d difference(s)):\n%s", len(side), strings.Join(side, "\n"))
	}
	for _, b := range r.beside {
		b.check(t)
	}

	// Both read the same WAL: streamed PostgreSQL messages agree on
	// source.lsn, txId and sequence too.
	diffs := itest.FidelityDiffs{Sanitize: itest.SanitizeStream}
	if r.mariadb {
		diffs.Sanitize = itest.SanitizeMySQL
	}
	compared := 0
	for _, topic := range order {
		tb := topics[topic]
		trib := itest.ReadTopicRaw(t, topic)
		itest.KeepFidelityOutput(t, topic, byTopic[topic], trib)
		if r.mariadb {
			itest.CheckSourceVersions(&diffs, topic, byTopic[topic], trib)
		}
		compared += diffs.CompareByKey(topic, byTopic[topic], trib)
		dbzState, tribState := foldByKey(byTopic[topic], diffs.Sanitize), foldByKey(trib, diffs.Sanitize)
		if !mapsEqual(dbzState, tribState) {
			diffs.Add(topic, -1, "final state", fmt.Sprintf("%d rows", len(dbzState)), fmt.Sprintf("%d rows (or other row images)", len(tribState)))
		}
		n, err := r.count(tb.name)
		if err != nil {
			t.Fatal(err)
		}
		if rows := stateRows(tribState); rows != n {
			diffs.Add(topic, -1, "final state: rows", fmt.Sprintf("%d in the database", n), fmt.Sprintf("%d folded from Tributary's messages", rows))
		}
		if rows := stateRows(dbzState); rows != n {
			diffs.Add(topic, -1, "final state: rows (Debezium)", fmt.Sprintf("%d folded from Debezium's messages", rows), fmt.Sprintf("%d in the database", n))
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
		len(r.w.tables), parted, unknown, r.g.unknown, snap, len(r.w.stream), compared, len(diffs.Lines), strings.Join(types, ", "))
	if len(diffs.Lines) > 0 {
		var ddl []string
		for _, tb := range r.w.tables {
			if strings.Contains(diffs.String(), r.topic(tb.name)+" ") {
				ddl = append(ddl, tb.ddl...)
			}
		}
		t.Errorf("Tributary differs from Debezium (%d difference(s)):\n%s\nthe tables that differ:\n%s", len(diffs.Lines), diffs.String(), strings.Join(ddl, ";\n"))
	}
}

// foldByKey is the state the records leave: per key the last row image
// (keyed tables), or the multiset of row images (keyless ones: a create
// adds its after image, a delete removes its before image, an update
// both), as image JSON → count.
func foldByKey(recs []itest.RawRecord, clean func(any) any) map[string]int {
	byKey := map[string]string{}
	multi := map[string]int{}
	for _, r := range recs {
		v, _ := clean(r.Value).(map[string]any)
		p, _ := v["payload"].(map[string]any)
		if p == nil {
			continue // a tombstone
		}
		after, before := brief2(p["after"]), brief2(p["before"])
		if r.Key == nil {
			if p["op"] != "c" && p["op"] != "r" {
				multi[before]--
			}
			if p["op"] != "d" {
				multi[after]++
			}
			continue
		}
		if p["op"] == "d" {
			delete(byKey, itest.RawKeyText(r))
		} else {
			byKey[itest.RawKeyText(r)] = after
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

// mySideDiffs compares Tributary's messages of a side table (folded per
// key: the last image, none after a delete) with the table's rows, every
// value as the server's text (CAST(… AS CHAR)): INET4/INET6 as docs/types.md
// documents them. (Defaults are quoted literals of the text form.)
func mySideDiffs(t *testing.T, e *itest.MyEnv, topic string, tb *diffTable) []string {
	var casts []string
	for _, c := range tb.cols {
		casts = append(casts, "CAST("+c.name+" AS CHAR)")
	}
	r, err := e.My.Execute("SELECT " + strings.Join(casts, ", ") + " FROM " + tb.name)
	if err != nil {
		return []string{err.Error()}
	}
	text := func(v any) string {
		switch v := v.(type) {
		case nil:
			return "NULL"
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		case string:
			return v
		}
		return fmt.Sprint(v)
	}
	row := func(vals func(i int) string) string {
		var parts []string
		for i, c := range tb.cols {
			parts = append(parts, c.name+"="+vals(i))
		}
		return strings.Join(parts, " ")
	}
	want := map[string]bool{}
	for i := range r.RowNumber() {
		want[row(func(j int) string {
			if null, _ := r.IsNull(i, j); null {
				if d := tb.cols[j].def; d != "" {
					// Kafka Connect's JsonConverter writes a null of a
					// field with a default as the default (as every
					// compared table's messages have it).
					return strings.Trim(d, "'")
				}
				return "NULL"
			}
			s, _ := r.GetString(i, j)
			return s
		})] = true
	}
	got := map[string]string{} // key → row
	for _, rec := range itest.ReadTopicRaw(t, topic) {
		v, _ := rec.Value.(map[string]any)
		p, _ := v["payload"].(map[string]any)
		if p == nil {
			continue
		}
		k := itest.RawKeyText(rec)
		if p["op"] == "d" {
			delete(got, k)
			continue
		}
		after, _ := p["after"].(map[string]any)
		got[k] = row(func(i int) string { return text(after[tb.cols[i].name]) })
	}
	var diffs []string
	for k, g := range got {
		if !want[g] {
			diffs = append(diffs, fmt.Sprintf("%s key %s: Tributary %s, not a row of the table", topic, k, g))
		}
		delete(want, g)
	}
	for w := range want {
		diffs = append(diffs, fmt.Sprintf("%s: row %s of the table not in Tributary's messages", topic, w))
	}
	slices.Sort(diffs)
	return diffs
}
