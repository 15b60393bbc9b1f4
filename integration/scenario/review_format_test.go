package scenario_test

// The format options beyond the side-by-side test: column types and values
// the side-by-side test (format_oracle_test.go) does not cover, through the
// same runFormatOracle against the real Debezium connector, JsonConverter
// and ExtractNewRecordState.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// reviewFormatPostgres runs runFormatOracle on PostgreSQL: table (CREATE
// TABLE %s …) with a snapshot row of id 1, then stream; source is added
// to each pipeline's source section.
func reviewFormatPostgres(t *testing.T, table, source string, stream []string, runs []formatRun) {
	e := itest.NewEnv(t, "rvfmt")
	src := pgFormatSource(t, e, source)
	src.table, src.snapshot, src.stream = table, `INSERT INTO %s (id) VALUES (1)`, stream
	runFormatOracle(t, e, src, runs)
}

// TestReviewFormatPostgresTypes: the types and values the decimal and
// binary modes touch besides a plain numeric and bytea, side by side in
// double/hex and string/base64: numeric NaN, Infinity and -Infinity
// (Debezium writes "NaN", "Infinity", "-Infinity" and "NAN",
// "POSITIVE_INFINITY", "NEGATIVE_INFINITY"; Tributary wrote null), a
// column of an unknown type published with source.include_unknown_types
// (Debezium's include.unknown.datatypes: in the binary mode's form;
// Tributary wrote bytes), and money, arrays of numeric and bytea, uuid,
// jsonb and a bit string (refuted: they matched).
func TestReviewFormatPostgresTypes(t *testing.T) {
	stream := []string{
		`INSERT INTO %s VALUES (2, 'NaN', 'NaN', 12.34, '{1.50,-2.25}', '{"\\x00ff","\\x10"}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"a":[1,2]}', B'1010', '\x0102', 'a & b')`,
		`INSERT INTO %s (id, n) VALUES (3, 'Infinity')`,
		`INSERT INTO %s (id, n, n2) VALUES (4, '-Infinity', 12.5)`,
	}
	runs := []formatRun{{
		label:    "dblhex",
		debezium: []string{"decimal.handling.mode=double", "binary.handling.mode=hex", "include.unknown.datatypes=true"},
		variants: []formatVariant{{table: "ty_dh", format: "  decimal_handling: double\n  binary_handling: hex\n", want: 4}},
	}, {
		label:    "strb64",
		debezium: []string{"decimal.handling.mode=string", "binary.handling.mode=base64", "include.unknown.datatypes=true"},
		variants: []formatVariant{{table: "ty_sb", format: "  decimal_handling: string\n  binary_handling: base64\n", want: 4}},
	}}
	reviewFormatPostgres(t, `CREATE TABLE %s (id int PRIMARY KEY, n numeric, n2 numeric(10,2), m money, na numeric(6,2)[], ba bytea[],
		u uuid, j jsonb, b bit(4), bb bytea, q tsquery)`, "  include_unknown_types: true\n", stream, runs)
}

// TestReviewUnknownBoxText: a box column published with
// source.include_unknown_types is the bytes of the text Debezium writes,
// its JDBC driver's PGbox text, "(3.0,4.0),(1.0,2.0)", not PostgreSQL's
// "(3,4),(1,2)" (pkg/debezium/pgobject.go). Found beside
// TestReviewFormatUnknownTypes; the default format, not the format options.
func TestReviewUnknownBoxText(t *testing.T) {
	runs := []formatRun{{
		label:    "bytes",
		debezium: []string{"include.unknown.datatypes=true"},
		variants: []formatVariant{{table: "uk_box", format: "  binary_handling: bytes\n", want: 2}},
	}}
	reviewFormatPostgres(t, `CREATE TABLE %s (id int PRIMARY KEY, b box)`, "  include_unknown_types: true\n",
		[]string{`INSERT INTO %s VALUES (2, '((1,2),(3,4))')`}, runs)
}

