package postgres_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGSourceSequenceAgainstDebezium: Debezium's PostgreSQL connector
// and Tributary stream the same WAL, with an application's logical
// decoding messages between the captured changes (one transactional,
// alone in its transaction, and one not) and a transaction on a table
// neither captures. Debezium asks pgoutput for messages (PostgreSQL 14
// and later): both messages move the first element of its
// source.sequence, the last commit. Tributary's used to stay at the
// previous transaction's, so the two disagreed on the changes after a
// message; every captured change's sequence must be Debezium's.
func TestPGSourceSequenceAgainstDebezium(t *testing.T) {
	e := itest.NewEnv(t, "pgseqdbz")
	e.Exec(`CREATE TABLE c (id int PRIMARY KEY)`)
	e.Exec(`CREATE TABLE nc (id int PRIMARY KEY)`)
	out := filepath.Join(e.Dir, "debezium.jsonl")
	dbz := itest.StartDebezium(t, e, out, 0, "table.include.list=public.c\n", "publication.autocreate.mode=filtered\n")
	defer dbz.Stop()
	p := e.Start("run", "--config", e.WritePipeline(itest.PipelineConfig{Source: "  tables: [public.c]\n"}))
	itest.WaitOrDump(t, p, 120*time.Second, "both readers streaming", func() bool {
		return e.PGCount(t, `SELECT count(*) FROM pg_replication_slots WHERE active AND database = current_database()`) == 2
	})
	// Debezium's stream starts after its snapshot: a first change, which
	// it may read as a snapshot row, then the rest once it has written
	// it. Row 1 is not compared: before the first message, the last
	// commit each knows depends on where each began streaming.
	e.Exec(`INSERT INTO c VALUES (1)`)
	itest.WaitFor(t, 120*time.Second, "Debezium's first record", func() bool { return itest.CountLines(out) >= 1 })
	e.Exec(`SELECT pg_logical_emit_message(true, 'app', 'x')`)
	e.Exec(`INSERT INTO c VALUES (2)`)
	e.Exec(`SELECT pg_logical_emit_message(false, 'app', 'y')`)
	e.Exec(`INSERT INTO c VALUES (3)`)
	e.Exec(`INSERT INTO nc VALUES (1)`)
	e.Exec(`BEGIN; INSERT INTO c VALUES (4); INSERT INTO c VALUES (5); COMMIT`)
	topic := e.Prefix + ".public.c"
	sequences := func(recs []itest.RawRecord) map[string]string {
		out := map[string]string{}
		for _, r := range recs {
			m, _ := r.Value.(map[string]any)
			pl, _ := m["payload"].(map[string]any)
			after, _ := pl["after"].(map[string]any)
			src, _ := pl["source"].(map[string]any)
			if after != nil {
				out[fmt.Sprint(after["id"])] = fmt.Sprint(src["sequence"])
			}
		}
		return out
	}
	itest.WaitOrDump(t, p, 120*time.Second, "five rows from each", func() bool {
		return len(sequences(itest.ReadDebeziumOutput(t, out))) >= 5 && itest.TopicEnd(topic) >= 5
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}
	want, got := sequences(itest.ReadDebeziumOutput(t, out)), sequences(itest.ReadTopicRaw(t, topic))
	for id := 2; id <= 5; id++ {
		k := fmt.Sprint(id)
		if got[k] != want[k] {
			t.Errorf("row %d: source.sequence %s, Debezium's %s", id, got[k], want[k])
		}
	}
}
