package mysql_test

import (
	"encoding/hex"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLLegacyBackfillCheckpointResumes: a checkpoint of an earlier
// release that backfilled before streaming and stopped halfway through a
// table (position backfilled false, table and after, the hex key of its
// last published row; pkg/source/mysql/position.go) resumes through the
// capture loop's legacy branch (pkg/capture/capture.go, Database.Legacy):
// the tables before it are done, its rows after the key are read, those
// up to it are not read again, and what changed while stopped streams
// from the checkpoint's binlog position.
func TestMySQLLegacyBackfillCheckpointResumes(t *testing.T) {
	e := itest.NewMyEnv(t, "mylegacy")
	e.Exec("CREATE TABLE t (k INT PRIMARY KEY, v VARCHAR(40))")
	var vals []string
	for k := 1; k <= 100; k++ {
		vals = append(vals, "("+strconv.Itoa(k)+", 'v')")
	}
	e.Exec("INSERT INTO t VALUES " + strings.Join(vals, ", "))
	e.Exec("CREATE TABLE marker (id INT PRIMARY KEY)")
	cfg := e.WriteConfig("")
	topic, markers := e.Prefix+"."+e.DB+".t", e.Prefix+"."+e.DB+".marker"
	p := e.Start("run", "--config", cfg)
	e.Exec("INSERT INTO marker VALUES (1)")
	itest.WaitOrDump(t, p, 60*time.Second, "marker 1", func() bool { return itest.TopicEnd(markers) >= 1 })
	itest.WaitOrDump(t, p, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 100 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	// Rewrite the checkpoint as the earlier release kept an unfinished
	// backfill: marker (before t in name order) done, t read up to k = 60,
	// streaming to start at the binlog position of the checkpoint.
	ckpt := filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")
	itest.RewriteCheckpoint(t, ckpt, func(f map[string]any) {
		pos := f["position"].(map[string]any)
		delete(pos, "tables")
		delete(pos, "snapshot")
		pos["backfilled"] = false
		pos["table"] = e.DB + ".t"
		pos["after"] = []string{hex.EncodeToString([]byte("60"))}
	})
	e.Exec("INSERT INTO t VALUES (101, 'while stopped')")
	e.Exec("UPDATE t SET v = 'while stopped' WHERE k = 10")

	p = e.Start("run", "--config", cfg)
	itest.WaitOrDump(t, p, 90*time.Second, "the resumed backfill of t", func() bool {
		st, ok := itest.ReadSnapshotState(ckpt)
		return ok && len(st.Tables) == 0 && slices.Contains(st.Done, e.DB+".t")
	})
	e.Exec("INSERT INTO marker VALUES (2)")
	itest.WaitOrDump(t, p, 60*time.Second, "marker 2", func() bool { return itest.TopicEnd(markers) >= 2 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	if out := p.Out.String(); strings.Contains(out, "resnapshot") {
		t.Errorf("the restart needed a resnapshot; output:\n%s", out)
	}

	itest.CheckLegacyBackfillResumed(t, topic, 100, 60, "c101", "u10")
	if n := itest.TopicEnd(markers); n != 2 {
		t.Errorf("marker has %d messages, want 2 (it was done: not read again)", n)
	}
}
