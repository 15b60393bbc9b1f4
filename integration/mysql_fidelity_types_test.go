package integration

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
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
	for _, s := range snapshot {
		e.exec(s.sql)
	}
	stream := []fidelityStep{
		{full(4), 1}, {nulls(5), 1}, {edges(6), 1},
		{`UPDATE spatial_t SET c_point = POINT(-1, -2), c_geom = ST_GeomFromText('POINT(9 9)', 3857) WHERE id = 4`, 1},
		{`DELETE FROM spatial_t WHERE id = 5`, 2},
		{`UPDATE spatial_t SET id = 60 WHERE id = 6`, 3},
	}
	want := 0
	for _, s := range append(snapshot, stream...) {
		want += s.events
	}

	dbzOut := filepath.Join(e.dir, "debezium.jsonl")
	props := fmt.Sprintf(`connector.class=io.debezium.connector.mariadb.MariaDbConnector
database.hostname=127.0.0.1
database.port=3306
database.user=root
database.password=root
database.server.id=%d
database.include.list=%s
topic.prefix=%s
include.schema.changes=false
schema.history.internal=io.debezium.storage.file.history.FileSchemaHistory
schema.history.internal.file.filename=%s
offset.storage=org.apache.kafka.connect.storage.FileOffsetBackingStore
offset.storage.file.filename=%s
harness.max.records=%d
harness.max.runtime.ms=110000
`, 5_500_000+rand.IntN(100_000), e.db, e.prefix,
		filepath.Join(e.dir, "debezium-history.dat"), filepath.Join(e.dir, "debezium-offsets.dat"), want)
	dbz := runDebezium(t, e.dir, "mariadb", props, dbzOut)
	cfg := e.writeConfigWith("", "  delete_mode: record_and_tombstone\n")
	p := e.start("run", "--config", cfg)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tributary output:\n%s", p.out)
		}
	})

	waitFor(t, 60*time.Second, "both snapshots", func() bool {
		if dbz.exited() {
			t.Fatalf("debezium exited early:\n%s", dbz.out)
		}
		if p.exited() {
			t.Fatalf("tributary exited early:\n%s", p.out)
		}
		return countLines(dbzOut) >= len(snapshot) && topicEnd(topic) >= int64(len(snapshot))
	})
	for _, s := range stream {
		e.exec(s.sql)
	}
	deadline := time.Now().Add(40 * time.Second)
	for time.Now().Before(deadline) && !(countLines(dbzOut) >= want && topicEnd(topic) >= int64(want)) {
		if p.exited() {
			t.Fatalf("tributary exited:\n%s", p.out)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("tributary exit code %d after SIGTERM; output:\n%s", code, p.out)
	}
	dbz.stop()

	dbzRecs := readDebeziumOutput(t, dbzOut)
	diffs := fidelityDiffs{sanitize: sanitizeMySQL}
	trib := readTopicRaw(t, topic)
	keepFidelityOutput(t, topic, dbzRecs, trib)
	checkSourceVersions(&diffs, topic, dbzRecs, trib)
	diffs.compareTopic(topic, dbzRecs, trib)
	if len(dbzRecs) != want {
		diffs.add("", -1, "count", fmt.Sprintf("%d records", len(dbzRecs)), fmt.Sprintf("%d expected by the test script", want))
	}
	t.Logf("compared %d records with Debezium's MariaDB connector %s: %d difference(s)", len(dbzRecs), mariadbPeerVersion, len(diffs.lines))
	if len(diffs.lines) > 0 {
		t.Errorf("Tributary differs from Debezium's MariaDB connector %s (%d difference(s); volatile fields ignored: %s; in 'r' messages also %s):\n%s",
			mariadbPeerVersion, len(diffs.lines), strings.Join(mysqlVolatileFields, ", "),
			strings.Join(mysqlSnapshotVolatileFields, ", "), diffs.String())
	}
}
