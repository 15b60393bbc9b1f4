package mysql_test

import (
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestDebeziumFidelityMySQLUUID is TestDebeziumFidelityMySQL for MariaDB's
// UUID type (10.7+): a string named io.debezium.data.Uuid, in the key as
// well, side by side with Debezium's MariaDB connector, in the snapshot and
// in the binlog. Two rows that differ only in their UUID key column have
// two keys. The values cover the versions MariaDB stores in different byte
// orders (time-based v1 swapped for index order, the others as written).
// Not a UUID ending in a zero byte: the binlog cuts trailing zeros and
// Debezium 3.5 pads at the wrong end ("00123e45-…-426614174000" for
// "123e4567-…-426614174000"); TestMySQLFixedBinaryTypes checks those
// against the database.
func TestDebeziumFidelityMySQLUUID(t *testing.T) {
	e := itest.NewMyEnv(t, "myuuid")
	e.Exec(`CREATE TABLE uuid_t (
  id INT NOT NULL,
  u UUID NOT NULL,
  note UUID NULL,
  d UUID NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000',
  PRIMARY KEY (id, u))`)
	topic := e.Prefix + "." + e.DB + ".uuid_t"
	itest.CreateSinglePartitionTopics(t, topic)
	snapshot := []itest.FidelityStep{
		{SQL: `INSERT INTO uuid_t (id, u, note) VALUES (1, '00000000-0000-0000-0000-0000000000a1', NULL)`, Events: 1},
		{SQL: `INSERT INTO uuid_t (id, u, note) VALUES (1, '00000000-0000-0000-0000-0000000000b2', '6ccd780c-baba-1026-9564-5b8c656024db')`, Events: 1},
		{SQL: `INSERT INTO uuid_t (id, u, note, d) VALUES (2, '123e4567-e89b-42d3-a456-426614174000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')`, Events: 1},
	}
	stream := []itest.FidelityStep{
		{SQL: `INSERT INTO uuid_t (id, u, note) VALUES (3, '00000000-0000-0000-0000-0000000000a1', '6ccd780c-baba-1026-9564-5b8c656024db')`, Events: 1},
		{SQL: `INSERT INTO uuid_t (id, u, note) VALUES (3, '00000000-0000-0000-0000-0000000000b2', NULL)`, Events: 1},
		{SQL: `INSERT INTO uuid_t (id, u, note, d) VALUES (4, 'e7a1c3b0-71ca-11e1-9e33-c80aa9429562', '01890a5d-ac96-774b-bcce-b302099a8057', '123e4567-e89b-12d3-0456-426614174001')`, Events: 1},
		{SQL: `UPDATE uuid_t SET note = '00000000-0000-0000-0000-000000000001' WHERE id = 3 AND u = '00000000-0000-0000-0000-0000000000b2'`, Events: 1},
		{SQL: `UPDATE uuid_t SET u = '6ccd780c-baba-1026-9564-5b8c656024db' WHERE id = 4`, Events: 3},
		{SQL: `DELETE FROM uuid_t WHERE id = 1 AND u = '00000000-0000-0000-0000-0000000000a1'`, Events: 2},
	}
	itest.SideBySide{
		E: e.Env, Exec: func(sql string) { e.Exec(sql) }, Snapshot: snapshot, Stream: stream, Topics: []string{topic},
		Debezium:     func(out string, want int) *itest.DebeziumProc { return itest.StartMariaDBDebezium(t, e, out, want) },
		Config:       e.WriteConfigWith("", "  delete_mode: record_and_tombstone\n"),
		SnapshotWait: 60 * time.Second, StreamWait: 40 * time.Second, Mariadb: true,
	}.Run(t)
}

// TestDebeziumFidelityMySQLTimestampFraction compares TIMESTAMP(n) values
// with zero and non-zero fractions, and their defaults, byte for byte
// with Debezium's MariaDB connector, snapshot rows and keys included:
// Debezium's snapshot (JDBC) writes "2000-02-29T12:00:00Z" and "….12Z"
// for TIMESTAMP(3), its binlog rows and defaults "….000Z" and "….120Z".
func TestDebeziumFidelityMySQLTimestampFraction(t *testing.T) {
	e := itest.NewMyEnv(t, "mytsfrac")
	e.Exec(`SET SESSION time_zone = '+00:00'`)
	e.Exec(`CREATE TABLE ts_t (
  id INT NOT NULL,
  t0 TIMESTAMP(0) NULL,
  t3 TIMESTAMP(3) NOT NULL DEFAULT '2000-02-29 12:00:00',
  t3b TIMESTAMP(3) NULL DEFAULT '2000-02-29 12:00:00.120',
  t6 TIMESTAMP(6) NULL DEFAULT '2000-02-29 12:00:00.000100',
  dt3 DATETIME(3) NULL,
  PRIMARY KEY (id, t3))`)
	topic := e.Prefix + "." + e.DB + ".ts_t"
	itest.CreateSinglePartitionTopics(t, topic)
	row := func(id string) string {
		return `INSERT INTO ts_t VALUES (` + id + `, '2000-02-29 12:00:00', '2000-02-29 12:00:00', '2000-02-29 12:00:00.120', '2000-02-29 12:00:00.000100', '2000-02-29 12:00:00')`
	}
	other := func(id string) string {
		return `INSERT INTO ts_t VALUES (` + id + `, '2024-03-01 10:00:01', '2024-03-01 10:00:00.001', '2024-03-01 10:00:00.999', '2024-03-01 10:00:00.123456', '2024-03-01 10:00:00.5')`
	}
	snapshot := []itest.FidelityStep{{SQL: row("1"), Events: 1}, {SQL: other("2"), Events: 1}, {SQL: `INSERT INTO ts_t (id) VALUES (3)`, Events: 1}}
	stream := []itest.FidelityStep{
		{SQL: row("11"), Events: 1}, {SQL: other("12"), Events: 1}, {SQL: `INSERT INTO ts_t (id) VALUES (13)`, Events: 1},
		{SQL: `UPDATE ts_t SET t3 = '2000-01-01 00:00:00.100' WHERE id = 11`, Events: 3},
		{SQL: `UPDATE ts_t SET t6 = NULL WHERE id = 1`, Events: 1},
	}
	itest.SideBySide{
		E: e.Env, Exec: func(sql string) { e.Exec(sql) }, Snapshot: snapshot, Stream: stream, Topics: []string{topic},
		Debezium:     func(out string, want int) *itest.DebeziumProc { return itest.StartMariaDBDebezium(t, e, out, want) },
		Config:       e.WriteConfigWith("", "  delete_mode: record_and_tombstone\n"),
		SnapshotWait: 60 * time.Second, StreamWait: 40 * time.Second, Mariadb: true,
	}.Run(t)
}
