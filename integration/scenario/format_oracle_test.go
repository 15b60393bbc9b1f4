package scenario_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The format options (docs/configuration.md, "Message format") side by side
// with real Debezium: the same rows through Debezium's connector with the
// same converter and connector settings and, where format.unwrap is on, the
// real io.debezium.transforms.ExtractNewRecordState with the same options,
// compared byte for byte (key, value, tombstones) after masking only the
// fields that are each connector's own (processing times, log positions,
// source.version of the MariaDB peer).
//
// One Debezium process per run serves several tables: each table is one
// variant of the transform (a predicate on its topic picks it), while the
// converter and the connector's modes are the run's. Tributary runs one
// pipeline per table with the matching format block.

// formatVariant is one table of a run.
type formatVariant struct {
	table string
	// format is Tributary's format section (indented lines).
	format string
	// smt is the transform's options ("delete.tombstone.handling.mode=rewrite");
	// nil: no transform (the envelope).
	smt []string
	// want is the number of records of the table: its snapshot row and what
	// the stream makes of formatStream.
	want int
	// exactlyOnce runs the pipeline with delivery: exactly_once.
	exactlyOnce bool
}

// formatRun is one Debezium process and the Tributary pipelines compared
// with it.
type formatRun struct {
	label    string
	debezium []string // converter and connector properties
	variants []formatVariant
}

// formatSource is what the side-by-side run needs of a database.
type formatSource struct {
	exec     func(sql string)
	table    string // CREATE TABLE %s (…)
	snapshot string // INSERT of the row both sides read first; %s is the table
	stream   []string
	// debezium starts the run's Debezium in dir on tables (others: the
	// test's other tables), stopping after max records.
	debezium func(dir, label, out string, max int, tables, others []string, extra []string) *itest.DebeziumProc
	// pipeline writes Tributary's config for table with a name of its own;
	// top is added at the top level (the format section, delivery).
	pipeline func(name, table, top string) string
	topic    func(table string) string
}

// formatVolatile are the values that are each connector's own; they are
// replaced before the bytes are compared. In 'r' rows __source_ts_ms is the
// snapshot's time, which differs too (those rows are not compared).
var formatVolatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"(ts_ms|ts_us|ts_ns|lsn|txId)":-?\d+`), `"$1":0`},
	{regexp.MustCompile(`"sequence":("(?:[^"\\]|\\.)*"|null)`), `"sequence":"-"`},
	{regexp.MustCompile(`"version":"[^"]*"`), `"version":"-"`},
}

func maskFormatVolatile(b []byte) []byte {
	for _, v := range formatVolatile {
		b = v.re.ReplaceAll(b, []byte(v.with))
	}
	return b
}

// rawKV is one record as bytes; value nil is a tombstone.
type rawKV struct {
	key, value []byte
	// headers by name: Tributary's all, Debezium's those the harness
	// recorded (a header without a value is "").
	headers map[string]string
}

func (r rawKV) String() string {
	v := "<tombstone>"
	if r.value != nil {
		v = string(r.value)
	}
	return "key " + string(r.key) + "\n        value " + v
}

func readDebeziumRaw(t *testing.T, path string) map[string][]rawKV {
	t.Helper()
	out := map[string][]rawKV{}
	itest.EachDebeziumLine(t, path, func(line itest.DebeziumLine) {
		r := rawKV{key: []byte(line.Key), value: []byte(line.Value), headers: map[string]string{}}
		for _, h := range line.Headers {
			if h.Value != nil {
				r.headers[h.Key] = *h.Value
			} else {
				r.headers[h.Key] = ""
			}
		}
		if string(line.Key) == "null" {
			r.key = nil // no key (a table without one): the harness writes null
		}
		if line.Tombstone {
			r.value = nil
		}
		out[line.Destination] = append(out[line.Destination], r)
	})
	return out
}

