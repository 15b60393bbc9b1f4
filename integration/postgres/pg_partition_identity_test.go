package postgres_test

import (
	"fmt"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGPartitionFullUnderDefaultRoot: a partition with REPLICA IDENTITY
// FULL under a partitioned table whose own replica identity is DEFAULT
// (ALTER TABLE on the root does not reach its partitions). pgoutput marks
// that partition's old rows with the root's tuple type, an old key, on
// every update, the key changed or not. An update of a non-key column is
// one update with the old row as before, as Debezium publishes it
// (docs/postgresql.md), not a delete, a tombstone and a create of the
// same key; an update that moves the row to another key is still a
// delete of the old key and a create of the new one (no tombstone: the
// default delete_mode). An old row whose columns outside the key are all
// null is still the before (differential seed 240481 found it dropped),
// and a TOASTed value the update left alone is taken from the old row
// into the after, as Debezium does (seed 446876).
func TestPGPartitionFullUnderDefaultRoot(t *testing.T) {
	e := itest.NewEnv(t, "pgpartfull")
	e.Exec(`CREATE TABLE m (id int, region text, v text, body text, PRIMARY KEY (id, region)) PARTITION BY LIST (region)`)
	e.Exec(`CREATE TABLE m_eu PARTITION OF m FOR VALUES IN ('eu')`)
	e.Exec(`CREATE TABLE m_us PARTITION OF m FOR VALUES IN ('us')`)
	e.Exec(`ALTER TABLE m_eu REPLICA IDENTITY FULL`)
	e.Exec(itest.SentinelTable)
	p := e.Start("run", "--config", e.WriteTablesConfig("public.m", "public.sentinel"))
	e.PGCaughtUp(p, 1)
	e.Exec(`INSERT INTO m VALUES (1, 'eu', 'a'), (2, 'us', 'b')`)
	e.Exec(`INSERT INTO m VALUES (5, 'eu', 'e', ` + itest.ToastText + `)`)
	e.Exec(`UPDATE m SET v = 'e2' WHERE id = 5`)
	e.Exec(`UPDATE m SET v = 'a2' WHERE id = 1`)
	e.Exec(`UPDATE m SET v = 'b2' WHERE id = 2`)
	e.Exec(`UPDATE m SET id = 3 WHERE id = 1`)
	e.Exec(`INSERT INTO m VALUES (4, 'eu', NULL)`)
	e.Exec(`UPDATE m SET v = 'd2' WHERE id = 4`)
	e.PGCaughtUp(p, 2)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	got := map[string][]string{} // per key, in its partition's order
	for _, m := range itest.ReadTopic(t, e.Prefix+".public.m") {
		k := fmt.Sprint(m.Key["payload"].(map[string]any)["id"])
		if m.Value == nil {
			got[k] = append(got[k], "tombstone")
			continue
		}
		pl := m.Payload()
		s := fmt.Sprint(pl["op"])
		if b, ok := pl["before"].(map[string]any); ok {
			s += fmt.Sprintf(" before.v=%v", b["v"])
		}
		if a, ok := pl["after"].(map[string]any); ok {
			s += fmt.Sprintf(" after.v=%v", a["v"])
			if body, ok := a["body"].(string); ok {
				s += fmt.Sprintf(" after.body=%d bytes", len(body))
			}
		}
		got[k] = append(got[k], s)
	}
	want := map[string][]string{
		"1": {"c after.v=a", "u before.v=a after.v=a2", "d before.v=a2"},
		"2": {"c after.v=b", "u after.v=b2"},
		"3": {"c after.v=a2"},
		"4": {"c after.v=<nil>", "u before.v=<nil> after.v=d2"},
		"5": {"c after.v=e after.body=12800 bytes", "u before.v=e after.v=e2 after.body=12800 bytes"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("messages of m per key:\n got %q\nwant %q", got, want)
	}
}
