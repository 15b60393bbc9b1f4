package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/tributary-cdc/tributary/integration/procstat"
)

// The many-tables scenarios: a schema of BENCH_TABLES tables (each of several sizes, plus
// one table for the reference), mtRows rows each, one pipeline or connector capturing all of
// them. Per size and system: the time from the exec to the first streamed change in Kafka,
// peak RSS, and CPU per event while BENCH_MANYTABLES_CHANGES updates spread over every
// table stream. Tributary and debezium-tuned only.
const (
	scManyTables        = "manytables"
	scManyTablesMariaDB = "manytables-mariadb"
	mtRows              = 3    // rows of each table
	mtTopicChunk        = 1000 // topics per CreateTopics/DeleteTopics request
	mtStall             = 10 * time.Minute
)

// mtLabel is the scenario of a run at n tables: each size its own row, so a ratio compares
// the systems at the same size.
func mtLabel(sc string, n int) string { return fmt.Sprintf("%s %d", sc, n) }

// mtSizes are the table counts of a run: one table first, the reference of the CPU target,
// then BENCH_TABLES.
func (b *bench) mtSizes() []int {
	sizes := []int{1}
	for _, n := range b.p.Tables {
		if !slices.Contains(sizes, n) {
			sizes = append(sizes, n)
		}
	}
	return sizes
}

// mtWorld is one source database of n tables and the topics every system of it writes to
// (Tributary and Debezium name a table's topic alike; each counts from the end offsets
// before its run).
type mtWorld struct {
	sc, db, prefix, schema string
	n                      int
	// topics are the tables' topics, or with routed the one topic every table's changes are
	// routed to (BENCH_MANYTABLES_TOPICS=one: ByLogicalTableRouter in both systems).
	topics []string
	routed bool
	dir    string
}

func (m mtWorld) mariadb() bool { return m.sc == scManyTablesMariaDB }

func mtTable(i int) string { return fmt.Sprintf("t%05d", i) }

