package scenario_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/jackc/pgx/v5"
)

// TestJDBCSinkMatchesSource puts a consumer we did not write behind
// Tributary: a Kafka Connect worker (standalone) running Debezium's JDBC
// sink connector (integration/debezium/jdbc-sink/) reads the pipeline's
// topics into a second PostgreSQL database with upserts, deletes and
// schema evolution, as a user's pipeline does next. A seeded random
// workload (inserts, updates, deletes, primary-key changes, an ADD COLUMN)
// runs against the source while the publisher is SIGKILLed and restarted
// every few seconds; at the end every table in the sink must equal its
// source, row for row and column for column. That checks keys, types,
// deletes and per-key order the way the connector reads them.
//
// JDBC_SINK_SEED replays a seed; JDBC_SINK_SECONDS (default 20) sets how
// long the workload runs per source.
func TestJDBCSinkMatchesSource(t *testing.T) {
	itest.SkipShort(t)
	seed := envSeed(t, "JDBC_SINK_SEED")
	seconds := envInt(t, "JDBC_SINK_SECONDS", 20)
	if seconds < 1 {
		t.Fatalf("JDBC_SINK_SECONDS=%d: want a positive number of seconds", seconds)
	}
	t.Logf("seed %d (replay: JDBC_SINK_SEED=%d go test -count=1 -v -run '^TestJDBCSinkMatchesSource$' ./integration/scenario/)", seed, seed)
	itest.ForEachBackend(t, "jdbcsink", func(t *testing.T, b itest.Backend) {
		runJDBCSink(t, b, seed, time.Duration(seconds)*time.Second)
	})
}

// sinkColumn is a column of a sink test table: its type in each source
// dialect, the SQL giving its canonical text in each dialect, and a
// generator of SQL literals.
type sinkColumn struct {
	name     string
	pg, my   string // column types
	pgText   string // canonical text on PostgreSQL (source and sink); %s is the column
	myText   string // canonical text on MariaDB; %s is the column
	literal  func(r *rand.Rand) string
	key      bool
	nullable bool
}

var sinkTexts = []string{"plain", "héllo wörld", "日本語のテキスト", "emoji 😀🚀", "Ελληνικά", "Привет мир", "it''s quoted", ""}

func sinkText(r *rand.Rand) string {
	return "'" + sinkTexts[r.IntN(len(sinkTexts))] + fmt.Sprint(r.IntN(1000)) + "'"
}

var (
	sinkTimeText = struct{ pg, my string }{"to_char(%s AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')", "DATE_FORMAT(%s, '%%Y-%%m-%%d %%H:%%i:%%s.%%f')"}
	sinkDateText = struct{ pg, my string }{"to_char(%s, 'YYYY-MM-DD')", "DATE_FORMAT(%s, '%%Y-%%m-%%d')"}
)

func sinkTime(r *rand.Rand) string {
	at := time.Date(2000+r.IntN(40), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1e6)*1000, time.UTC)
	return "'" + at.Format("2006-01-02 15:04:05.000000") + "'"
}

func sinkDate(r *rand.Rand) string {
	return "'" + time.Date(1970+r.IntN(80), time.Month(1+r.IntN(12)), 1+r.IntN(28), 0, 0, 0, 0, time.UTC).Format("2006-01-02") + "'"
}

