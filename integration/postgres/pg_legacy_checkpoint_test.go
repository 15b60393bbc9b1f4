package postgres_test

import (
	"encoding/base64"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGLegacyBackfillCheckpointResumes: a checkpoint of an earlier
// release that backfilled before streaming and stopped halfway through a
// table (position backfilled false, backfill progress with the last key;
// pkg/source/postgres/position.go) resumes through the capture loop's
// legacy branch (pkg/capture/capture.go, Database.Legacy): the rows after
// the checkpointed key are read, those up to it are not read again, the
// changes made while stopped stream from the slot, and the slot is not
// replaced (no fresh start, no resnapshot).
func TestPGLegacyBackfillCheckpointResumes(t *testing.T) {
	e := itest.NewEnv(t, "pglegacy")
	e.Exec(`CREATE TABLE t (k int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 100) g`)
	e.Exec(itest.SentinelTable)
	cfg := e.WriteTablesConfig()
	p := e.Start("run", "--config", cfg)
	e.PGCaughtUp(p, 1)
	// The backfill runs beside streaming: the sentinel can arrive before
	// the last of t's 100 rows (clean-clone CI read k 80..100 once).
	e.WaitBackfilled(t, p, 60*time.Second, "the first run's backfill")
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	// Rewrite the checkpoint as the earlier release kept an unfinished
	// backfill: streaming starts at the slot's position, public.t was
	// read up to k = 60.
	ckpt := filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")
	lsn := pglogrepl.LSN(slotLSN(e)).String()
	itest.RewriteCheckpoint(t, ckpt, func(f map[string]any) {
		slot := f["position"].(map[string]any)["slot"]
		f["position"] = map[string]any{"slot": slot, "lsn": lsn, "backfilled": false, "backfill": map[string]any{
			"done": []string{"public.sentinel"}, "table": "public.t", "key": []string{base64.StdEncoding.EncodeToString([]byte("60"))}, "rows": 60,
		}}
	})
	e.Exec(`INSERT INTO t VALUES (101, 'while stopped')`)
	e.Exec(`UPDATE t SET v = 'while stopped' WHERE k = 10`)

	p = e.Start("run", "--config", cfg)
	e.PGCaughtUp(p, 2)
	itest.WaitFor(t, 90*time.Second, "the resumed backfill of public.t", func() bool {
		st, ok := itest.ReadSnapshotState(ckpt)
		return ok && len(st.Tables) == 0 && slices.Contains(st.Done, "public.t")
	})
	e.PGCaughtUp(p, 3)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	out := p.Out.String()
	if !strings.Contains(out, "resuming the backfill") || strings.Contains(out, "resnapshot") {
		t.Errorf("the restart did not resume the earlier release's backfill from its slot; output:\n%s", out)
	}

	topic := e.Prefix + ".public.t"
	itest.CheckLegacyBackfillResumed(t, topic, 100, 60, "c101", "u10")
	if d := sameState(itest.FinalState(t, topic), e.DBState("t")); d != "" {
		t.Errorf("t: topic differs from the database: %s", d)
	}
	// The slot never moved past what is checkpointed.
	cp := fileCheckpointLSN(e)
	if cp == 0 {
		t.Fatalf("no LSN in the checkpoint %s", ckpt)
	}
	if st := slotLSN(e); st > cp {
		t.Errorf("slot confirmed %s, beyond the checkpoint %s", pglogrepl.LSN(st), pglogrepl.LSN(cp))
	}
}
