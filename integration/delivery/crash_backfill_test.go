package delivery_test

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestBackfillResumes interrupts a backfill (SIGKILL) once its checkpoint
// shows 60 % of the big table published and acknowledged, and checks that
// the restart reads on from the last acknowledged key instead of from zero,
// that the finished table is not read again, and that changes committed
// while the pipeline was down are all published (no gap between the old
// snapshot, the new snapshot and the stream); on every source.
func TestBackfillResumes(t *testing.T) {
	itest.ForEachBackend(t, "bfresume", func(t *testing.T, b itest.Backend) {
		// Acknowledgements arrive in bursts (a batch holds thousands of
		// rows), so the checkpoint can jump from below 60 % to finished
		// between two looks; such a run proves nothing and is tried again
		// (on a database of its own).
		for attempt := 1; attempt <= 3; attempt++ {
			if attempt > 1 {
				b = itest.BackendNamed(t, b.Kind(), "bfresume")
			}
			if backfillResumes(t, b) {
				return
			}
			t.Logf("attempt %d: the backfill finished before the checkpoint was seen at 60 %%; again", attempt)
		}
		t.Fatal("never caught the backfill between 60 % and its end")
	})
}

func backfillResumes(t *testing.T, b itest.Backend) bool {
	e := b.Env()
	const small, big = 500, 20000
	itest.CreateTables(t, b, "a_small", "big", "sentinel")
	itest.MustExecOn(t, b, b.BulkInsert("a_small", 0, 0, small))
	itest.MustExecOn(t, b, b.BulkInsert("big", 0, 0, big))
	cfg := b.Config(nil, "")
	bigTopic, smallTopic := b.Topic("big"), b.Topic("a_small")
	bigID, smallID := b.TableID("big"), b.TableID("a_small")

	// Kill it once the checkpoint shows 60 % of big published and
	// acknowledged (checkpoints every 50 ms; the file is polled faster;
	// chunks of 1000 rows, each one checkpointable).
	target := int64(big * 60 / 100)
	ckpt := filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")
	p := e.StartWith([]string{"TRIBUTARY_CHECKPOINT_INTERVAL=50ms", "TRIBUTARY_SNAPSHOT_CHUNK_ROWS=1000"}, "run", "--config", cfg)
	var prog backfillProgressJSON
	deadline := time.Now().Add(90 * time.Second)
	for {
		if time.Now().After(deadline) || p.Exited() {
			t.Fatalf("the backfill did not reach %d rows; output:\n%s", target, p.Out)
		}
		var finished bool
		prog, finished = readBackfillProgress(ckpt)
		if finished {
			p.Kill()
			return false
		}
		if prog.Table == bigID && prog.Rows >= target {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Kill()
	// The last checkpoint may have moved on before the kill landed.
	prog, _ = readBackfillProgress(ckpt)
	if prog.Table != bigID || !slices.Contains(prog.Done, smallID) || len(prog.Ranges) == 0 {
		t.Fatalf("checkpointed progress %+v: want %s done and %s in progress", prog, smallID, bigID)
	}
	// Two workers read big as two key ranges at once; the last one reads
	// to the end, where the row added below goes.
	left := 0 // rows after the checkpoint
	for i, r := range prog.Ranges {
		if r.Until < 0 {
			prog.Ranges[i].Until = big + 1
		}
		left += prog.Ranges[i].Until - r.After
	}
	t.Logf("interrupted with the checkpoint at %d rows, big's ranges (after, up to) %v", prog.Rows, prog.Ranges)

	// While it is down: change rows already published, rows not read yet,
	// and add one.
	itest.MustExecOn(t, b, fmt.Sprintf(`UPDATE big SET v = 'changed' WHERE k IN (1, %d)`, big))
	itest.MustExecOn(t, b, fmt.Sprintf(`DELETE FROM big WHERE k = %d`, big-1))
	itest.MustExecOn(t, b, fmt.Sprintf(`INSERT INTO big (k, seq, v) VALUES (%d, %d, 'new')`, big+1, big+1))

	// The snapshot runs beside the stream: the sentinel alone does not
	// tell that it is over.
	p = e.Start("run", "--config", cfg)
	itest.WaitOrDump(t, p, 90*time.Second, "the resumed backfill to finish", func() bool {
		_, finished := readBackfillProgress(ckpt)
		return finished
	})
	itest.AwaitBackendSentinel(t, b, p, 1)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}

	msgs := itest.ReadTopic(t, bigTopic)
	firstPID := msgs[0].ProducerID
	last := map[int]itest.Message{}
	run2Reads := 0
	minRun2 := make([]int, len(prog.Ranges)) // the least key each range read in the second run
	for _, m := range msgs {
		if m.Value == nil {
			continue // the delete's tombstone
		}
		k := int(m.Key["payload"].(map[string]any)["k"].(float64))
		last[k] = m
		if m.ProducerID != firstPID && m.Payload()["op"] == "r" {
			run2Reads++
			i := slices.IndexFunc(prog.Ranges, func(r keyRange) bool { return k > r.After && k <= r.Until })
			if i < 0 {
				t.Errorf("the resumed backfill read key %d, in no range left (%v)", k, prog.Ranges)
				continue
			}
			if minRun2[i] == 0 || k < minRun2[i] {
				minRun2[i] = k
			}
		}
	}
	for k := 1; k <= big+1; k++ {
		if _, ok := last[k]; !ok {
			t.Errorf("gap: key %d of big never published", k)
		}
	}
	for _, c := range []struct {
		k     int
		op, v string
	}{{1, "u", "changed"}, {big, "", "changed"}, {big - 1, "d", ""}, {big + 1, "", "new"}} {
		pl := last[c.k].Payload()
		if c.op != "" && pl["op"] != c.op {
			t.Errorf("key %d: last message op %v, want %s", c.k, pl["op"], c.op)
		}
		if c.v != "" {
			if after, _ := pl["after"].(map[string]any); after == nil || after["v"] != c.v {
				t.Errorf("key %d: last message after = %v, want v=%s", c.k, pl["after"], c.v)
			}
		}
	}
	for i, r := range prog.Ranges {
		if r.After >= r.Until {
			// Read up to its last key, its end not yet seen (a range
			// ends at the chunk that comes back short): nothing is left
			// to read in it.
			continue
		}
		if minRun2[i] != r.After+1 && r.After+1 != big-1 { // (big-1 was deleted)
			t.Errorf("the resumed backfill started range %v at key %d, want %d (just after the checkpointed key)", r, minRun2[i], r.After+1)
		}
	}
	if run2Reads > left {
		t.Errorf("the resumed backfill read %d rows, more than the %d after the checkpoint", run2Reads, left)
	}
	for _, m := range itest.ReadTopic(t, smallTopic) {
		if m.ProducerID != firstPID {
			t.Errorf("finished table a_small was read again (key %v)", m.Key["payload"])
			break
		}
	}
	t.Logf("resumed on %s: second run read %d rows of big from k=%v (a full restart would read %d); %d messages in big",
		b.Kind(), run2Reads, minRun2, big+1, len(msgs))
	return true
}

type backfillProgressJSON struct {
	Done   []string   // tables finished
	Table  string     // the table read (with a last key)
	Ranges []keyRange // its key ranges left
	Rows   int64      // rows published of that table
}

// keyRange is a key range of a one-column integer key left to read: the
// keys after After (0: from the start) up to Until (-1: the table's end).
type keyRange struct{ After, Until int }

// readBackfillProgress reads the snapshot progress of a file checkpoint
// (the capture engine's state in the position); finished is true once no
// table is left.
func readBackfillProgress(path string) (prog backfillProgressJSON, finished bool) {
	st, ok := itest.ReadSnapshotState(path)
	if !ok {
		return prog, false
	}
	prog.Done = st.Done
	for _, t := range st.Tables {
		if len(t.Key) > 0 {
			prog.Table, prog.Ranges, prog.Rows = t.Table, []keyRange{{intKey(t.Key), -1}}, t.Rows
		}
		if len(t.Parts) > 0 && t.Rows > 0 {
			prog.Table, prog.Ranges, prog.Rows = t.Table, nil, t.Rows
			for _, r := range t.Parts {
				prog.Ranges = append(prog.Ranges, keyRange{max(0, intKey(r.Key)), intKey(r.Until)})
			}
		}
	}
	return prog, len(st.Tables) == 0 && len(st.Done) > 0
}

// intKey decodes a one-column integer key of the snapshot state.
func intKey(key []string) int {
	if len(key) != 1 {
		return -1
	}
	raw, err := base64.StdEncoding.DecodeString(key[0])
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil {
		return -1
	}
	return n
}