// manyTablesScenario runs sc at every size and appends a run per size and system.
func (b *bench) manyTablesScenario(ctx context.Context, sc string) error {
	var failed error
	for _, n := range b.mtSizes() {
		m := mtWorld{sc: sc, n: n, db: fmt.Sprintf("bench_mt_%d", n), schema: "public"}
		if m.mariadb() {
			m.db = fmt.Sprintf("bench_mtmy_%d", n)
			m.schema = m.db
		}
		m.prefix = fmt.Sprintf("bench-mt-%s-%d", strings.ToLower(b.stamp), n)
		if m.mariadb() {
			m.prefix = fmt.Sprintf("bench-mtmy-%s-%d", strings.ToLower(b.stamp), n)
		}
		m.dir = filepath.Join(b.p.scratch, fmt.Sprintf("%s-%d", sc, n))
		m.routed = b.p.ManyTablesTopics == "one"
		for i := 1; i <= n && !m.routed; i++ {
			m.topics = append(m.topics, m.prefix+"."+m.schema+"."+mtTable(i))
		}
		if m.routed {
			m.topics = []string{m.prefix + ".all"}
		}
		if err := b.manyTablesSize(ctx, m); err != nil {
			failed = errors.Join(failed, fmt.Errorf("%s: %w", mtLabel(sc, n), err))
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return failed
}

func (b *bench) manyTablesSize(ctx context.Context, m mtWorld) (err error) {
	if err := os.MkdirAll(m.dir, 0o755); err != nil {
		return err
	}
	t0 := time.Now()
	if m.mariadb() {
		err = mtMyTables(m.db, m.n)
	} else {
		err = mtPGTables(ctx, m.db, m.n)
	}
	if err != nil {
		return fmt.Errorf("making %d tables: %w", m.n, err)
	}
	b.log.Info("tables ready", "scenario", m.sc, "tables", m.n, "took", time.Since(t0).Round(time.Millisecond))
	defer func() {
		if b.p.keep {
			return
		}
		mtDeleteTopics(context.Background(), m.topics)
		if m.mariadb() {
			dropMyDB(m.db)
		} else {
			dropDB(context.Background(), m.db)
		}
	}()
	t0 = time.Now()
	if err := mtCreateTopics(ctx, m.topics); err != nil {
		return err
	}
	b.log.Info("topics ready", "topics", len(m.topics), "took", time.Since(t0).Round(time.Millisecond))
	var failed error
	for _, sys := range b.p.Systems {
		if sys != sysTributary && sys != sysDebeziumTuned {
			continue
		}
		b.log.Info("running", "system", sys, "scenario", m.sc, "tables", m.n)
		r, err := b.manyTablesOne(ctx, m, sys)
		r.System, r.Scenario, r.Tables = sys, mtLabel(m.sc, m.n), m.n
		if err != nil {
			r.Error = err.Error()
			failed = errors.Join(failed, fmt.Errorf("%s: %w", sys, err))
			b.log.Error("run failed", "system", sys, "scenario", r.Scenario, "err", err)
		} else {
			b.log.Info("done", "system", sys, "scenario", r.Scenario, "start_s", *r.StartSeconds, "cpu_s_per_m", *r.CPUSecPerMillion, "peak_rss_mb", *r.PeakRSSMB)
		}
		b.runs = append(b.runs, r)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return failed
}

// mtPGTables makes db with n tables of mtRows rows and a publication of every table for
// Debezium, or keeps one of that shape left by an earlier run (BENCH_KEEP). Commits every
// few hundred tables: one transaction holding a lock on each of thousands of new tables
// overflows the server's lock table.
func mtPGTables(ctx context.Context, db string, n int) error {
	if c, err := connect(ctx, db); err == nil {
		var tables, pubs int
		err = c.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename ~ '^t[0-9]{5}$'),
  (SELECT count(*) FROM pg_publication WHERE pubname = 'bench_pub')`).Scan(&tables, &pubs)
		c.Close(context.Background())
		if err == nil && tables == n && pubs == 1 {
			return nil
		}
	}
	if err := dropDB(ctx, db); err != nil {
		return err
	}
	if err := adminExec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
		return err
	}
	if err := execIn(ctx, db, fmt.Sprintf(`DO $$ BEGIN FOR i IN 1..%d LOOP
  EXECUTE format('CREATE TABLE t%%s (id bigint PRIMARY KEY, v int NOT NULL, note text);
    INSERT INTO t%%s SELECT g, g, md5(g::text) FROM generate_series(1, %d) g', lpad(i::text, 5, '0'), lpad(i::text, 5, '0'));
  IF i %% 500 = 0 THEN COMMIT; END IF;
END LOOP; END $$`, n, mtRows)); err != nil {
		return err
	}
	return execIn(ctx, db, "CREATE PUBLICATION bench_pub FOR ALL TABLES")
}

// mtMyProcs are the MariaDB side's procedures: mt_tables(n) makes the tables, mt_changes(n,
// k) commits k updates spread over them, 100 to a transaction (mtPGChanges's).
var mtMyProcs = []string{`
CREATE PROCEDURE mt_tables(n int)
BEGIN
  DECLARE i int DEFAULT 1;
  WHILE i <= n DO
    SET @s = CONCAT('CREATE TABLE t', LPAD(i, 5, '0'), ' (id bigint PRIMARY KEY, v int NOT NULL, note text)');
    PREPARE st FROM @s; EXECUTE st; DEALLOCATE PREPARE st;
    SET @s = CONCAT('INSERT INTO t', LPAD(i, 5, '0'), ' SELECT seq, seq, MD5(seq) FROM seq_1_to_` + fmt.Sprint(mtRows) + `');
    PREPARE st FROM @s; EXECUTE st; DEALLOCATE PREPARE st;
    SET i = i + 1;
  END WHILE;
END`, `
CREATE PROCEDURE mt_changes(n int, lo int, hi int)
BEGIN
  DECLARE i int DEFAULT lo;
  WHILE i < hi DO
    IF i % 100 = 0 THEN START TRANSACTION; END IF;
    SET @s = CONCAT('UPDATE t', LPAD(i % n + 1, 5, '0'), ' SET v = v + 1 WHERE id = ', (i DIV n) % ` + fmt.Sprint(mtRows) + ` + 1);
    PREPARE st FROM @s; EXECUTE st; DEALLOCATE PREPARE st;
    IF i % 100 = 99 THEN COMMIT; END IF;
    SET i = i + 1;
  END WHILE;
  COMMIT;
END`}

// mtMyTables is mtPGTables on MariaDB, outside the binlog (a publisher reads the tables'
// schema when it starts, not their creation).
func mtMyTables(db string, n int) error {
	c, err := myConnect("")
	if err != nil {
		return err
	}
	var tables int64
	r, err := c.Execute(`SELECT (SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name RLIKE '^t[0-9]{5}$'),
  (SELECT count(*) FROM information_schema.routines WHERE routine_schema = ? AND routine_name = 'mt_changes')`, db, db)
	if err == nil {
		tables, _ = r.GetInt(0, 0)
		procs, _ := r.GetInt(0, 1)
		if tables == int64(n) && procs == 1 {
			c.Close()
			return nil
		}
	}
	c.Close()
	q := "`" + db + "`"
	if err := myExec("", append([]string{"DROP DATABASE IF EXISTS " + q, "CREATE DATABASE " + q, "USE " + q}, mtMyProcs...)...); err != nil {
		return err
	}
	c, err = mtMyConnect(db)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Execute("SET SESSION sql_log_bin = 0"); err != nil {
		return err
	}
	if _, err := c.Execute(fmt.Sprintf("CALL mt_tables(%d)", n)); err != nil {
		return fmt.Errorf("MariaDB %s: %d tables: %w", db, n, err)
	}
	return nil
}

// mtMyConnect connects to db as a client that takes several results: a procedure running
// prepared statements must be called by one.
func mtMyConnect(db string) (*client.Conn, error) {
	return client.Connect(mariaDBAddr, "root", "root", db, func(c *client.Conn) error {
		c.SetCapability(gomysql.CLIENT_MULTI_RESULTS)
		return nil
	})
}

// mtChanges commits changes lo..hi-1 into the source's log: change i updates row
// (i / n) % mtRows + 1 of table i % n + 1, so consecutive changes go to different tables, in
// transactions of 100.
func mtChanges(ctx context.Context, m mtWorld, lo, hi int) error {
	if m.mariadb() {
		c, err := mtMyConnect(m.db)
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err := c.Execute(fmt.Sprintf("CALL mt_changes(%d, %d, %d)", m.n, lo, hi)); err != nil {
			return fmt.Errorf("MariaDB %s: changes %d to %d: %w", m.db, lo, hi-1, err)
		}
		return nil
	}
	return execIn(ctx, m.db, fmt.Sprintf(`DO $$ BEGIN FOR i IN %d..%d LOOP
  EXECUTE format('UPDATE t%%s SET v = v + 1 WHERE id = %%s', lpad((i %% %d + 1)::text, 5, '0'), (i / %d) %% %d + 1);
  IF i %% 100 = 99 THEN COMMIT; END IF;
END LOOP; END $$`, lo, hi-1, m.n, m.n, mtRows))
}

// mtCreateTopics creates topics of one partition each (a table's changes keep their order
// in one partition whatever the key), append-time stamped, and waits until all are served.
func mtCreateTopics(ctx context.Context, topics []string) error {
	cl, adm, err := adminClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	ts := "LogAppendTime"
	for c := range slices.Chunk(topics, mtTopicChunk) {
		resp, err := adm.CreateTopics(ctx, 1, 1, map[string]*string{"message.timestamp.type": &ts}, c...)
		if err != nil {
			return fmt.Errorf("create %d topics: %w", len(c), err)
		}
		for _, t := range resp.Sorted() {
			if t.Err != nil {
				return fmt.Errorf("create topic %s: %w", t.Topic, t.Err)
			}
		}
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		ends, err := mtEnds(ctx, adm, topics)
		if err == nil && len(ends) == len(topics) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d topics created, %d served within 5 minutes (%v)", len(topics), len(ends), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func mtDeleteTopics(ctx context.Context, topics []string) {
	cl, adm, err := adminClient()
	if err != nil {
		return
	}
	defer cl.Close()
	for c := range slices.Chunk(topics, mtTopicChunk) {
		adm.DeleteTopics(ctx, c...)
	}
}

// mtEnds is the end offset of each topic's one partition.
func mtEnds(ctx context.Context, adm *kadm.Client, topics []string) (map[string]int64, error) {
	out := map[string]int64{}
	var errs []error
	for c := range slices.Chunk(topics, mtTopicChunk) {
		ends, err := adm.ListEndOffsets(ctx, c...)
		if err != nil {
			return out, err
		}
		ends.Each(func(o kadm.ListedOffset) {
			if o.Err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", o.Topic, o.Err))
				return
			}
			out[o.Topic] += o.Offset
		})
	}
	return out, errors.Join(errs...)
}

func mtSum(ends map[string]int64) int64 {
	var n int64
	for _, v := range ends {
		n += v
	}
	return n
}

// manyTablesOne runs sys on m: readied (Tributary: a first start, no_data, until a change is
// published and checkpointed; Debezium: a slot, or the binlog position), then the measured
// process. Right
// after its exec the harness commits one change to the first table; the start time is the
// broker's append time of its record minus the exec. Then it commits
// BENCH_MANYTABLES_CHANGES changes spread over every table and waits for all of them: CPU
// per event is the process's CPU over that span ÷ the changes. Peak RSS is VmHWM at the end.
func (b *bench) manyTablesOne(ctx context.Context, m mtWorld, sys string) (r run, err error) {
	cl, adm, err := adminClient()
	if err != nil {
		return r, err
	}
	defer cl.Close()
	dir := filepath.Join(m.dir, sys)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	name := fmt.Sprintf("bench_mt_trib_%d", m.n)
	slot := "tributary_" + name
	if sys == sysDebeziumTuned {
		slot = fmt.Sprintf("bench_mt_dbz_%d", m.n)
	}
	defer func() {
		if !m.mariadb() {
			// No slot left behind: the server has few, shared by everyone.
			adminExec(context.Background(), fmt.Sprintf("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '%s' AND NOT active", slot))
			execIn(context.Background(), m.db, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{"tributary_" + name}.Sanitize())
		}
	}()

	var launch func() (*child, error)
	var pos binlogPos
	if sys == sysTributary {
		cfg, err := mtTributaryConfig(m, name, dir)
		if err != nil {
			return r, err
		}
		launch = func() (*child, error) {
			cmd := exec.Command(b.p.binary, "run", "--config", cfg)
			cmd.Dir = dir
			return startChild(cmd, filepath.Join(dir, "run.log"))
		}
		t0 := time.Now()
		first, err := launch()
		if err != nil {
			return r, err
		}
		err = mtFirstChange(ctx, adm, m, first)
		if serr := first.stop(2 * time.Minute); err == nil && serr != nil {
			err = serr
		}
		if err != nil {
			return r, fmt.Errorf("first start: %w", err)
		}
		os.Rename(filepath.Join(dir, "run.log"), filepath.Join(dir, "first-start.log"))
		r.Note = fmt.Sprintf("first start to its first change %.1f s", time.Since(t0).Seconds())
	} else {
		d := debezium{p: b.p, tuned: true}
		if _, err := os.Stat(filepath.Join(d.home(), "classes", "BenchRunner.class")); err != nil {
			return r, errors.New("the Debezium runner is not built: run integration/bench/debezium/build.sh")
		}
		props, lib := "", filepath.Join(d.home(), "lib")
		if m.mariadb() {
			if pos, err = myBinlogPos(); err != nil {
				return r, err
			}
			lib = filepath.Join(b.p.repo, ".services", "debezium", "mariadb", "lib")
			// Properties.load keeps the last of a key: this include list replaces the one table's.
			props = d.myStreamProperties(dir, m.db, m.prefix, &pos) + `table.include.list=` + m.db + `\\.t[0-9]+` + "\n" + mtDebeziumRoute(m)
		} else {
			if err := execIn(ctx, m.db, fmt.Sprintf("SELECT pg_create_logical_replication_slot('%s', 'pgoutput')", slot)); err != nil {
				return r, err
			}
			props = d.properties(m.db, slot, m.prefix, "no_data") + `table.include.list=public\\.t[0-9]+` + "\n" + mtDebeziumRoute(m)
		}
		measure := filepath.Join(dir, "measure.properties")
		if err := os.WriteFile(measure, []byte(props), 0o600); err != nil {
			return r, err
		}
		w := world{system: sys, scenario: m.sc, dir: dir}
		launch = func() (*child, error) {
			c, _, err := d.run(ctx, w, lib, measure)
			return c, err
		}
	}

	probe := m.topics[0]
	base, err := mtEnds(ctx, adm, []string{probe})
	if err != nil {
		return r, err
	}
	t0 := time.Now()
	c, err := launch()
	if err != nil {
		return r, err
	}
	defer func() {
		if serr := c.stop(2 * time.Minute); serr != nil && err == nil {
			err = serr
		}
	}()
	// One change, made right after the exec: the slot or the binlog position keeps it until
	// the publisher is ready to stream.
	if err := mtChanges(ctx, m, 0, 1); err != nil {
		return r, err
	}
	ends, err := mtWait(ctx, adm, []string{probe}, base[probe]+1, c)
	if err != nil {
		return r, fmt.Errorf("the first change: %w", err)
	}
	first, err := lastAppend(ctx, probe, map[int32]int64{0: ends[probe]})
	if err != nil {
		return r, err
	}
	r.StartSeconds = ptr(first.Sub(t0).Seconds())

	k := b.p.ManyTablesChanges
	all, err := mtEnds(ctx, adm, m.topics)
	if err != nil {
		return r, err
	}
	cpu0, err := cpuSeconds(c.pid())
	if err != nil {
		return r, err
	}
	t1 := time.Now()
	if err := mtChanges(ctx, m, 1, 1+k); err != nil {
		return r, err
	}
	if _, err := mtWait(ctx, adm, m.topics, mtSum(all)+int64(k), c); err != nil {
		return r, fmt.Errorf("%d changes: %w", k, err)
	}
	secs := time.Since(t1).Seconds()
	cpu1, err := cpuSeconds(c.pid())
	if err != nil {
		return r, err
	}
	hwm, err := procstat.PeakRSSMB(c.pid())
	if err != nil {
		return r, err
	}
	r.Events = int64(k)
	r.EventsPerSec = float64(k) / secs
	r.CPUSecPerMillion = ptr((cpu1 - cpu0) / float64(k) * 1e6)
	r.PeakRSSMB = ptr(hwm)
	where := "a topic each"
	if m.routed {
		where = "routed to one topic"
	}
	r.Note = strings.TrimPrefix(r.Note+fmt.Sprintf("; %d tables, %s; start → first change %.2f s", m.n, where, *r.StartSeconds), "; ")
	return r, nil
}

// mtWait polls the end offsets of topics until they add up to want; it fails when the sum
// does not move for mtStall or the publisher exits.
func mtWait(ctx context.Context, adm *kadm.Client, topics []string, want int64, c *child) (map[string]int64, error) {
	last, moved := int64(-1), time.Now()
	every := 20 * time.Millisecond
	if len(topics) > 1 {
		every = 250 * time.Millisecond
	}
	for {
		ends, err := mtEnds(ctx, adm, topics)
		if err != nil {
			return nil, err
		}
		n := mtSum(ends)
		if n >= want {
			return ends, nil
		}
		if n != last {
			last, moved = n, time.Now()
		} else if time.Since(moved) > mtStall {
			return nil, fmt.Errorf("%d of %d records, none for %s:\n%s", n, want, mtStall, c.tail())
		}
		select {
		case <-c.done:
			return nil, fmt.Errorf("the publisher exited: %v\n%s", c.err, c.tail())
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(every):
		}
	}
}

// mtFirstChange readies Tributary's checkpoint on its first start (no_data, as Debezium's
// runs): it commits a change to the first table every second until one is published (on
// MariaDB the stream starts at the binlog's end, wherever that is when it gets there).
func mtFirstChange(ctx context.Context, adm *kadm.Client, m mtWorld, c *child) error {
	probe := m.topics[0]
	base, err := mtEnds(ctx, adm, []string{probe})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(mtStall)
	for time.Now().Before(deadline) {
		if err := mtChanges(ctx, m, 0, 1); err != nil {
			return err
		}
		select {
		case <-c.done:
			return fmt.Errorf("tributary exited: %v\n%s", c.err, c.tail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		ends, err := mtEnds(ctx, adm, []string{probe})
		if err != nil {
			return err
		}
		if ends[probe] > base[probe] {
			return nil
		}
	}
	return fmt.Errorf("no change published within %s:\n%s", mtStall, c.tail())
}

// mtTributaryConfig captures every table of m by one expression.
func mtTributaryConfig(m mtWorld, name, dir string) (string, error) {
	typ, url := "postgres", dbURL(m.db)
	if m.mariadb() {
		typ, url = "mysql", myURL(m.db)
	}
	cfg := fmt.Sprintf(`name: %s
source:
  type: %s
  url: %s
  tables: ['%s\.t[0-9]+']
  snapshot_mode: no_data
destination:
  bootstrap_servers: %s
  topic_prefix: %s
  disable_tls: true
  delete_mode: record
checkpoint:
  path: %s
`, name, typ, url, m.schema, kafkaAddr, m.prefix, filepath.Join(dir, "checkpoints"))
	if m.routed {
		cfg += fmt.Sprintf("transforms:\n  reroute:\n    topic_regex: '%s\\..*'\n    topic_replacement: '%s'\n", regexp.QuoteMeta(m.prefix), m.topics[0])
	}
	path := filepath.Join(dir, "pipeline.yaml")
	return path, os.WriteFile(path, []byte(cfg), 0o600)
}

// mtDebeziumRoute is Debezium's ByLogicalTableRouter to m's one topic, when routed.
func mtDebeziumRoute(m mtWorld) string {
	if !m.routed {
		return ""
	}
	// Backslashes doubled: a .properties file unescapes them.
	return "transforms=reroute\ntransforms.reroute.type=io.debezium.transforms.ByLogicalTableRouter\n" +
		"transforms.reroute.topic.regex=" + strings.ReplaceAll(regexp.QuoteMeta(m.prefix), `\`, `\\`) + `\\..*` + "\n" +
		"transforms.reroute.topic.replacement=" + m.topics[0] + "\n"
}

// manyTablesTargets adds the targets at the largest size: start and RSS ≤ 0.5×
// debezium-tuned's, RSS ≤ 250 MB, CPU per event ≤ 1.5× the one-table figure.
func (b *bench) manyTablesTargets(add func(string, *float64, func(float64) bool)) {
	atMost := func(x float64) func(float64) bool { return func(v float64) bool { return v <= x } }
	for _, sc := range []string{scManyTables, scManyTablesMariaDB} {
		sizes := b.mtSizes()
		n := sizes[len(sizes)-1]
		t, d, one := b.find(sysTributary, mtLabel(sc, n)), b.find(sysDebeziumTuned, mtLabel(sc, n)), b.find(sysTributary, mtLabel(sc, 1))
		if t == nil && d == nil {
			continue
		}
		div := func(f func(*run) *float64, x, y *run) *float64 {
			if x == nil || y == nil || f(x) == nil || f(y) == nil || *f(y) == 0 {
				return nil
			}
			return ptr(*f(x) / *f(y))
		}
		start := func(r *run) *float64 { return r.StartSeconds }
		rss := func(r *run) *float64 { return r.PeakRSSMB }
		cpu := func(r *run) *float64 { return r.CPUSecPerMillion }
		var mb *float64
		if t != nil {
			mb = t.PeakRSSMB
		}
		label := mtLabel(sc, n)
		add(label+": start → first change ≤ 0.5× debezium-tuned's (tributary ÷ debezium-tuned)", div(start, t, d), atMost(0.5))
		add(label+": peak RSS ≤ 0.5× debezium-tuned's (tributary ÷ debezium-tuned)", div(rss, t, d), atMost(0.5))
		add(label+": peak RSS ≤ 250 MB", mb, atMost(250))
		add(label+": CPU s/M ≤ 1.5× one table's (tributary ÷ tributary at 1 table)", div(cpu, t, one), atMost(1.5))
	}
}

// manyTablesMarkdown is the tables × systems table of the many-tables scenarios, with
// Tributary's ratio to debezium-tuned at each size.
func manyTablesMarkdown(runs []run) string {
	var sb strings.Builder
	for _, sc := range []string{scManyTables, scManyTablesMariaDB} {
		var sizes []int
		for _, r := range runs {
			if r.Tables > 0 && strings.HasPrefix(r.Scenario, sc+" ") && !slices.Contains(sizes, r.Tables) {
				sizes = append(sizes, r.Tables)
			}
		}
		if len(sizes) == 0 {
			continue
		}
		find := func(sys string, n int) *run {
			for i := range runs {
				if x := &runs[i]; x.System == sys && x.Scenario == mtLabel(sc, n) && x.Error == "" {
					return x
				}
			}
			return nil
		}
		fmt.Fprintf(&sb, "\n%s: start → first change s, peak RSS MB, CPU s / M events (Tributary · debezium-tuned · ratio):\n\n", sc)
		sb.WriteString("| tables | start s | peak RSS MB | CPU s / M events | CPU ÷ tributary's at 1 table |\n|---:|---|---|---|---:|\n")
		one := find(sysTributary, 1)
		for _, n := range sizes {
			t, d := find(sysTributary, n), find(sysDebeziumTuned, n)
			cell := func(f func(*run) *float64, format string) string {
				var a, b *float64
				if t != nil {
					a = f(t)
				}
				if d != nil {
					b = f(d)
				}
				ratio := "–"
				if a != nil && b != nil && *b != 0 {
					ratio = fmt.Sprintf("%.2f", *a / *b)
				}
				return num(a, format) + " · " + num(b, format) + " · " + ratio
			}
			self := "–"
			if t != nil && one != nil && t.CPUSecPerMillion != nil && one.CPUSecPerMillion != nil && *one.CPUSecPerMillion != 0 {
				self = fmt.Sprintf("%.2f", *t.CPUSecPerMillion / *one.CPUSecPerMillion)
			}
			fmt.Fprintf(&sb, "| %d | %s | %s | %s | %s |\n", n,
				cell(func(r *run) *float64 { return r.StartSeconds }, "%.2f"),
				cell(func(r *run) *float64 { return r.PeakRSSMB }, "%.0f"),
				cell(func(r *run) *float64 { return r.CPUSecPerMillion }, "%.1f"), self)
		}
	}
	return sb.String()
}
