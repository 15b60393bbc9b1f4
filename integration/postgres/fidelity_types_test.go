package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestDebeziumFidelityTypes is TestDebeziumFidelity for the extension,
// range, text-search and spatial types: citext, "char", the six
// built-in ranges, tsvector, ltree, point and PostGIS geometry/geography,
// as columns, as array elements where Debezium publishes arrays of them,
// and behind domains. Real Debezium and Tributary read the same database;
// every key and value must be identical outside the volatile fields, in
// the snapshot and in the stream.
func TestDebeziumFidelityTypes(t *testing.T) {
	e := itest.NewEnv(t, "fidty")
	for _, ext := range []string{"citext", "ltree", "postgis"} {
		// PostGIS comes from Debian's postgresql-<version>-postgis-3
		// (integration/services/postgres.sh installs it).
		e.Exec(`CREATE EXTENSION IF NOT EXISTS ` + ext)
	}
	for _, sql := range typesSchema() {
		e.Exec(sql)
	}
	topic := e.Prefix + ".public.types_t"
	topics := []string{topic}
	itest.CreateSinglePartitionTopics(t, topics...)

	snapshot := []itest.FidelityStep{
		{SQL: itest.FidelityInsert("types_t", typesRowFull("1")), Events: 1},
		{SQL: itest.FidelityInsert("types_t", typesRowNulls("2")), Events: 1},
		{SQL: itest.FidelityInsert("types_t", typesRowEdges("3")), Events: 1},
	}
	stream := []itest.FidelityStep{
		{SQL: itest.FidelityInsert("types_t", typesRowFull("4")), Events: 1},
		{SQL: itest.FidelityInsert("types_t", typesRowNulls("5")), Events: 1},
		{SQL: itest.FidelityInsert("types_t", typesRowEdges("6")), Events: 1},
		{SQL: `UPDATE types_t SET c_citext = 'Changed@Example.COM', c_point = '(-1,-2)', c_geom = 'SRID=3857;LINESTRING(0 0,1 1)' WHERE id = 4`, Events: 1},
		{SQL: `DELETE FROM types_t WHERE id = 5`, Events: 2}, // key-only before image: NOT NULL point and geometry fall back
		{SQL: `UPDATE types_t SET id = 60 WHERE id = 6`, Events: 3},
		// Values stored out of line, then left unchanged by an update:
		// PostgreSQL does not send them and each side writes its
		// placeholder.
		{SQL: `INSERT INTO types_t (id, c_point_nn, c_geom_nn, c_citext, c_tsvector, c_ltree, c_geom, c_geog, a_citext, a_int4range, a_geom) VALUES (7, '(0,0)',
			ST_Buffer('POINT(0 0)'::geometry, 10, 500), ` + itest.ToastText + `, to_tsvector('simple', ` + itest.ToastText + `), (SELECT string_agg('l' || g, '.')::ltree FROM generate_series(1, 800) g),
			ST_Buffer('SRID=4326;POINT(1 1)'::geometry, 10, 500), ST_Buffer('POINT(1 1)'::geography, 10, 500)::geometry::geography,
			(SELECT array_agg(md5(g::text)) FROM generate_series(1, 200) g), (SELECT array_agg(int4range(g, g + 1)) FROM generate_series(1, 300) g),
			ARRAY[ST_Buffer('POINT(0 0)'::geometry, 10, 500)])`, Events: 1},
		{SQL: `UPDATE types_t SET c_int4range = '[2,3)' WHERE id = 7`, Events: 1},
	}
	// PostGIS's own table spatial_ref_sys is left out: Debezium does not
	// snapshot it, Tributary's default selection would.
	cfg := e.WriteSourceConfig("  tables: [public.types_t]\n", "  delete_mode: record_and_tombstone\n")
	out := itest.SideBySide{
		E: e, Exec: func(sql string) { e.Exec(sql) }, Snapshot: snapshot, Stream: stream, Topics: topics,
		Debezium: func(out string, want int) *itest.DebeziumProc { return itest.StartDebezium(t, e, out, want) },
		Config:   cfg, SnapshotWait: 90 * time.Second, StreamWait: 90 * time.Second,
	}.Run(t)
	// point[] and arrays of a domain are columns Debezium leaves out too:
	// Tributary must say so.
	for _, col := range []string{`"column":"a_point"`, `"column":"d_emails"`} {
		if !strings.Contains(out, col) {
			t.Errorf("no warning about the dropped column %s; output:\n%s", col, out)
		}
	}
}