// TestReviewFormatKeyless: a table without a primary key (REPLICA
// IDENTITY FULL) through the transform's delete modes, with and without
// schemas: null keys, and each delete's records as the transform keeps
// them.
func TestReviewFormatKeyless(t *testing.T) {
	stream := []string{
		`INSERT INTO %s VALUES (2, 'b')`,
		`UPDATE %s SET v = 'c' WHERE id = 2`,
		`DELETE FROM %s WHERE id = 2`,
	}
	runs := []formatRun{{
		label: "schemas",
		variants: []formatVariant{
			{table: "kl_env", format: "  schemas: true\n", want: 5},
			{table: "kl_rwt", format: "  unwrap: true\n  delete_handling: rewrite-with-tombstone\n  add_fields: [op]\n",
				smt: []string{"delete.tombstone.handling.mode=rewrite-with-tombstone", "add.fields=op"}, want: 5},
			{table: "kl_drop", format: "  unwrap: true\n  delete_handling: drop\n", smt: []string{"delete.tombstone.handling.mode=drop"}, want: 3},
		},
	}, {
		label:    "noschemas",
		debezium: []string{"converter.schemas.enable=false"},
		variants: []formatVariant{
			{table: "kl_tomb", format: "  schemas: false\n  unwrap: true\n", smt: []string{}, want: 4},
			{table: "kl_dtt", format: "  schemas: false\n  unwrap: true\n  delete_handling: delete-to-tombstone\n",
				smt: []string{"delete.tombstone.handling.mode=delete-to-tombstone"}, want: 4},
		},
	}}
	reviewFormatPostgres(t, `CREATE TABLE %[1]s (id int, v text); ALTER TABLE %[1]s REPLICA IDENTITY FULL`, "", stream, runs)
}

// TestReviewFormatDefaultUnchanged: without a format section the messages
// are byte for byte those of the binary before the format options
// (commit 3c5195c), the same rows read by both. It needs that binary:
// TRIBUTARY_REVIEW_OLD_BIN names it (git archive 3c5195c, go build
// ./cmd/tributary).
func TestReviewFormatDefaultUnchanged(t *testing.T) {
	old := os.Getenv("TRIBUTARY_REVIEW_OLD_BIN")
	if old == "" {
		t.Skip("TRIBUTARY_REVIEW_OLD_BIN is not set")
	}
	e := itest.NewEnv(t, "rvfmtdef")
	e.Exec(`CREATE TABLE f (id int PRIMARY KEY, amount numeric(10,2), vnum numeric, req numeric(8,3) NOT NULL,
		data bytea, d date, tm time, tm3 time(3), ts timestamp, ts3 timestamp(3), tstz timestamptz,
		txt text NOT NULL DEFAULT 'x', note varchar(20), n int)`)
	e.Exec(`INSERT INTO f (id, req) VALUES (1, 1.5)`)
	oe := *e
	oe.Name, oe.Prefix = e.Name+"_old", e.Prefix+"-old"
	cfg := func(pe *itest.Env, file string) string {
		return pe.WritePipeline(itest.PipelineConfig{Source: "  tables: [public.f]\n", Destination: "  delete_mode: record_and_tombstone\n",
			Checkpoint: "  path: " + filepath.Join(e.Dir, file+".ck") + "\n", File: file + ".yaml"})
	}
	pNew := e.Start("run", "--config", cfg(e, "new"))
	saved := itest.Binary
	itest.Binary = old
	pOld := oe.Start("run", "--config", cfg(&oe, "old"))
	itest.Binary = saved
	newTopic, oldTopic := e.Prefix+".public.f", oe.Prefix+".public.f"
	itest.WaitOrDump(t, pNew, 60*time.Second, "both backfills", func() bool { return itest.TopicEnd(newTopic) >= 1 && itest.TopicEnd(oldTopic) >= 1 })
	for _, sql := range formatStreamPostgres() {
		e.Exec(fmt.Sprintf(sql, "f"))
	}
	itest.WaitOrDump(t, pNew, 60*time.Second, "11 records on each side", func() bool { return itest.TopicEnd(newTopic) >= 11 && itest.TopicEnd(oldTopic) >= 11 })
	for _, p := range []*itest.Proc{pNew, pOld} {
		if code := p.Stop(t); code != 0 {
			t.Errorf("exit %d; output:\n%s", code, p.Out)
		}
	}
	// Per key, in order: the backfill's rows may interleave differently
	// with the stream on each side.
	mask := func(b []byte, prefix string) []byte {
		if b == nil {
			return nil
		}
		return maskFormatVolatile(bytes.ReplaceAll(b, []byte(prefix), []byte(e.Prefix)))
	}
	byKey := func(topic, prefix string) map[string][]rawKV {
		out := map[string][]rawKV{}
		for _, r := range readTopicBytes(t, topic) {
			k := string(mask(r.key, prefix))
			out[k] = append(out[k], rawKV{key: mask(r.key, prefix), value: mask(r.value, prefix), headers: r.headers})
		}
		return out
	}
	got, want := byKey(newTopic, e.Prefix), byKey(oldTopic, oe.Prefix)
	if len(got) != len(want) {
		t.Errorf("%d keys, %d before the format options", len(got), len(want))
	}
	compared := 0
	for k, w := range want {
		g := got[k]
		if len(g) != len(w) {
			t.Errorf("key %s: %d records, %d before", k, len(g), len(w))
			continue
		}
		for i := range w {
			compared++
			if !bytes.Equal(g[i].value, w[i].value) || (g[i].value == nil) != (w[i].value == nil) {
				t.Errorf("key %s record %d differs:\n  before: %s\n  now:    %s", k, i, w[i], g[i])
			}
			for _, h := range []string{"content-type", "tributary-op"} {
				if g[i].headers[h] != w[i].headers[h] {
					t.Errorf("key %s record %d header %s %q, before %q", k, i, h, g[i].headers[h], w[i].headers[h])
				}
			}
		}
	}
	t.Logf("compared %d records byte for byte", compared)
}

