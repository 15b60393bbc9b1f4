package postgres_test

import (
	"os"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestDebeziumFidelityInfinityDefaults: a temporal column DEFAULT
// 'infinity' or '-infinity' has the schema default Debezium gives it, for
// every temporal type that takes infinity (date, timestamp of adaptive's
// three precisions, timestamptz) and in both time.precision.mode values
// whose forms differ (adaptive and connect); a delete's key-only before
// image carries those defaults, the nullable columns' too. Values of date
// ±infinity are left out: Debezium's differ from its defaults (and between
// snapshot and stream), a documented difference (pkg/debezium/doc.go). The
// same table has
// varbit(1) columns, a boolean for Debezium as bit(1) is (an empty one
// null).
func TestDebeziumFidelityInfinityDefaults(t *testing.T) {
	for _, mode := range []string{"adaptive", "connect"} {
		t.Run(mode, func(t *testing.T) {
			e := itest.NewEnv(t, "fidinf")
			e.Exec(`CREATE TABLE inf_t (id int PRIMARY KEY,
  ts timestamp NOT NULL DEFAULT 'infinity', ts_neg timestamp NOT NULL DEFAULT '-infinity',
  ts3 timestamp(3) NOT NULL DEFAULT 'infinity', ts3_neg timestamp(3) DEFAULT '-infinity',
  ts0 timestamp(0) DEFAULT 'infinity',
  tz timestamptz NOT NULL DEFAULT 'infinity', tz_neg timestamptz DEFAULT '-infinity',
  d date NOT NULL DEFAULT 'infinity', d_neg date DEFAULT '-infinity',
  vb varbit(1), vb_nn varbit(1) NOT NULL DEFAULT B'1', b1 bit(1))`)
			topic := e.Prefix + ".public.inf_t"
			itest.CreateSinglePartitionTopics(t, topic)
			snapshot := []itest.FidelityStep{
				{SQL: `INSERT INTO inf_t (id, d, d_neg, vb, b1) VALUES (1, '2020-01-02', NULL, B'1', B'0')`, Events: 1},
				{SQL: `INSERT INTO inf_t (id, d, d_neg, vb, vb_nn) VALUES (2, '1999-12-31', '2000-01-01', B'0', B'0')`, Events: 1},
			}
			stream := []itest.FidelityStep{
				{SQL: `INSERT INTO inf_t (id, d, d_neg, vb, b1) VALUES (3, '2021-05-06', NULL, B'1', B'1')`, Events: 1},
				{SQL: `INSERT INTO inf_t (id, ts, d, d_neg, vb) VALUES (4, '2020-01-02 03:04:05', '2020-01-02', NULL, B'0')`, Events: 1},
				{SQL: `UPDATE inf_t SET vb = B'0', vb_nn = B'1' WHERE id = 3`, Events: 1},
				{SQL: `UPDATE inf_t SET vb = B'' WHERE id = 4`, Events: 1}, // Debezium's null
				{SQL: `DELETE FROM inf_t WHERE id = 1`, Events: 2},         // key-only before image: the defaults
			}
			cfg := e.WriteSourceConfig("  tables: [public.inf_t]\n", "  delete_mode: record_and_tombstone\n")
			f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("format:\n  time_precision: " + mode + "\n"); err != nil {
				t.Fatal(err)
			}
			f.Close()
			itest.SideBySide{
				E: e, Exec: func(sql string) { e.Exec(sql) }, Snapshot: snapshot, Stream: stream, Topics: []string{topic},
				Debezium: func(out string, want int) *itest.DebeziumProc {
					return itest.StartDebezium(t, e, out, want, "table.include.list=public.inf_t\n", "time.precision.mode="+mode+"\n")
				},
				Config: cfg, SnapshotWait: 90 * time.Second, StreamWait: 90 * time.Second,
			}.Run(t)
		})
	}
}
