package integration

import (
	"fmt"
	"testing"
	"time"
)

// TestDebeziumFidelityMySQLSpatial is TestDebeziumFidelityMySQL for the
// spatial types (issue 18): POINT as io.debezium.data.geometry.Point and
// GEOMETRY, LINESTRING, POLYGON, the MULTI* types and GEOMETRYCOLLECTION
// as io.debezium.data.geometry.Geometry, with and without an SRID, in the
// snapshot and in the binlog, side by side with Debezium's MariaDB
// connector.
func TestDebeziumFidelityMySQLSpatial(t *testing.T) {
	e := newMyEnv(t, "myspat")
	e.exec(`CREATE TABLE spatial_t (
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
	topic := e.prefix + "." + e.db + ".spatial_t"
	createSinglePartitionTopics(t, topic)

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
	snapshot := []fidelityStep{{full(1), 1}, {nulls(2), 1}, {edges(3), 1}}
	stream := []fidelityStep{
		{full(4), 1}, {nulls(5), 1}, {edges(6), 1},
		{`UPDATE spatial_t SET c_point = POINT(-1, -2), c_geom = ST_GeomFromText('POINT(9 9)', 3857) WHERE id = 4`, 1},
		{`DELETE FROM spatial_t WHERE id = 5`, 2},
		{`UPDATE spatial_t SET id = 60 WHERE id = 6`, 3},
	}
	sideBySide{
		e: e.env, exec: func(sql string) { e.exec(sql) }, snapshot: snapshot, stream: stream, topics: []string{topic},
		debezium:     func(out string, want int) *debeziumProc { return startMariaDBDebezium(t, e, out, want) },
		config:       e.writeConfigWith("", "  delete_mode: record_and_tombstone\n"),
		snapshotWait: 60 * time.Second, streamWait: 40 * time.Second, mariadb: true,
	}.run(t)
}