// sinkTables are the tables of the workload: a single integer key, a
// composite key of an integer and a text, a bigint key with a column added
// while the publisher runs.
var sinkTables = map[string][]sinkColumn{
	"js_orders": {
		{name: "id", pg: "int", my: "INT", key: true},
		{name: "name", pg: "text", my: "VARCHAR(100) CHARACTER SET utf8mb4", literal: sinkText, nullable: true},
		{name: "price", pg: "numeric(12,2)", my: "DECIMAL(12,2)", literal: func(r *rand.Rand) string {
			return fmt.Sprintf("%d.%02d", r.IntN(2e6)-1e6, r.IntN(100))
		}, nullable: true},
		{name: "qty", pg: "bigint", my: "BIGINT", literal: func(r *rand.Rand) string { return fmt.Sprint(r.Int64() >> r.IntN(64)) }, nullable: true},
		{name: "at", pg: "timestamptz", my: "DATETIME(6)", pgText: sinkTimeText.pg, myText: sinkTimeText.my, literal: sinkTime, nullable: true},
		{name: "d", pg: "date", my: "DATE", pgText: sinkDateText.pg, myText: sinkDateText.my, literal: sinkDate, nullable: true},
	},
	"js_pairs": {
		{name: "a", pg: "int", my: "INT", key: true},
		{name: "b", pg: "varchar(20)", my: "VARCHAR(20) CHARACTER SET utf8mb4", key: true},
		{name: "v", pg: "text", my: "TEXT CHARACTER SET utf8mb4", literal: sinkText, nullable: true},
		{name: "n", pg: "smallint", my: "SMALLINT", literal: func(r *rand.Rand) string { return fmt.Sprint(r.IntN(65536) - 32768) }},
		// A legacy single-byte charset and ENUM members with punctuation (MariaDB).
		{name: "legacy", pg: "varchar(40)", my: "VARCHAR(40) CHARACTER SET cp1251", literal: func(r *rand.Rand) string {
			return "'" + []string{"Привет", "Щука ёж", "plain", "Добрый день"}[r.IntN(4)] + "'"
		}, nullable: true},
		{name: "kind", pg: "text", my: "ENUM('a,b','c','d e','f''g')", literal: func(r *rand.Rand) string {
			return []string{"'a,b'", "'c'", "'d e'", "'f''g'"}[r.IntN(4)]
		}, nullable: true},
	},
	"js_notes": {
		{name: "id", pg: "bigint", my: "BIGINT", key: true},
		{name: "note", pg: "text", my: "MEDIUMTEXT CHARACTER SET utf8mb4", literal: func(r *rand.Rand) string {
			return "'" + strings.Repeat("long note ", 1+r.IntN(400)) + "'"
		}},
	},
}

// sinkAdded is the column the workload adds to js_notes half way.
var sinkAdded = sinkColumn{name: "extra", pg: "text", my: "VARCHAR(50) CHARACTER SET utf8mb4", literal: sinkText, nullable: true}