// debeziumWritten counts the harness's records so far by destination (a
// line still being written is left out): a record of another table or a
// second one of a table must not stand in for one still to come.
func debeziumWritten(path string) map[string]int {
	n := map[string]int{}
	data, _ := os.ReadFile(path)
	for _, line := range bytes.Split(data, []byte("\n")) {
		var l itest.DebeziumLine
		if json.Unmarshal(line, &l) == nil {
			n[l.Destination]++
		}
	}
	return n
}

func readTopicBytes(t *testing.T, topic string) []rawKV {
	t.Helper()
	var out []rawKV
	// Control records (exactly_once's commit markers) take offsets: they
	// are read, to know where the topic ends, and left out.
	itest.EachRawRecordWithin(t, topic, 30*time.Second, []kgo.Opt{kgo.KeepControlRecords()}, func(r *kgo.Record) {
		h := map[string]string{}
		for _, x := range r.Headers {
			h[x.Key] = string(x.Value)
		}
		out = append(out, rawKV{key: r.Key, value: r.Value, headers: h})
	})
	return out
}

// runFormatOracle runs every run of runs on src at once and compares.
func runFormatOracle(t *testing.T, e *itest.Env, src formatSource, runs []formatRun) {
	t.Helper()
	var topics []string
	for _, r := range runs {
		for _, v := range r.variants {
			src.exec(fmt.Sprintf(src.table, v.table))
			src.exec(fmt.Sprintf(src.snapshot, v.table))
			topics = append(topics, src.topic(v.table))
		}
	}
	itest.CreateSinglePartitionTopics(t, topics...)

	type started struct {
		out  string
		dbz  *itest.DebeziumProc
		runs formatRun
	}
	var all []started
	var procs []*itest.Proc
	for _, r := range runs {
		dir := filepath.Join(e.Dir, r.label)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		props := append([]string(nil), r.debezium...)
		var tables, preds, transforms []string
		max := 0
		for i, v := range r.variants {
			tables = append(tables, v.table)
			max += v.want
			if v.smt == nil {
				continue
			}
			name := fmt.Sprintf("u%d", i)
			transforms = append(transforms, name)
			preds = append(preds, "is"+name)
			props = append(props,
				"predicates.is"+name+".type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
				"predicates.is"+name+".pattern=.*\\\\."+v.table,
				"transforms."+name+".type=io.debezium.transforms.ExtractNewRecordState",
				"transforms."+name+".predicate=is"+name)
			for _, o := range v.smt {
				props = append(props, "transforms."+name+"."+o)
			}
		}
		if len(transforms) > 0 {
			props = append(props, "transforms="+strings.Join(transforms, ","), "predicates="+strings.Join(preds, ","))
		}
		out := filepath.Join(dir, "debezium.jsonl")
		var others []string
		for _, o := range runs {
			if o.label != r.label {
				for _, v := range o.variants {
					others = append(others, v.table)
				}
			}
		}
		all = append(all, started{out: out, dbz: src.debezium(dir, r.label, out, max, tables, others, props), runs: r})
		for _, v := range r.variants {
			top := "format:\n" + v.format
			if v.exactlyOnce {
				top += "delivery: exactly_once\n"
			}
			p := e.Start("run", "--config", src.pipeline(e.Name+"_"+v.table, v.table, top))
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("tributary (%s) output:\n%s", v.table, p.Out)
				}
			})
			procs = append(procs, p)
		}
	}

	// The stream starts once every side has read its snapshot row.
	itest.WaitFor(t, 120*time.Second, "every snapshot", func() bool {
		for _, s := range all {
			if s.dbz.Exited() {
				t.Fatalf("debezium (%s) exited early:\n%s", s.runs.label, s.dbz.Out)
			}
			if itest.CountLines(s.out) < len(s.runs.variants) {
				return false
			}
		}
		for _, topic := range topics {
			if itest.TopicEnd(topic) < 1 {
				return false
			}
		}
		return true
	})
	for _, r := range runs {
		for _, v := range r.variants {
			for _, sql := range src.stream {
				src.exec(fmt.Sprintf(sql, v.table))
			}
		}
	}
	// short names the last table found short, for a wait that times out:
	// which side, how many of how many. The 180 s are for Debezium's JVMs
	// on a machine busy with make test's other packages (90 s ran out once
	// in CI with nothing missing from either side's output).
	short := "nothing"
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("still missing at the end of the wait: %s", short)
		}
	})
	itest.WaitFor(t, 180*time.Second, "every record on both sides", func() bool {
		for _, s := range all {
			if itest.CountLines(s.out) < len(s.runs.variants) && s.dbz.Exited() {
				t.Fatalf("debezium (%s) exited:\n%s", s.runs.label, s.dbz.Out)
			}
			written := debeziumWritten(s.out)
			for _, v := range s.runs.variants {
				topic := src.topic(v.table)
				if n := written[topic]; n < v.want {
					short = fmt.Sprintf("%s (%s): Debezium wrote %d of %d records", topic, s.runs.label, n, v.want)
					return false // Debezium's record of this table still to come
				}
				n := itest.TopicEnd(topic)
				if v.exactlyOnce && n >= int64(v.want) {
					// The end counts the commit markers too.
					n = int64(len(readTopicBytes(t, topic)))
				}
				if n < int64(v.want) {
					short = fmt.Sprintf("%s (%s): Tributary's topic holds %d of %d records", topic, s.runs.label, n, v.want)
					return false
				}
			}
		}
		return true
	})
	for _, p := range procs {
		if code := p.Stop(t); code != 0 {
			t.Errorf("tributary exit code %d after SIGTERM; output:\n%s", code, p.Out)
		}
	}

	compared := 0
	for _, s := range all {
		s.dbz.Stop()
		dbz := readDebeziumRaw(t, s.out)
		for _, v := range s.runs.variants {
			topic := src.topic(v.table)
			d, trib := dbz[topic], readTopicBytes(t, topic)
			if len(d) != v.want || len(trib) != v.want {
				t.Errorf("%s (%s): %d records from Debezium, %d from Tributary, %d expected", topic, s.runs.label, len(d), len(trib), v.want)
			}
			// Record 0 is the snapshot row: its source block and
			// __source_ts_ms are each side's own snapshot.
			for i := 1; i < len(d) && i < len(trib); i++ {
				compared++
				dk, tk := maskFormatVolatile(d[i].key), maskFormatVolatile(trib[i].key)
				var dv, tv []byte
				if d[i].value != nil {
					dv = maskFormatVolatile(d[i].value)
				}
				if trib[i].value != nil {
					tv = maskFormatVolatile(trib[i].value)
				}
				if !bytes.Equal(dk, tk) || !bytes.Equal(dv, tv) || (dv == nil) != (tv == nil) {
					t.Errorf("%s (%s) record %d differs:\n  debezium:  %s\n  tributary: %s", topic, s.runs.label, i, rawKV{key: dk, value: dv}, rawKV{key: tk, value: tv})
				}
				checkFormatHeaders(t, topic, i, trib[i])
			}
		}
	}
	t.Logf("compared %d records byte for byte", compared)
}

