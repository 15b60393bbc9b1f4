package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
)

// fileCheckpointLSN reads the LSN of the pipeline's file checkpoint (0:
// none yet).
func (e *env) fileCheckpointLSN() uint64 {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, "checkpoints", e.name+".checkpoint.json"))
	if err != nil {
		return 0
	}
	var f struct {
		Position struct {
			LSN string `json:"lsn"`
		} `json:"position"`
	}
	if json.Unmarshal(b, &f) != nil {
		return 0
	}
	l, _ := pglogrepl.ParseLSN(f.Position.LSN)
	return uint64(l)
}

// resumeWithRows commits rows 21–25 while the publisher is down, runs it
// with cfg until all 25 keys are on topic and stops it (exit 0).
func resumeWithRows(t *testing.T, e *env, cfg, topic string) *proc {
	t.Helper()
	e.exec(`INSERT INTO t SELECT generate_series(21, 25)`)
	p := e.start("run", "--config", cfg)
	awaitKeys(t, p, topic, 25)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM with %s; output:\n%s", code, cfg, p.out)
	}
	return p
}

// awaitKeys waits until topic holds a record of every key k from 1 to n
// (read_committed), failing at once when p exits meanwhile.
func awaitKeys(t *testing.T, p *proc, topic string, n int) {
	t.Helper()
	seen := map[int]bool{}
	deadline := time.Now().Add(60 * time.Second)
	for len(seen) < n {
		if p.exited() {
			t.Fatalf("tributary exited (%v); output:\n%s", p.err, p.out)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d keys on %s; output:\n%s", len(seen), n, topic, p.out)
		}
		for _, m := range readCommitted(t, topic) {
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
// PostgreSQL soak's failure, issue 28). After the kill a restart resumes
// and the topic holds every row.
func TestSlotReconnectKeepsCheckpoint(t *testing.T) {
	e := newEnv(t, "slotrec")
	e.exec(`CREATE TABLE t (k int PRIMARY KEY)`)
	e.exec(`INSERT INTO t SELECT generate_series(1, 10)`)
	topic := e.prefix + ".public.t"
	cfg := e.writeConfig("")
	// No checkpoint on the cadence: only the start position is saved
	// (pkg/pipeline saveStart), so everything streamed after it is
	// past the checkpoint when the walsender ends.
	p := e.startWith([]string{"TRIBUTARY_CHECKPOINT_INTERVAL=1h"}, "run", "--config", cfg)
	p.waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= 10 })
	e.exec(`INSERT INTO t SELECT generate_series(11, 20)`)
	p.waitFor(t, 60*time.Second, "the streamed rows", func() bool { return topicEnd(topic) >= 20 })
	cp := e.fileCheckpointLSN()
	if cp == 0 {
		t.Fatalf("no checkpoint after the start; output:\n%s", p.out)
	}
	e.exec(fmt.Sprintf(`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'tributary_%s'`, e.name))
	awaitReconnect(t, p, 1)
	// The stream reports its position every second (statusInterval in
	// pkg/source/postgres/stream.go): give it a few.
	time.Sleep(3 * time.Second)
	if slot := e.slotLSN(); slot > cp {
		t.Errorf("after the reconnect the slot confirmed %s, beyond the checkpoint %s", pglogrepl.LSN(slot), pglogrepl.LSN(cp))
	}
	p.kill()

	p = resumeWithRows(t, e, cfg, topic)
	if strings.Contains(p.out.String(), "resnapshot required") {
		t.Errorf("the restart reported resnapshot required:\n%s", p.out)
	}
}

// TestSlotSwitchOffsetsAhead: an exactly_once run resumes from the
// offsets topic, which leads the checkpoint store (the store is saved on
// the checkpoint cadence, after the commit); killed before its own
// first checkpoint, it must leave the slot at the store's position. The
// old code reported the resume position as flushed at once, so the next
// run, switched to at_least_once (which reads the store only), failed
// with "confirmed …, beyond the checkpoint …: resnapshot required" (the
// soak's switch feature, issue 28).
func TestSlotSwitchOffsetsAhead(t *testing.T) {
	e := newEnv(t, "slotsw")
	e.exec(`CREATE TABLE t (k int PRIMARY KEY)`)
	e.exec(`INSERT INTO t SELECT generate_series(1, 10)`)
	topic := e.prefix + ".public.t"
	alo := e.writeConfig("")
	eos := e.writePipeline(pipelineConfig{file: "eos.yaml",
		checkpoint: "  path: " + filepath.Join(e.dir, "checkpoints") + "\n" + exactlyOnceLines})
	noCadence := []string{"TRIBUTARY_CHECKPOINT_INTERVAL=1h"}

	p := e.start("run", "--config", alo)
	p.waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= 10 })
	if code := p.stop(t); code != 0 {
		t.Fatalf("at_least_once: exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	stored := e.fileCheckpointLSN()

	// exactly_once, no checkpoint on the cadence: the offsets topic moves
	// past the store.
	p = e.startWith(noCadence, "run", "--config", eos)
	p.waitFor(t, 60*time.Second, "streaming", func() bool { return strings.Contains(p.out.String(), "streaming from the replication slot") })
	e.exec(`INSERT INTO t SELECT generate_series(11, 20)`)
	p.waitFor(t, 60*time.Second, "the streamed rows", func() bool { return topicEnd(topic) >= 20 })
	time.Sleep(2 * time.Second) // committed (MaxInterval 50 ms) and position-only commits
	p.kill()

	// exactly_once again: resumes from the offsets topic.
	p = e.startWith(noCadence, "run", "--config", eos)
	p.waitFor(t, 60*time.Second, "streaming", func() bool { return strings.Contains(p.out.String(), "streaming from the replication slot") })
	if !strings.Contains(p.out.String(), "resuming from the offsets topic") {
		t.Fatalf("the second exactly_once run did not resume from the offsets topic; output:\n%s", p.out)
	}
	time.Sleep(3 * time.Second) // statusInterval is 1 s
	if cp := e.fileCheckpointLSN(); cp != stored {
		t.Fatalf("the store moved from %s to %s: the test needs it to lag the offsets topic", pglogrepl.LSN(stored), pglogrepl.LSN(cp))
	}
	if slot := e.slotLSN(); slot > stored {
		t.Errorf("the exactly_once run left the slot confirmed %s, beyond the checkpoint store's %s", pglogrepl.LSN(slot), pglogrepl.LSN(stored))
	}
	p.kill()

	// at_least_once reads the store: it must resume, and lose nothing.
	resumeWithRows(t, e, alo, topic)
}