func runJDBCSink(t *testing.T, b itest.Backend, seed uint64, run time.Duration) {
	e := b.Env()
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range sinkTables {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range names {
		itest.MustExecOn(t, b, sinkCreate(b, n, sinkTables[n]))
	}
	itest.CreateTables(t, b, "sentinel")

	// The sink database, dropped after the worker stops (cleanups run last first).
	sinkDB := e.DB + "_sink"
	admin, err := pgx.Connect(context.Background(), itest.PGAdminURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(context.Background(), "CREATE DATABASE "+sinkDB); err != nil {
		t.Fatal(err)
	}
	admin.Close(context.Background())
	t.Cleanup(func() {
		if admin, err := pgx.Connect(context.Background(), itest.PGAdminURL); err == nil {
			admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+sinkDB+" WITH (FORCE)")
			admin.Close(context.Background())
		}
	})

	w := &sinkWorkload{b: b, rng: rand.New(rand.NewPCG(seed, 0x51c)), live: map[string][]string{}, next: 1}
	for _, n := range names {
		for range 200 {
			w.Insert(t, n)
		}
	}

	// The delete modes a Debezium user runs the JDBC sink with: the d event alone, or the
	// d event and its tombstone. (Tombstones alone the connector cannot take: it fails
	// with a NullPointerException when a table's first record is one.)
	deleteMode := []string{"record", "record_and_tombstone"}[w.rng.IntN(2)]
	t.Logf("%s: delete_mode %s", b.Kind(), deleteMode)
	cfg := b.Config(nil, "  delete_mode: "+deleteMode+"\n")
	worker := startJDBCSinkWorker(t, e, sinkDB)
	p := e.Start("run", "--config", cfg)

	// The writer runs for run; the publisher is SIGKILLed every 1–4 s and
	// restarted at once, so at-least-once replays overlap the workload.
	deadline := time.Now().Add(run)
	killAt := time.Now().Add(time.Duration(1000+w.rng.IntN(3000)) * time.Millisecond)
	kills, txs := 0, 0
	for time.Now().Before(deadline) {
		if time.Now().After(killAt) {
			p.Kill()
			kills++
			p = e.Start("run", "--config", cfg)
			killAt = time.Now().Add(time.Duration(1000+w.rng.IntN(3000)) * time.Millisecond)
		}
		if p.Exited() {
			t.Fatalf("tributary exited (%v); output:\n%s", p.Err, p.Out)
		}
		if txs == 150 {
			itest.MustExecOn(t, b, fmt.Sprintf("ALTER TABLE js_notes ADD COLUMN %s %s", sinkAdded.name, sinkColumnType(b, sinkAdded)))
			w.added = true
		}
		w.transaction(t, names)
		txs++
		time.Sleep(time.Duration(w.rng.IntN(20)) * time.Millisecond)
	}
	itest.AwaitBackendSentinel(t, b, p, 1)
	t.Logf("%s: %d transactions, %d SIGKILLs of the publisher", b.Kind(), txs, kills)

	sink, err := pgx.Connect(context.Background(), "postgres://postgres:postgres@127.0.0.1:5432/"+sinkDB)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close(context.Background())
	if _, err := sink.Exec(context.Background(), "SET TIME ZONE 'UTC'"); err != nil {
		t.Fatal(err)
	}
	var diff string
	ok := false
	for end := time.Now().Add(3 * time.Minute); time.Now().Before(end); time.Sleep(2 * time.Second) {
		if worker.Exited() {
			t.Fatalf("the Kafka Connect worker exited (%v); its log:\n%s", worker.Err, itest.Tail(worker.Out.String(), 4000))
		}
		if diff = sinkDiff(t, b, sink, names, w.added); diff == "" {
			ok = true
			break
		}
	}
	if !ok {
		t.Fatalf("%s (seed %d): the JDBC sink's tables differ from the source:\n%s\nConnect worker log:\n%s",
			b.Kind(), seed, diff, itest.Tail(worker.Out.String(), 4000))
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("tributary exited %d; output:\n%s", code, p.Out)
	}
}

func sinkColumnType(b itest.Backend, c sinkColumn) string {
	if b.Kind() == "postgres" {
		return c.pg
	}
	return c.my
}

func sinkCreate(b itest.Backend, table string, cols []sinkColumn) string {
	var defs, keys []string
	for _, c := range cols {
		d := c.name + " " + sinkColumnType(b, c)
		if !c.nullable {
			d += " NOT NULL"
		}
		defs = append(defs, d)
		if c.key {
			keys = append(keys, c.name)
		}
	}
	return fmt.Sprintf("CREATE TABLE %s (%s, PRIMARY KEY (%s))", table, strings.Join(defs, ", "), strings.Join(keys, ", "))
}

// sinkWorkload writes random transactions; live holds each table's keys
// (as SQL conditions) that exist.
type sinkWorkload struct {
	b     itest.Backend
	rng   *rand.Rand
	live  map[string][]string
	next  int64
	added bool
}

func (w *sinkWorkload) columns(table string) []sinkColumn {
	cols := sinkTables[table]
	if table == "js_notes" && w.added {
		cols = append(slices.Clip(cols), sinkAdded)
	}
	return cols
}

// keyValues is a fresh key: a new integer, and for js_pairs a text beside it.
func (w *sinkWorkload) keyValues(table string) ([]string, string) {
	w.next++
	if table == "js_pairs" {
		b := fmt.Sprintf("'k%d'", w.rng.IntN(3))
		return []string{fmt.Sprint(w.next), b}, fmt.Sprintf("a = %d AND b = %s", w.next, b)
	}
	return []string{fmt.Sprint(w.next)}, fmt.Sprintf("id = %d", w.next)
}

func (w *sinkWorkload) value(c sinkColumn) string {
	if c.nullable && w.rng.IntN(8) == 0 {
		return "NULL"
	}
	return c.literal(w.rng)
}

func (w *sinkWorkload) Insert(t *testing.T, table string) {
	t.Helper()
	keys, where := w.keyValues(table)
	var names, values []string
	for _, c := range w.columns(table) {
		names = append(names, c.name)
		if c.key {
			values = append(values, keys[0])
			keys = keys[1:]
		} else {
			values = append(values, w.value(c))
		}
	}
	itest.MustExecOn(t, w.b, fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(names, ", "), strings.Join(values, ", ")))
	w.live[table] = append(w.live[table], where)
}