// opField is the __op of a value with add_fields op.
var opField = regexp.MustCompile(`"__op":"([curd])"`)

// checkFormatHeaders: whatever the format, a record carries Tributary's
// headers; tributary-op is the change's op (a tombstone's, its delete's).
func checkFormatHeaders(t *testing.T, topic string, i int, r rawKV) {
	t.Helper()
	op := r.headers["tributary-op"]
	if r.headers["tributary-event-id"] == "" || !strings.Contains("curd", op) || len(op) != 1 {
		t.Errorf("%s record %d: headers %v", topic, i, r.headers)
	}
	if r.value != nil && r.headers["content-type"] != "application/json" {
		t.Errorf("%s record %d: content-type %q", topic, i, r.headers["content-type"])
	}
	if m := opField.FindSubmatch(r.value); m != nil && string(m[1]) != op {
		t.Errorf("%s record %d: tributary-op %q, the value's __op %q", topic, i, op, m[1])
	}
}

// tableList is a Debezium table list (regular expressions, in a
// properties file) of schema.table for each of tables.
func tableList(schema string, tables []string) string {
	var out []string
	for _, t := range tables {
		out = append(out, schema+"\\\\."+t)
	}
	return strings.Join(out, ",")
}

// formatRunsFor are the runs both sources go through: every option with a
// non-default value in at least one run, with and without schemas, the
// transform's delete modes with and without the tombstone, and added fields.
// timeA and timeB are the source's time.precision.mode values to try;
// more is the records the source's stream makes after the common five
// statements, in every variant.
func formatRunsFor(timeA, timeB string, more int) []formatRun {
	rewriteAdd := []string{"add.fields=op,table,source.ts_ms"}
	return []formatRun{{
		label:    "schemas",
		debezium: []string{"decimal.handling.mode=double", "binary.handling.mode=base64", "time.precision.mode=" + timeA},
		variants: []formatVariant{
			{table: "f_env", format: "  decimal_handling: double\n  binary_handling: base64\n  time_precision: " + timeA + "\n", want: 9 + more},
			{table: "f_rwt", format: "  decimal_handling: double\n  binary_handling: base64\n  time_precision: " + timeA +
				"\n  unwrap: true\n  delete_handling: rewrite-with-tombstone\n  add_fields: [op, table, source.ts_ms]\n",
				smt: append([]string{"delete.tombstone.handling.mode=rewrite-with-tombstone"}, rewriteAdd...), want: 9 + more},
			// Deletes and their tombstones dropped: r, c, c, u, c.
			{table: "f_drop", format: "  decimal_handling: double\n  binary_handling: base64\n  time_precision: " + timeA +
				"\n  unwrap: true\n  delete_handling: drop\n", smt: []string{"delete.tombstone.handling.mode=drop"}, want: 5 + more},
		},
	}, {
		label:    "noschemas",
		debezium: []string{"converter.schemas.enable=false", "decimal.handling.mode=string", "binary.handling.mode=hex", "time.precision.mode=" + timeB},
		variants: []formatVariant{
			{table: "f_tomb", format: "  schemas: false\n  decimal_handling: string\n  binary_handling: hex\n  time_precision: " + timeB + "\n  unwrap: true\n",
				smt: []string{}, want: 7 + more, exactlyOnce: true},
			{table: "f_rw", format: "  schemas: false\n  decimal_handling: string\n  binary_handling: hex\n  time_precision: " + timeB +
				"\n  unwrap: true\n  delete_handling: rewrite\n  add_fields: [op, table, source.ts_ms]\n",
				smt: append([]string{"delete.tombstone.handling.mode=rewrite"}, rewriteAdd...), want: 7 + more},
			// Each delete one Kafka tombstone: r, c, c, u, ∅, c, ∅.
			{table: "f_dtt", format: "  schemas: false\n  decimal_handling: string\n  binary_handling: hex\n  time_precision: " + timeB +
				"\n  unwrap: true\n  delete_handling: delete-to-tombstone\n", smt: []string{"delete.tombstone.handling.mode=delete-to-tombstone"}, want: 7 + more},
		},
	}}
}