func typesSchema() []string {
	return []string{
		`CREATE DOMAIN email AS citext`,
		`CREATE DOMAIN place AS geometry(Point, 4326)`,
		`CREATE DOMAIN span AS int4range`,
		`CREATE TABLE types_t (
		id integer PRIMARY KEY,
		c_citext citext DEFAULT 'Dflt',
		c_char "char" DEFAULT 'z',
		c_int4range int4range DEFAULT '[1,5)',
		c_int8range int8range,
		c_numrange numrange,
		c_tsrange tsrange,
		c_tstzrange tstzrange,
		c_daterange daterange DEFAULT '[2024-01-01,2024-02-01)'::daterange,
		c_tsvector tsvector DEFAULT 'a:1'::tsvector,
		c_ltree ltree DEFAULT 'Top.Default',
		c_point point DEFAULT '(1,1)',
		c_point_nn point NOT NULL,
		c_geom geometry,
		c_geom_4326 geometry(Point, 4326),
		c_geom_nn geometry NOT NULL,
		c_geog geography,
		c_geog_line geography(LineString, 4326),
		a_citext citext[],
		a_char "char"[],
		a_int4range int4range[],
		a_tstzrange tstzrange[],
		a_numrange numrange[],
		a_int8range int8range[],
		a_tsrange tsrange[],
		a_daterange daterange[],
		a_ltree ltree[],
		a_geom geometry[],
		a_geog geography[],
		a_tsvector tsvector[],
		a_point point[],
		d_email email,
		d_place place,
		d_span span DEFAULT '[0,1)',
		d_emails email[])`,
		`ALTER TABLE types_t ALTER c_geom SET STORAGE EXTERNAL, ALTER c_geog SET STORAGE EXTERNAL,
		ALTER c_citext SET STORAGE EXTERNAL, ALTER c_tsvector SET STORAGE EXTERNAL, ALTER c_ltree SET STORAGE EXTERNAL,
		ALTER a_citext SET STORAGE EXTERNAL, ALTER a_int4range SET STORAGE EXTERNAL, ALTER a_geom SET STORAGE EXTERNAL`,
	}
}

func typesRowFull(id string) itest.FidelityRow {
	return itest.FidelityRow{
		"id": id, "c_citext": "'User@Example.com'", "c_char": `'x'`,
		"c_int4range": "'[1,10)'", "c_int8range": "'(9007199254740993,9007199254740999]'", "c_numrange": "'[1.5,2.25]'",
		"c_tsrange": "'[2024-01-01 10:00:00.123456,2024-01-02 00:00:00)'", "c_tstzrange": "'[2024-01-01 10:00:00+02,2024-01-02 00:00:00+00)'",
		"c_daterange": "'[2024-02-29,2024-03-05]'",
		"c_tsvector":  "to_tsvector('english', 'The quick brown fox jumps over the lazy dog''s back')",
		"c_ltree":     "'Top.Science.Astronomy'", "c_point": "'(1.5,-2.25)'", "c_point_nn": "'(0.1,0.2)'",
		"c_geom": "'POLYGON((0 0,4 0,4 4,0 4,0 0),(1 1,2 1,2 2,1 2,1 1))'", "c_geom_4326": "'SRID=4326;POINT(13.4 52.52)'",
		"c_geom_nn": "'SRID=3857;MULTIPOINT((1 2),(3 4))'", "c_geog": "'POINT(-71.06 42.36)'",
		"c_geog_line": "'LINESTRING(-71.06 42.36,-0.12 51.5)'",
		"a_citext":    `'{Alpha,"b c",NULL}'`, "a_char": `'{a,b,NULL}'`, "a_int4range": `'{"[1,3)",empty,NULL}'`,
		"a_tstzrange": `'{"[2024-01-01 00:00:00+00,infinity)"}'`, "a_numrange": `'{"(,5.5]"}'`,
		"a_int8range": `'{"[1,2)"}'`, "a_tsrange": `'{"[2024-01-01 00:00:00,2024-01-01 00:00:01)"}'`,
		"a_daterange": `'{"[2024-01-01,2024-01-05)",empty}'`, "d_emails": `'{A@B.C}'`,
		"a_ltree":    `'{Top.A,Top.B.C}'`,
		"a_geom":     `ARRAY['POINT(1 2)'::geometry, 'SRID=4326;LINESTRING(0 0,1 1)'::geometry, NULL]`,
		"a_geog":     `ARRAY['POINT(1 2)'::geography]`,
		"a_tsvector": `ARRAY[to_tsvector('simple', 'a b'), 'x:1A y'::tsvector]`,
		"a_point":    `'{"(1,2)"}'`,
		"d_email":    "'Dom@Example.COM'", "d_place": "'SRID=4326;POINT(1 1)'", "d_span": "'[5,7)'",
	}
}

func typesRowNulls(id string) itest.FidelityRow {
	return itest.FidelityRow{"id": id, "c_point_nn": "'(0,0)'", "c_geom_nn": "'POINT EMPTY'"}
}

func typesRowEdges(id string) itest.FidelityRow {
	return itest.FidelityRow{
		"id": id, "c_citext": "''", "c_char": `'\'`,
		"c_int4range": "'empty'", "c_int8range": "'(,)'", "c_numrange": "'(-Infinity,NaN]'",
		"c_tsrange": "'[-infinity,infinity]'", "c_tstzrange": "'(,2024-06-01 00:00:00.5-03:30)'",
		"c_daterange": "'[2024-01-01,)'", "c_tsvector": "''::tsvector", "c_ltree": "''",
		"c_point": "'(1e300,-0)'", "c_point_nn": "'(-1.5e-300,123456789.125)'",
		"c_geom": "'SRID=4326;POINT Z(1 2 3)'", "c_geom_4326": "'SRID=4326;POINT EMPTY'",
		"c_geom_nn": "'GEOMETRYCOLLECTION EMPTY'", "c_geog": "'SRID=4326;POLYGON((0 0,1 0,1 1,0 0))'",
		"a_citext": "'{}'", "a_char": `'{""}'`, "a_int4range": "'{}'", "a_ltree": "'{}'", "a_geom": "'{}'",
		"d_email": "''", "d_span": "'empty'",
	}
}
