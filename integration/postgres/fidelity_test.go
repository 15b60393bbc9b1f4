package postgres_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestDebeziumFidelity runs real Debezium (the embedded engine of
// integration/debezium, PostgreSQL connector, its defaults) and Tributary
// against one database and compares every key and value they produce,
// message by message: schemas must be identical and payloads identical
// except for the fields in volatileFields.
func TestDebeziumFidelity(t *testing.T) {
	e := itest.NewEnv(t, "fid")
	hstore := e.TryExec(`CREATE EXTENSION IF NOT EXISTS hstore`)
	for _, sql := range fidelitySchema(hstore) {
		e.Exec(sql)
	}
	wideTopic, fullTopic := e.Prefix+".public.wide", e.Prefix+".public.full_t"
	arrTopic, nopkTopic := e.Prefix+".public.arr_t", e.Prefix+".public.nopk"
	topics := []string{wideTopic, fullTopic, arrTopic, nopkTopic}
	itest.CreateSinglePartitionTopics(t, topics...)

	// The snapshot: rows present before either connector starts.
	snapshot := []itest.FidelityStep{
		{SQL: itest.FidelityInsert("wide", wideRowFull(hstore)), Events: 1},
		{SQL: itest.FidelityInsert("wide", wideRowNulls()), Events: 1},
		{SQL: itest.FidelityInsert("wide", wideRowEdges(hstore)), Events: 1},
		{SQL: `INSERT INTO full_t (id, name, amount, body) VALUES (1, 'one', 1.50, ` + itest.ToastText + `)`, Events: 1},
		{SQL: itest.FidelityInsert("arr_t", arrRowSmall("1")), Events: 1},
	}
	// The stream: every statement with the number of messages it makes
	// (a delete is a 'd' and a tombstone).
	stream := []itest.FidelityStep{
		{SQL: itest.FidelityInsert("wide", wideRowFull(hstore)), Events: 1},                      // id 4
		{SQL: itest.FidelityInsert("wide", wideRowNulls()), Events: 1},                           // id 5
		{SQL: itest.FidelityInsert("wide", wideRowEdges(hstore)), Events: 1},                     // id 6
		{SQL: `UPDATE wide SET c_int4 = c_int4 + 1, c_text = 'updated' WHERE id = 4`, Events: 1}, // TOAST unchanged
		{SQL: `UPDATE wide SET c_toast = 'short now' WHERE id = 4`, Events: 1},
		{SQL: `DELETE FROM wide WHERE id = 5`, Events: 2},         // REPLICA IDENTITY DEFAULT: key-only before
		{SQL: `UPDATE wide SET id = 100 WHERE id = 6`, Events: 3}, // PK change: d, tombstone, c
		{SQL: `ALTER TABLE wide ADD COLUMN c_added integer DEFAULT 5`, Events: 0},
		{SQL: itest.FidelityInsert("wide", wideRowFull(hstore)), Events: 1}, // id 7, with c_added
		{SQL: `UPDATE wide SET c_added = 6 WHERE id = 4`, Events: 1},
		{SQL: `ALTER TABLE wide DROP COLUMN c_char`, Events: 0},
		{SQL: `ALTER TABLE wide ALTER COLUMN c_int2 TYPE integer`, Events: 0},
		{SQL: `UPDATE wide SET c_int2 = 70000 WHERE id = 7`, Events: 1},
		{SQL: `INSERT INTO full_t (id, name, amount, body) VALUES (2, 'two', 2.25, ` + itest.ToastText + `)`, Events: 1},
		{SQL: `UPDATE full_t SET name = 'uno' WHERE id = 1`, Events: 1}, // FULL: complete before image, TOAST unchanged
		{SQL: `UPDATE full_t SET id = 3 WHERE id = 2`, Events: 3},
		{SQL: `DELETE FROM full_t WHERE id = 1`, Events: 2},               // FULL: complete before image
		{SQL: `INSERT INTO arr_t (id) VALUES (2)`, Events: 1},             // the defaults
		{SQL: itest.FidelityInsert("arr_t", arrRowSmall("3")), Events: 1}, // id 3
		{SQL: itest.FidelityInsert("arr_t", arrRowToast()), Events: 1},    // id 4
		{SQL: `UPDATE arr_t SET n = n + 1 WHERE id = 4`, Events: 1},       // every array and the bytea unchanged TOAST
		{SQL: `UPDATE arr_t SET a_int4 = '{7}' WHERE id = 4`, Events: 1},  // the rest still unchanged
		{SQL: `DELETE FROM arr_t WHERE id = 3`, Events: 2},
		// Streamed only (the table is empty during the snapshots): a
		// keyless table with REPLICA IDENTITY FULL, captured because the
		// include list names it (without one, Tributary captures tables
		// with a primary key only, Debezium all).
		{SQL: `INSERT INTO nopk (a, b) VALUES (1, 'one'), (2, 'two')`, Events: 2},
		{SQL: `UPDATE nopk SET b = 'deux' WHERE a = 2`, Events: 1},
		// A keyless delete: 'd', then a tombstone whose key is null too.
		{SQL: `DELETE FROM nopk WHERE a = 1`, Events: 2},
	}
	cfg := e.WriteConfig("  delete_mode: record_and_tombstone\n")
	listTables(t, cfg, "public.wide", "public.full_t", "public.arr_t", "public.nopk")
	itest.SideBySide{
		E: e, Exec: func(sql string) { e.Exec(sql) }, Snapshot: snapshot, Stream: stream, Topics: topics,
		Debezium: func(out string, want int) *itest.DebeziumProc { return itest.StartDebezium(t, e, out, want) },
		Config:   cfg, SnapshotWait: 60 * time.Second, StreamWait: 90 * time.Second,
	}.Run(t)
}

func fidelitySchema(hstore bool) []string {
	h := ""
	if hstore {
		h = ",\n\t\tc_hstore hstore"
	}
	return []string{
		`CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')`,
		`CREATE DOMAIN posint AS integer CHECK (VALUE > 0)`,
		`CREATE DOMAIN shorttext AS varchar(16)`,
		`CREATE TABLE wide (
		id serial PRIMARY KEY,
		c_int2 smallint,
		c_int4 integer NOT NULL DEFAULT 0,
		c_int8 bigint DEFAULT 42,
		c_oid oid,
		c_bigserial bigserial,
		c_bool boolean DEFAULT true,
		c_real real,
		c_double double precision,
		c_numeric numeric,
		c_numeric_10_2 numeric(10,2) DEFAULT 1.50,
		c_numeric_5 numeric(5),
		c_money money,
		c_text text,
		c_varchar varchar(20) DEFAULT 'dflt',
		c_char char(4),
		c_name name, -- always NULL in the rows: Debezium streams name values as null (see README)
		c_bytea bytea,
		c_date date,
		c_time time,
		c_time3 time(3),
		c_time0 time(0),
		c_timetz timetz,
		c_ts timestamp,
		c_ts3 timestamp(3),
		c_ts0 timestamp(0),
		c_tstz timestamptz,
		c_tstz3 timestamptz(3),
		c_created timestamptz NOT NULL DEFAULT now(),
		c_interval interval,
		c_uuid uuid,
		c_json json,
		c_jsonb jsonb,
		c_xml xml,
		c_inet inet,
		c_cidr cidr,
		c_macaddr macaddr,
		c_bit1 bit,
		c_bit bit(12),
		c_varbit varbit(20),
		c_int_arr integer[],
		c_text_arr text[],
		c_enum mood,
		c_domain posint,
		c_domain_text shorttext,
		c_toast text` + h + `)`,
		`CREATE TABLE full_t (id integer PRIMARY KEY, name text NOT NULL, amount numeric(8,2), body text)`,
		`ALTER TABLE full_t REPLICA IDENTITY FULL`,
		// Arrays of every element type with a TOAST placeholder of its own
		// in Debezium or none, stored out of line uncompressed (EXTERNAL) so
		// that arrRowToast's values are TOASTed whatever their entropy; and
		// the column kinds wide lacks.
		`CREATE TABLE arr_t (
		id integer PRIMARY KEY,
		n integer NOT NULL DEFAULT 0,
		a_int2 smallint[],
		a_int4 integer[] DEFAULT '{1,2}',
		a_int8 bigint[],
		a_text text[] DEFAULT '{a,"b c"}',
		a_varchar varchar(10)[],
		a_numeric numeric[],
		a_numeric_8_3 numeric(8,3)[],
		a_float8 float8[],
		a_bool boolean[],
		a_date date[],
		a_tstz timestamptz[],
		a_uuid uuid[],
		a_enum mood[] DEFAULT '{ok,sad}',
		a_jsonb jsonb[],
		c_bytea bytea,
		c_enum mood DEFAULT 'ok',
		c_interval interval DEFAULT '1 day 02:00:03.5',
		c_varbit varbit,
		c_macaddr8 macaddr8)`,
		`ALTER TABLE arr_t ALTER a_int2 SET STORAGE EXTERNAL, ALTER a_int4 SET STORAGE EXTERNAL,
		ALTER a_int8 SET STORAGE EXTERNAL, ALTER a_text SET STORAGE EXTERNAL, ALTER a_varchar SET STORAGE EXTERNAL,
		ALTER a_numeric SET STORAGE EXTERNAL, ALTER a_numeric_8_3 SET STORAGE EXTERNAL, ALTER a_float8 SET STORAGE EXTERNAL,
		ALTER a_bool SET STORAGE EXTERNAL, ALTER a_date SET STORAGE EXTERNAL, ALTER a_tstz SET STORAGE EXTERNAL,
		ALTER a_uuid SET STORAGE EXTERNAL, ALTER a_enum SET STORAGE EXTERNAL, ALTER a_jsonb SET STORAGE EXTERNAL,
		ALTER c_bytea SET STORAGE EXTERNAL`,
		// No primary key: a null key. FULL so that updates and deletes
		// are allowed and carry the row.
		`CREATE TABLE nopk (a integer, b text)`,
		`ALTER TABLE nopk REPLICA IDENTITY FULL`,
	}
}

func wideRowFull(hstore bool) itest.FidelityRow {
	r := itest.FidelityRow{
		"c_int2": "-12", "c_int4": "123456", "c_int8": "9007199254740993", "c_oid": "4000000000",
		"c_bool": "false", "c_real": "3.14", "c_double": "2.718281828459045",
		"c_numeric": "'-12345.6789'", "c_numeric_10_2": "'99.5'", "c_numeric_5": "'12345'", "c_money": "'12.34'",
		"c_text": `E'tab\there "quoted" \\ é ✓'`, "c_varchar": "'hello'", "c_char": "'ab'",
		"c_bytea": `'\x00ff10'`, "c_date": "'2024-02-29'", "c_time": "'13:14:15.123456'", "c_time3": "'13:14:15.123'",
		"c_time0": "'23:59:59'", "c_timetz": "'13:14:15.5+02'", "c_ts": "'2024-03-01 10:00:00.123456'",
		"c_ts3": "'2024-03-01 10:00:00.123'", "c_ts0": "'1969-12-31 23:59:59'", "c_tstz": "'2024-03-01 10:00:00.5+02'",
		"c_tstz3": "'2024-03-01 10:00:00.123+00'", "c_created": "'2024-01-01 00:00:00+00'",
		"c_interval": "'1 year 2 mons 3 days 04:05:06.789'", "c_uuid": "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
		"c_json": `'{"a": 1, "b": [true, null]}'`, "c_jsonb": `'{"b": [1, 2], "a": "x"}'`, "c_xml": "'<a>x</a>'",
		"c_inet": "'192.168.0.1/24'", "c_cidr": "'10.0.0.0/8'", "c_macaddr": "'08:00:2b:01:02:03'",
		"c_bit1": "B'1'", "c_bit": "B'101000000001'", "c_varbit": "B'1101'",
		"c_int_arr": "'{1,2,NULL,-4}'", "c_text_arr": `'{"a b",c,NULL}'`, "c_enum": "'happy'", "c_domain": "5",
		"c_domain_text": "'dom'", "c_toast": itest.ToastText,
	}
	if hstore {
		r["c_hstore"] = `'a=>1, "b c"=>NULL'`
	}
	return r
}

func arrRowSmall(id string) itest.FidelityRow {
	return itest.FidelityRow{
		"id": id, "n": "1", "a_int2": "'{1,-2,NULL}'", "a_int4": "'{}'", "a_int8": "'{9007199254740993,NULL}'",
		"a_text": `'{"x,y","",NULL}'`, "a_varchar": "'{ab,cd}'", "a_numeric": "'{1.5,-0.001,NaN,NULL,12345678901234567890}'",
		"a_numeric_8_3": "'{1.5,-2.125}'", "a_float8": "'{1.5,NaN,-Infinity,1e300}'", "a_bool": "'{t,f,NULL}'",
		"a_date": "'{2024-02-29,1900-01-01,NULL}'", "a_tstz": "'{\"2024-03-01 10:00:00.5+02\",infinity,NULL}'",
		"a_uuid": "'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}'", "a_enum": "'{happy,sad,NULL}'",
		"a_jsonb": `ARRAY['{"a": 1}'::jsonb, '[]', NULL]`, "c_bytea": `'\x00ff'`, "c_enum": "'sad'",
		"c_interval": "'-1 mons 3 days'", "c_varbit": "B'1011001110001111000011111'", "c_macaddr8": "'08:00:2b:01:02:03:04:05'",
	}
}

// arrRowToast has arrays and a bytea too long to stay in the row.
func arrRowToast() itest.FidelityRow {
	agg := func(expr string) string {
		return "(SELECT array_agg(" + expr + " ORDER BY g) FROM generate_series(1, 1200) g)"
	}
	return itest.FidelityRow{
		"id": "4", "n": "1",
		"a_int2": agg("(g % 30000)::int2"), "a_int4": agg("hashtext(g::text)"), "a_int8": agg("hashtext(g::text)::int8 * 1000"),
		"a_text": agg("md5(g::text)"), "a_varchar": agg("left(md5(g::text), 10)"), "a_numeric": agg("hashtext(g::text) / 7.0"),
		"a_numeric_8_3": agg("(g / 7.0)::numeric(8,3)"), "a_float8": agg("hashtext(g::text) / 3.0::float8"), "a_bool": "(SELECT array_agg(g % 3 = 0) FROM generate_series(1, 4000) g)",
		"a_date": agg("date '2000-01-01' + g"), "a_tstz": agg("timestamptz '2000-01-01 00:00:00+00' + g * interval '1 second'"),
		"a_uuid": agg("md5(g::text)::uuid"), "a_enum": agg("(enum_range(NULL::mood))[g % 3 + 1]"),
		"a_jsonb": agg("jsonb_build_object('k', g)"), "c_bytea": "(SELECT string_agg(decode(md5(g::text), 'hex'), '') FROM generate_series(1, 300) g)",
	}
}

func wideRowNulls() itest.FidelityRow {
	return itest.FidelityRow{"c_int4": "0"}
}

func wideRowEdges(hstore bool) itest.FidelityRow {
	r := itest.FidelityRow{
		"c_int2": "32767", "c_int4": "-2147483648", "c_int8": "-9223372036854775808", "c_oid": "0",
		"c_bool": "true", "c_real": "'NaN'", "c_double": "'-Infinity'",
		"c_numeric": "'NaN'", "c_numeric_10_2": "'-0.01'", "c_numeric_5": "'-99999'", "c_money": "'-1.05'",
		"c_text": "''", "c_varchar": "''", "c_char": "'abcd'",
		"c_bytea": `''`, "c_date": "'1900-01-01'", "c_time": "'24:00:00'", "c_time3": "'00:00:00'",
		"c_time0": "'00:00:01'", "c_timetz": "'00:00:00-05:30'", "c_ts": "'infinity'",
		"c_ts3": "'-infinity'", "c_ts0": "'0044-03-15 12:00:00 BC'", "c_tstz": "'infinity'",
		"c_tstz3": "'-infinity'", "c_created": "'1900-01-01 00:00:00.000001+00'",
		"c_interval": "'-3 days -00:00:01'", "c_uuid": "'00000000-0000-0000-0000-000000000000'",
		"c_json": `'[]'`, "c_jsonb": `'null'`, "c_xml": "'<r/>'",
		"c_inet": "'::1'", "c_cidr": "'2001:db8::/32'", "c_macaddr": "'ff:ff:ff:ff:ff:ff'",
		"c_bit1": "B'0'", "c_bit": "B'000000000000'", "c_varbit": "B'10000000000000000001'",
		"c_int_arr": "'{}'", "c_text_arr": `'{""}'`, "c_enum": "'sad'", "c_domain": "2147483647",
		"c_domain_text": "''", "c_toast": "''",
	}
	if hstore {
		r["c_hstore"] = `''`
	}
	return r
}

// listTables gives the config at path a source.tables include list.
func listTables(t *testing.T, path string, tables ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	list := "  tables: [" + strings.Join(tables, ", ") + "]\n"
	out := strings.Replace(string(b), "  type: postgres\n", "  type: postgres\n"+list, 1)
	if out == string(b) {
		t.Fatalf("%s: no postgres source section to add tables to", path)
	}
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
}
