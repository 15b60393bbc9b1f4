package mysql_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestDebeziumFidelityMySQLSpatial is TestDebeziumFidelityMySQL for the
// spatial types: POINT as io.debezium.data.geometry.Point and
// GEOMETRY, LINESTRING, POLYGON, the MULTI* types and GEOMETRYCOLLECTION
// as io.debezium.data.geometry.Geometry, with and without an SRID, in the
// snapshot and in the binlog, side by side with Debezium's MariaDB
// connector.
func TestDebeziumFidelityMySQLSpatial(t *testing.T) {
	e := itest.NewMyEnv(t, "myspat")
	e.Exec(`CREATE TABLE spatial_t (
  id INT NOT NULL PRIMARY KEY,
  c_point POINT,
  c_point_nn POINT NOT NULL,
  c_geom GEOMETRY,
  c_line LINESTRING,
  c_poly POLYGON,
  c_mpoint MULTIPOINT,
  c_mline MULTILINESTRING,
  c_mpoly MULTIPOLYGON,
  c_coll GEOMETRYCOLLECTION,
  c_geom_nn GEOMETRY NOT NULL)`)
	topic := e.Prefix + "." + e.DB + ".spatial_t"
	itest.CreateSinglePartitionTopics(t, topic)

	full := func(id int) string {
		return fmt.Sprintf(`INSERT INTO spatial_t VALUES (%d, ST_GeomFromText('POINT(1.5 -2.25)'), ST_GeomFromText('POINT(0.1 0.2)', 4326),
  ST_GeomFromText('POLYGON((0 0,4 0,4 4,0 4,0 0),(1 1,2 1,2 2,1 2,1 1))', 3857), ST_GeomFromText('LINESTRING(0 0,1 1,2 0)'),
  ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))'), ST_GeomFromText('MULTIPOINT(1 2,3 4)'),
  ST_GeomFromText('MULTILINESTRING((0 0,1 1),(2 2,3 3))'), ST_GeomFromText('MULTIPOLYGON(((0 0,1 0,1 1,0 0)))'),
  ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1))'), ST_GeomFromText('POINT(5 6)', 4326))`, id)
	}
	nulls := func(id int) string {
		return fmt.Sprintf(`INSERT INTO spatial_t (id, c_point_nn, c_geom_nn) VALUES (%d, POINT(0, 0), ST_GeomFromText('GEOMETRYCOLLECTION EMPTY'))`, id)
	}
	edges := func(id int) string {
		return fmt.Sprintf(`INSERT INTO spatial_t (id, c_point, c_point_nn, c_geom, c_geom_nn) VALUES (%d, POINT(1e300, -0.0),
  POINT(-1.5e-300, 123456789.125), ST_GeomFromText('LINESTRING(1 1,2 2)', 4326), ST_GeomFromText('MULTIPOINT(0 0)'))`, id)
	}
	snapshot := []itest.FidelityStep{{SQL: full(1), Events: 1}, {SQL: nulls(2), Events: 1}, {SQL: edges(3), Events: 1}}
	stream := []itest.FidelityStep{
		{SQL: full(4), Events: 1}, {SQL: nulls(5), Events: 1}, {SQL: edges(6), Events: 1},
		{SQL: `UPDATE spatial_t SET c_point = POINT(-1, -2), c_geom = ST_GeomFromText('POINT(9 9)', 3857) WHERE id = 4`, Events: 1},
		{SQL: `DELETE FROM spatial_t WHERE id = 5`, Events: 2},
		{SQL: `UPDATE spatial_t SET id = 60 WHERE id = 6`, Events: 3},
	}
	itest.SideBySide{
		E: e.Env, Exec: func(sql string) { e.Exec(sql) }, Snapshot: snapshot, Stream: stream, Topics: []string{topic},
		Debezium:     func(out string, want int) *itest.DebeziumProc { return itest.StartMariaDBDebezium(t, e, out, want) },
		Config:       e.WriteConfigWith("", "  delete_mode: record_and_tombstone\n"),
		SnapshotWait: 60 * time.Second, StreamWait: 40 * time.Second, Mariadb: true,
	}.Run(t)
}
