package integration

import (
	"os"
	"testing"
	"time"
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
			e := newEnv(t, "fidinf")
			e.exec(`CREATE TABLE inf_t (id int PRIMARY KEY,
  ts timestamp NOT NULL DEFAULT 'infinity', ts_neg timestamp NOT NULL DEFAULT '-infinity',
  ts3 timestamp(3) NOT NULL DEFAULT 'infinity', ts3_neg timestamp(3) DEFAULT '-infinity',
  ts0 timestamp(0) DEFAULT 'infinity',
  tz timestamptz NOT NULL DEFAULT 'infinity', tz_neg timestamptz DEFAULT '-infinity',
  d date NOT NULL DEFAULT 'infinity', d_neg date DEFAULT '-infinity',
  vb varbit(1), vb_nn varbit(1) NOT NULL DEFAULT B'1', b1 bit(1))`)
			topic := e.prefix + ".public.inf_t"
			createSinglePartitionTopics(t, topic)
			snapshot := []fidelityStep{
				{`INSERT INTO inf_t (id, d, d_neg, vb, b1) VALUES (1, '2020-01-02', NULL, B'1', B'0')`, 1},
				{`INSERT INTO inf_t (id, d, d_neg, vb, vb_nn) VALUES (2, '1999-12-31', '2000-01-01', B'0', B'0')`, 1},
			}
			stream := []fidelityStep{
				{`INSERT INTO inf_t (id, d, d_neg, vb, b1) VALUES (3, '2021-05-06', NULL, B'1', B'1')`, 1},
				{`INSERT INTO inf_t (id, ts, d, d_neg, vb) VALUES (4, '2020-01-02 03:04:05', '2020-01-02', NULL, B'0')`, 1},
				{`UPDATE inf_t SET vb = B'0', vb_nn = B'1' WHERE id = 3`, 1},
				{`UPDATE inf_t SET vb = B'' WHERE id = 4`, 1}, // Debezium's null
				{`DELETE FROM inf_t WHERE id = 1`, 2},         // key-only before image: the defaults
			}
			cfg := e.writeSourceConfig("  tables: [public.inf_t]\n", "  delete_mode: record_and_tombstone\n")
			f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("format:\n  time_precision: " + mode + "\n"); err != nil {
				t.Fatal(err)
			}
			f.Close()
			sideBySide{
				e: e, exec: func(sql string) { e.exec(sql) }, snapshot: snapshot, stream: stream, topics: []string{topic},
				debezium: func(out string, want int) *debeziumProc {
					return startDebezium(t, e, out, want, "table.include.list=public.inf_t\n", "time.precision.mode="+mode+"\n")
				},
				config: cfg, snapshotWait: 90 * time.Second, streamWait: 90 * time.Second,
			}.run(t)
		})
	}
}
