package postgres_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/jackc/pglogrepl"
)

// resumeWithRows commits rows 21–25 while the publisher is down, runs it
// with cfg until all 25 keys are on topic and stops it (exit 0).
func resumeWithRows(t *testing.T, e *itest.Env, cfg, topic string) *itest.Proc {
	t.Helper()
	e.Exec(`INSERT INTO t SELECT generate_series(21, 25)`)
	p := e.Start("run", "--config", cfg)
	awaitKeys(t, p, topic, 25)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM with %s; output:\n%s", code, cfg, p.Out)
	}
	return p
}

// awaitKeys waits until topic holds a record of every key k from 1 to n
// (read_committed), failing at once when p exits meanwhile.
func awaitKeys(t *testing.T, p *itest.Proc, topic string, n int) {
	t.Helper()
	seen := map[int]bool{}
	deadline := time.Now().Add(60 * time.Second)
	for len(seen) < n {
		if p.Exited() {
			t.Fatalf("tributary exited (%v); output:\n%s", p.Err, p.Out)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d keys on %s; output:\n%s", len(seen), n, topic, p.Out)
		}
		for _, m := range itest.ReadCommitted(t, topic) {
			if k, ok := m.Key["payload"].(map[string]any)["k"].(float64); ok && k >= 1 && int(k) <= n {
				seen[int(k)] = true
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestSlotReconnectKeepsCheckpoint: the walsender is ended while the
// publisher has streamed past its checkpoint; the source reconnects by
// itself from the last position it handed on, which is not checkpointed
// yet. The slot must stay at the checkpoint: the old code reported the
// resume position as flushed at once, so a SIGKILL before the next
// checkpoint left the slot confirmed beyond it, and every restart failed
// with "confirmed …, beyond the checkpoint …: resnapshot required" (the
// PostgreSQL soak's failure). After the kill a restart resumes
// and the topic holds every row.
func TestSlotReconnectKeepsCheckpoint(t *testing.T) {
	e := itest.NewEnv(t, "slotrec")
	e.Exec(`CREATE TABLE t (k int PRIMARY KEY)`)
	e.Exec(`INSERT INTO t SELECT generate_series(1, 10)`)
	topic := e.Prefix + ".public.t"
	cfg := e.WriteConfig("")
	// No checkpoint on the cadence: only the start position is saved
	// (pkg/pipeline saveStart), so everything streamed after it is
	// past the checkpoint when the walsender ends.
	p := e.StartWith([]string{"TRIBUTARY_CHECKPOINT_INTERVAL=1h"}, "run", "--config", cfg)
	p.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 10 })
	e.Exec(`INSERT INTO t SELECT generate_series(11, 20)`)
	p.WaitFor(t, 60*time.Second, "the streamed rows", func() bool { return itest.TopicEnd(topic) >= 20 })
	cp := fileCheckpointLSN(e)
	if cp == 0 {
		t.Fatalf("no checkpoint after the start; output:\n%s", p.Out)
	}
	e.Exec(fmt.Sprintf(`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'tributary_%s'`, e.Name))
	itest.AwaitReconnect(t, p, 1)
	// The stream reports its position every second (statusInterval in
	// pkg/source/postgres/stream.go): give it a few.
	time.Sleep(3 * time.Second)
	if slot := slotLSN(e); slot > cp {
		t.Errorf("after the reconnect the slot confirmed %s, beyond the checkpoint %s", pglogrepl.LSN(slot), pglogrepl.LSN(cp))
	}
	p.Kill()

	p = resumeWithRows(t, e, cfg, topic)
	if strings.Contains(p.Out.String(), "resnapshot required") {
		t.Errorf("the restart reported resnapshot required:\n%s", p.Out)
	}
}

// TestSlotSwitchOffsetsAhead: an exactly_once run resumes from the
// offsets topic, which leads the checkpoint store (the store is saved on
// the checkpoint cadence, after the commit); killed before its own
// first checkpoint, it must leave the slot at the store's position. The
// old code reported the resume position as flushed at once, so the next
// run, switched to at_least_once (which reads the store only), failed
// with "confirmed …, beyond the checkpoint …: resnapshot required" (the
// soak's switch feature).
func TestSlotSwitchOffsetsAhead(t *testing.T) {
	e := itest.NewEnv(t, "slotsw")
	e.Exec(`CREATE TABLE t (k int PRIMARY KEY)`)
	e.Exec(`INSERT INTO t SELECT generate_series(1, 10)`)
	topic := e.Prefix + ".public.t"
	alo := e.WriteConfig("")
	eos := e.WritePipeline(itest.PipelineConfig{File: "eos.yaml",
		Checkpoint: "  path: " + filepath.Join(e.Dir, "checkpoints") + "\n" + itest.ExactlyOnceLines})
	noCadence := []string{"TRIBUTARY_CHECKPOINT_INTERVAL=1h"}

	p := e.Start("run", "--config", alo)
	p.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 10 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("at_least_once: exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	stored := fileCheckpointLSN(e)

	// exactly_once, no checkpoint on the cadence: the offsets topic moves
	// past the store.
	p = e.StartWith(noCadence, "run", "--config", eos)
	p.WaitFor(t, 60*time.Second, "streaming", func() bool { return strings.Contains(p.Out.String(), "streaming from the replication slot") })
	e.Exec(`INSERT INTO t SELECT generate_series(11, 20)`)
	p.WaitFor(t, 60*time.Second, "the streamed rows", func() bool { return itest.TopicEnd(topic) >= 20 })
	time.Sleep(2 * time.Second) // committed (MaxInterval 50 ms) and position-only commits
	p.Kill()

	// exactly_once again: resumes from the offsets topic.
	p = e.StartWith(noCadence, "run", "--config", eos)
	p.WaitFor(t, 60*time.Second, "streaming", func() bool { return strings.Contains(p.Out.String(), "streaming from the replication slot") })
	if !strings.Contains(p.Out.String(), "resuming from the offsets topic") {
		t.Fatalf("the second exactly_once run did not resume from the offsets topic; output:\n%s", p.Out)
	}
	time.Sleep(3 * time.Second) // statusInterval is 1 s
	if cp := fileCheckpointLSN(e); cp != stored {
		t.Fatalf("the store moved from %s to %s: the test needs it to lag the offsets topic", pglogrepl.LSN(stored), pglogrepl.LSN(cp))
	}
	if slot := slotLSN(e); slot > stored {
		t.Errorf("the exactly_once run left the slot confirmed %s, beyond the checkpoint store's %s", pglogrepl.LSN(slot), pglogrepl.LSN(stored))
	}
	p.Kill()

	// at_least_once reads the store: it must resume, and lose nothing.
	resumeWithRows(t, e, alo, topic)
}