// formatStreamPostgres is each table's stream: two inserts, an update, a
// key change (Debezium: a delete, its tombstone and an insert) and a
// delete (and its tombstone); the envelope and rewrite-with-tombstone keep
// 8 records, the other delete modes drop the 2 tombstones. Then a row
// with a TOASTed value and an update that leaves it alone (2 more).
func formatStreamPostgres() []string {
	return []string{
		`INSERT INTO %s VALUES (2, 99.00, 12.50, 7.125, '\x00ff10', '2024-03-01', '10:11:12.123456', '10:11:12.123', '2024-03-01 10:11:12.123456', '2024-03-01 10:11:12.123', '2024-03-01 10:11:12.123456+00', 'héllo', 'n"q\', 5)`,
		`INSERT INTO %s (id, req) VALUES (3, 0)`,
		`UPDATE %s SET amount = -1.25, vnum = 100, data = '\x'::bytea, tm = '23:59:59.999999', n = NULL WHERE id = 2`,
		`UPDATE %s SET id = 30 WHERE id = 3`,
		`DELETE FROM %s WHERE id = 2`,
		// An unchanged TOASTed bytea: Debezium's placeholder in each binary mode.
		`INSERT INTO %s (id, req, data) VALUES (4, 0, convert_to(` + itest.ToastText + `, 'UTF8'))`,
		`UPDATE %s SET n = 1 WHERE id = 4`,
	}
}