// transaction runs 1–4 changes in one transaction: inserts, updates of the
// non-key columns, deletes, and changes of an integer key.
func (w *sinkWorkload) transaction(t *testing.T, names []string) {
	t.Helper()
	itest.MustExecOn(t, w.b, "BEGIN")
	for range 1 + w.rng.IntN(4) {
		table := names[w.rng.IntN(len(names))]
		live := w.live[table]
		op := w.rng.IntN(10)
		if len(live) == 0 || op < 3 {
			w.Insert(t, table)
			continue
		}
		i := w.rng.IntN(len(live))
		switch {
		case op < 7:
			var sets []string
			for _, c := range w.columns(table) {
				if !c.key && w.rng.IntN(2) == 0 {
					sets = append(sets, c.name+" = "+w.value(c))
				}
			}
			if len(sets) == 0 {
				sets = append(sets, w.columns(table)[len(w.columns(table))-1].name+" = "+w.value(w.columns(table)[len(w.columns(table))-1]))
			}
			itest.MustExecOn(t, w.b, fmt.Sprintf("UPDATE %s SET %s WHERE %s", table, strings.Join(sets, ", "), live[i]))
		case op < 9:
			itest.MustExecOn(t, w.b, fmt.Sprintf("DELETE FROM %s WHERE %s", table, live[i]))
			w.live[table] = slices.Delete(live, i, i+1)
		default:
			col := "id"
			if table == "js_pairs" {
				col = "a"
			}
			w.next++
			itest.MustExecOn(t, w.b, fmt.Sprintf("UPDATE %s SET %s = %d WHERE %s", table, col, w.next, live[i]))
			live[i] = strings.Replace(live[i], strings.SplitN(live[i], " AND ", 2)[0], fmt.Sprintf("%s = %d", col, w.next), 1)
		}
	}
	itest.MustExecOn(t, w.b, "COMMIT")
}

// sinkDiff compares every table's rows in the source and the sink (each
// column as canonical text, NULL as "NULL"); "" when they are equal, else
// the first differences.
func sinkDiff(t *testing.T, b itest.Backend, sink *pgx.Conn, names []string, added bool) string {
	t.Helper()
	var out strings.Builder
	for _, table := range names {
		cols := sinkTables[table]
		if table == "js_notes" && added {
			cols = append(slices.Clip(cols), sinkAdded)
		}
		var src, dst, keys []string
		for _, c := range cols {
			pgExpr, myExpr := "%s::text", "CAST(%s AS CHAR)"
			if c.pgText != "" {
				pgExpr, myExpr = c.pgText, c.myText
			}
			if b.Kind() == "postgres" {
				src = append(src, fmt.Sprintf(pgExpr, c.name))
			} else {
				src = append(src, fmt.Sprintf(myExpr, c.name))
			}
			dst = append(dst, fmt.Sprintf(pgExpr, c.name))
			if c.key {
				keys = append(keys, c.name)
			}
		}
		order := " ORDER BY " + strings.Join(keys, ", ")
		want, err := sourceRows(b, "SELECT "+strings.Join(src, ", ")+" FROM "+table+order)
		if err != nil {
			t.Fatalf("read source %s: %v", table, err)
		}
		got, err := pgRows(sink, "SELECT "+strings.Join(dst, ", ")+" FROM "+table+order)
		if err != nil {
			// The connector creates the table with the first record; until then it is missing.
			fmt.Fprintf(&out, "%s: %v\n", table, err)
			continue
		}
		if len(got) != len(want) {
			fmt.Fprintf(&out, "%s: %d rows in the sink, %d in the source\n", table, len(got), len(want))
		}
		wantSet := map[string]bool{}
		for _, r := range want {
			wantSet[r] = true
		}
		gotSet := map[string]bool{}
		shown := 0
		for _, r := range got {
			gotSet[r] = true
			if !wantSet[r] && shown < 5 {
				fmt.Fprintf(&out, "%s: sink has %s, the source has no such row\n", table, r)
				shown++
			}
		}
		for _, r := range want {
			if !gotSet[r] && shown < 10 {
				fmt.Fprintf(&out, "%s: source has %s, the sink has no such row\n", table, r)
				shown++
			}
		}
	}
	return out.String()
}