// TestReviewFormatMariaDBTypes: the MariaDB types the binary, decimal and
// time modes must leave alone or change as Debezium does: BIT, SET, ENUM,
// YEAR, a POINT, fixed BINARY, JSON, TIME over a day, in hex, string and
// connect, with and without the transform.
func TestReviewFormatMariaDBTypes(t *testing.T) {
	e := itest.NewMyEnv(t, "rvfmtmy")
	e.Exec(`SET SESSION time_zone = '+00:00'`)
	src := myFormatSource(t, e)
	src.table = `CREATE TABLE %s (id INT PRIMARY KEY, bt BIT(4), st SET('a','b'), en ENUM('x','y'), yr YEAR, pt POINT,
		bn BINARY(4), js JSON, tm TIME, n DECIMAL(5,1))`
	src.snapshot = `INSERT INTO %s (id) VALUES (1)`
	src.stream = []string{
		`INSERT INTO %s VALUES (2, b'1010', 'a,b', 'y', 2024, ST_GeomFromText('POINT(1 2)'), X'0102', '{"a":1}', '12:34:56', 12.5)`,
		`UPDATE %s SET bn = X'FF', tm = '-01:00:00' WHERE id = 2`,
		`UPDATE %s SET tm = '25:00:00' WHERE id = 2`,
	}
	runFormatOracle(t, e.Env, src, []formatRun{{
		label:    "hex",
		debezium: []string{"binary.handling.mode=hex", "decimal.handling.mode=string", "time.precision.mode=connect"},
		variants: []formatVariant{
			{table: "my_env", format: "  binary_handling: hex\n  decimal_handling: string\n  time_precision: connect\n", want: 4},
			{table: "my_unw", format: "  binary_handling: hex\n  decimal_handling: string\n  time_precision: connect\n  unwrap: true\n", smt: []string{}, want: 4},
		},
	}})
}