// pgFormatSource is runFormatOracle's PostgreSQL side in e's database
// (the caller sets table, snapshot and stream); source is added to each
// pipeline's source section.
func pgFormatSource(t *testing.T, e *itest.Env, source string) formatSource {
	return formatSource{
		exec: func(sql string) { e.Exec(sql) },
		debezium: func(dir, label, out string, max int, tables, _ []string, extra []string) *itest.DebeziumProc {
			de := *e
			de.Dir, de.Name = dir, e.Name+"_"+label
			extra = append(extra, "table.include.list="+tableList("public", tables))
			return itest.StartDebezium(t, &de, out, max, strings.Join(extra, "\n")+"\n")
		},
		pipeline: func(name, table, top string) string {
			pe := *e
			pe.Name = name
			return pe.WritePipeline(itest.PipelineConfig{Source: "  tables: [public." + table + "]\n  snapshot_parallelism: 1\n" + source,
				Destination: "  delete_mode: record_and_tombstone\n", Checkpoint: "  path: " + filepath.Join(e.Dir, name) + "\n" + top,
				File: name + ".yaml"})
		},
		topic: func(table string) string { return e.Prefix + ".public." + table },
	}
}

// myFormatSource is runFormatOracle's MariaDB side in e's database (the
// caller sets table, snapshot and stream).
func myFormatSource(t *testing.T, e *itest.MyEnv) formatSource {
	return formatSource{
		exec: func(sql string) { e.Exec(sql) },
		debezium: func(dir, label, out string, max int, _, others []string, extra []string) *itest.DebeziumProc {
			de := *e
			env := *e.Env
			env.Dir = dir
			de.Env = &env
			// The harness's table.exclude.list (Tributary's signal table),
			// and the other run's tables: Debezium refuses include and
			// exclude lists together.
			extra = append(extra, "table.exclude.list="+tableList(e.DB, append([]string{"tributary_signal"}, others...)))
			return itest.StartMariaDBDebezium(t, &de, out, max, strings.Join(extra, "\n")+"\n")
		},
		pipeline: func(name, table, top string) string {
			pe := *e.Env
			pe.Name = name
			return pe.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: e.URL(), Source: "  tables: [" + e.DB + "." + table + "]\n  snapshot_parallelism: 1\n",
				Destination: "  delete_mode: record_and_tombstone\n", Checkpoint: "  path: " + filepath.Join(e.Dir, name) + "\n" + top,
				File: name + ".yaml"})
		},
		topic: func(table string) string { return e.Prefix + "." + e.DB + "." + table },
	}
}

// TestFormatOptionsPostgres compares the format options with Debezium's
// PostgreSQL connector and ExtractNewRecordState.
func TestFormatOptionsPostgres(t *testing.T) {
	e := itest.NewEnv(t, "fmtpg")
	src := pgFormatSource(t, e, "")
	src.table = `CREATE TABLE %s (id int PRIMARY KEY, amount numeric(10,2), vnum numeric, req numeric(8,3) NOT NULL,
			data bytea, d date, tm time, tm3 time(3), ts timestamp, ts3 timestamp(3), tstz timestamptz,
			txt text NOT NULL DEFAULT 'x', note varchar(20), n int)`
	src.snapshot = `INSERT INTO %s (id, req) VALUES (1, 1.5)`
	src.stream = formatStreamPostgres()
	runFormatOracle(t, e, src, formatRunsFor("adaptive_time_microseconds", "connect", 2))
}