// sourceRows reads q's rows from the backend, each as its columns' text joined by " | ".
func sourceRows(b itest.Backend, q string) ([]string, error) {
	switch s := b.(type) {
	case *itest.PGBackend:
		s.Mu.Lock()
		defer s.Mu.Unlock()
		return pgRows(s.E.Conn, q)
	case *itest.MariaBackend:
		s.Mu.Lock()
		defer s.Mu.Unlock()
		r, err := s.E.My.Execute(q)
		if err != nil {
			return nil, err
		}
		var rows []string
		for i := 0; i < r.RowNumber(); i++ {
			var cols []string
			for c := 0; c < r.ColumnNumber(); c++ {
				if null, _ := r.IsNull(i, c); null {
					cols = append(cols, "NULL")
					continue
				}
				v, _ := r.GetString(i, c)
				cols = append(cols, v)
			}
			rows = append(rows, strings.Join(cols, " | "))
		}
		return rows, nil
	}
	return nil, fmt.Errorf("no source rows for backend %T", b)
}

func pgRows(conn *pgx.Conn, q string) ([]string, error) {
	rows, err := conn.Query(context.Background(), q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		cols := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				cols[i] = "NULL"
			} else {
				cols[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(cols, " | "))
	}
	return out, rows.Err()
}

// startJDBCSinkWorker starts a Kafka Connect worker (standalone, its
// offsets in e.dir) with Debezium's JDBC sink reading every topic of e's
// prefix into sinkDB; it is killed when the test ends.
func startJDBCSinkWorker(t *testing.T, e *itest.Env, sinkDB string) *itest.Proc {
	t.Helper()
	home, err := filepath.Abs(filepath.Join("..", ".services", "debezium", "jdbc-sink"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, "classes")); err != nil {
		t.Fatalf("the JDBC sink is not built (integration/debezium/build.sh jdbc-sink, run by make services-up): %v", err)
	}
	worker := filepath.Join(e.Dir, "connect-worker.properties")
	connector := filepath.Join(e.Dir, "connect-jdbc-sink.properties")
	write := func(path string, lines ...string) {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(worker,
		"bootstrap.servers="+itest.KafkaAddr,
		"key.converter=org.apache.kafka.connect.json.JsonConverter",
		"value.converter=org.apache.kafka.connect.json.JsonConverter",
		"key.converter.schemas.enable=true",
		"value.converter.schemas.enable=true",
		"offset.storage.file.filename="+filepath.Join(e.Dir, "connect.offsets"),
		"offset.flush.interval.ms=1000",
		"plugin.discovery=only_scan",
		"listeners=http://127.0.0.1:0",
		"consumer.auto.offset.reset=earliest",
		"consumer.metadata.max.age.ms=2000",
	)
	write(connector,
		"name=jdbc-sink-"+e.Name,
		"connector.class=io.debezium.connector.jdbc.JdbcSinkConnector",
		"tasks.max=1",
		// Topics of the prefix created later (the connector starts first) are found by the regex.
		"topics.regex="+strings.ReplaceAll(e.Prefix, ".", `\\.`)+`\\..*`,
		"connection.url=jdbc:postgresql://127.0.0.1:5432/"+sinkDB,
		"connection.username=postgres",
		"connection.password=postgres",
		"connection.provider=org.hibernate.engine.jdbc.connections.internal.DriverManagerConnectionProvider",
		"insert.mode=upsert",
		"delete.enabled=true",
		"primary.key.mode=record_key",
		"schema.evolution=basic",
		// The table is the topic's last part (RegexRouter, as users route), so that a
		// tombstone, which has no source block, finds its table too.
		"transforms=route",
		"transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter",
		`transforms.route.regex=.*\\.([^.]+)`,
		"transforms.route.replacement=$1",
		"collection.name.format=${topic}",
		"use.time.zone=UTC",
	)
	p := &itest.Proc{Out: &itest.SyncBuffer{}, Done: make(chan struct{})}
	p.Cmd = exec.Command("java", "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dlog4j2.configurationFile="+filepath.Join("debezium", "jdbc-sink", "log4j2.xml"),
		"-cp", filepath.Join(home, "classes")+":"+filepath.Join(home, "lib", "*"),
		"org.apache.kafka.connect.cli.ConnectStandalone", worker, connector)
	p.Cmd.Stdout, p.Cmd.Stderr = p.Out, p.Out
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.Err = p.Cmd.Wait(); close(p.Done) }()
	t.Cleanup(func() {
		if !p.Exited() {
			p.Cmd.Process.Kill()
			<-p.Done
		}
	})
	return p
}
