package postgres_test

import (
	"encoding/base64"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGTableRecreatedWhileStoppedMidSnapshot: a table whose snapshot was
// under way when the pipeline stopped is dropped and created again under
// its name while it is down. The new table is another one (another OID,
// not in the checkpoint's captured set): the restart snapshots it from its
// first row, not from the old table's last read key, which would leave
// every row of the new table up to that key unpublished.
func TestPGTableRecreatedWhileStoppedMidSnapshot(t *testing.T) {
	e := itest.NewEnv(t, "pgrecreated")
	e.Exec(`CREATE TABLE t (k int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 100) g`)
	e.Exec(itest.SentinelTable)
	cfg := e.WriteTablesConfig()
	p := e.Start("run", "--config", cfg)
	e.PGCaughtUp(p, 1)
	e.WaitBackfilled(t, p, 60*time.Second, "the first run's backfill")
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	// The checkpoint as if the snapshot of public.t had read up to k = 60.
	ckpt := filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")
	itest.RewriteCheckpoint(t, ckpt, func(f map[string]any) {
		f["position"].(map[string]any)["snapshot"] = map[string]any{"tables": []any{map[string]any{
			"table": "public.t", "key": []string{base64.StdEncoding.EncodeToString([]byte("60"))}, "rows": 60}}}
	})
	e.Exec(`DROP TABLE t`)
	e.Exec(`CREATE TABLE t (k int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO t SELECT g, 'new' || g FROM generate_series(1, 100) g`)

	p = e.Start("run", "--config", cfg)
	e.PGCaughtUp(p, 2)
	itest.WaitFor(t, 90*time.Second, "the snapshot of the new public.t", func() bool {
		st, ok := itest.ReadSnapshotState(ckpt)
		return ok && len(st.Tables) == 0 && slices.Contains(st.Done, "public.t")
	})
	e.PGCaughtUp(p, 3)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	if d := sameState(itest.FinalState(t, e.Prefix+".public.t"), e.DBState("t")); d != "" {
		t.Errorf("t: topic differs from the database (the new table's rows up to the old key are missing?): %s", d)
	}
}