// TestFormatOptionsMySQL compares the format options with Debezium's
// MariaDB connector and ExtractNewRecordState.
func TestFormatOptionsMySQL(t *testing.T) {
	e := itest.NewMyEnv(t, "fmtmy")
	e.Exec(`SET SESSION time_zone = '+00:00'`)
	src := myFormatSource(t, e)
	src.table = `CREATE TABLE %s (id INT PRIMARY KEY, amount DECIMAL(10,2), req DECIMAL(8,3) NOT NULL, data VARBINARY(16), blb BLOB,
			d DATE, tm TIME, tm3 TIME(3), dt DATETIME, dt6 DATETIME(6), tsz TIMESTAMP(3) NULL, txt VARCHAR(20) NOT NULL DEFAULT 'x', n INT)`
	src.snapshot = `INSERT INTO %s (id, req) VALUES (1, 1.5)`
	src.stream = []string{
		`INSERT INTO %s VALUES (2, 99.00, 7.125, X'00FF10', 'blob', '2024-03-01', '10:11:12', '10:11:12.123', '2024-03-01 10:11:12', '2024-03-01 10:11:12.123456', '2024-03-01 10:11:12.123', 'héllo', 5)`,
		`INSERT INTO %s (id, req) VALUES (3, 0)`,
		`UPDATE %s SET amount = -1.25, data = X'', tm = '23:59:59', n = NULL WHERE id = 2`,
		`UPDATE %s SET id = 30 WHERE id = 3`,
		`DELETE FROM %s WHERE id = 2`,
	}
	runFormatOracle(t, e.Env, src, formatRunsFor("connect", "adaptive_time_microseconds", 0))
}

// TestFormatSizeLimitAndSkipped: with format.schemas false and
// format.unwrap, max_message_bytes is measured on the bytes published (a
// row that fits only without the envelope is published), a row over it is
// skipped with a row.skipped event whose primary_key comes from the
// schema-less key, and the rows around it arrive.
func TestFormatSizeLimitAndSkipped(t *testing.T) {
	e := itest.NewEnv(t, "fmtsize")
	e.Exec(`CREATE TABLE docs (k int PRIMARY KEY, v text)`)
	fits := itest.Alnum(19_000) // 19,021 bytes of key and value; the default format would make it 21,637
	over := itest.Alnum(30_000) // over in any format
	e.Exec(`INSERT INTO docs VALUES (1, 'small'), (2, '` + over + `'), (3, '` + fits + `'), (4, 'after')`)
	cfg := e.WriteConfig("  max_message_bytes: 20000\n")
	itest.AppendConfig(t, cfg, "format:\n  schemas: false\n  unwrap: true\n")
	topic := e.Prefix + ".public.docs"
	p := e.Start("run", "--config", cfg)
	itest.WaitOrDump(t, p, 60*time.Second, "3 messages", func() bool { return itest.TopicEnd(topic) >= 3 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	got := map[string]string{}
	for _, r := range itest.ReadRaw(t, topic) {
		got[string(r.Key)] = string(r.Value)
		if s := itest.BatchSizeOf(r); s > 20000 {
			t.Errorf("key %s: %d bytes published over max_message_bytes 20000", r.Key, s)
		}
	}
	want := map[string]string{
		`{"k":1}`: `{"k":1,"v":"small"}`,
		`{"k":3}`: `{"k":3,"v":"` + fits + `"}`,
		`{"k":4}`: `{"k":4,"v":"after"}`,
	}
	if len(got) != len(want) {
		t.Errorf("keys on the topic %d, want 3 (1, 3, 4)", len(got))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("key %s: value %.80q, want %.80q", k, got[k], v)
		}
	}
	lines := e.SkippedLines(t)
	if len(lines) != 1 || fmt.Sprint(lines[0].PrimaryKey["k"]) != "2" || lines[0].LimitBytes != 20000 || lines[0].SizeBytes <= 20000 {
		t.Fatalf("row.skipped events %+v; output:\n%s", lines, p.Out)
	}
}
