package integration

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
)

// TestLeaseTakeover freezes the owner (SIGSTOP) past its lease: a second
// task takes the pipeline over with the next epoch and publishes what was
// committed meanwhile. Thawed (SIGCONT), the first task must stop without
// publishing anything more and exit non-zero saying it lost the lease,
// and the checkpoint must never move backwards.
func TestLeaseTakeover(t *testing.T) {
	e := newEnv(t, "lease")
	useMoto(t)
	e.exec(`CREATE TABLE ledger (k int PRIMARY KEY, seq bigint NOT NULL, pad text)`)
	e.exec(`INSERT INTO ledger SELECT g, g, 'x' FROM generate_series(1, 50) g`)
	e.exec(sentinelTable)
	table := testTableName("lease")
	cfg := e.writeDynamoConfig(table, "")
	topic := e.prefix + ".public.ledger"

	// Watch the checkpoint: its LSN and epoch never go backwards.
	watch := startCheckpointWatch(t, table, e.name)

	first := e.start("run", "--config", cfg)
	first.waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= 50 })
	e.awaitSentinel(first, 1)
	firstMsgs := readTopic(t, topic)
	firstPID := firstMsgs[0].ProducerID

	if err := first.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozenAt := time.Now()
	t.Cleanup(func() { first.cmd.Process.Signal(syscall.SIGCONT) })
	e.exec(`INSERT INTO ledger SELECT g, g, 'while frozen' FROM generate_series(51, 60) g`)

	second := e.start("run", "--config", cfg)
	e.awaitSentinel(second, 2)
	took := time.Since(frozenAt)
	if !strings.Contains(second.out.String(), "took over the lease") {
		t.Fatalf("second task did not report a takeover; output:\n%s", second.out)
	}

	// Thaw the first task, and give it something it would publish.
	if err := first.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	thawed := time.Now()
	e.exec(`INSERT INTO ledger SELECT g, g, 'after thaw' FROM generate_series(61, 70) g`)
	select {
	case <-first.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("the stale owner still runs 15 s after SIGCONT; output:\n%s", first.out)
	}
	stoppedIn := time.Since(thawed)
	if lease, _ := time.ParseDuration(testLease); stoppedIn > lease {
		t.Errorf("the stale owner took %s to stop after SIGCONT, more than one lease (%s)", stoppedIn, lease)
	}
	if code := first.cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("stale owner exit code %d, want 1", code)
	}
	if !strings.Contains(first.out.String(), "lease lost") {
		t.Errorf("stale owner did not say it lost the lease; output:\n%s", first.out)
	}
	e.awaitSentinel(second, 3)
	if code := second.stop(t); code != 0 {
		t.Fatalf("second task exit %d after SIGTERM; output:\n%s", code, second.out)
	}
	watch.stop(t)

	msgs := readTopic(t, topic)
	keys := map[int]bool{}
	for _, m := range msgs {
		k := int(m.Key["payload"].(map[string]any)["k"].(float64))
		keys[k] = true
		if m.ProducerID == firstPID && k > 50 {
			t.Errorf("the frozen owner published key %d (offset %d/%d) after it was frozen", k, m.Partition, m.Offset)
		}
	}
	for k := 1; k <= 70; k++ {
		if !keys[k] {
			t.Errorf("key %d never published", k)
		}
	}
	it := dynamoItem(t, table, e.name)
	t.Logf("takeover %s after SIGSTOP (lease %s); stale owner stopped %s after SIGCONT; %d messages; checkpoint positions seen %d, final epoch %s, owner after SIGTERM %q",
		took.Round(100*time.Millisecond), testLease, stoppedIn.Round(10*time.Millisecond), len(msgs), watch.seen, attrN(it, "epoch"), attrS(it, "owner"))
	out, err := exec.Command(binary, "status", "--config", cfg).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "epoch 2") {
		t.Errorf("status: %v\n%s", err, out)
	}
	if attrN(it, "epoch") != "2" {
		t.Errorf("epoch %s after one takeover, want 2", attrN(it, "epoch"))
	}
}

// checkpointWatch polls a pipeline's DynamoDB item and fails the test when
// its LSN or epoch moves backwards.
type checkpointWatch struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []string
	seen   int
}

func startCheckpointWatch(t *testing.T, table, pipeline string) *checkpointWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &checkpointWatch{cancel: cancel}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		var lastLSN uint64
		var lastEpoch int64
		lastPos := ""
		for ctx.Err() == nil {
			time.Sleep(150 * time.Millisecond)
			it := dynamoItemQuiet(table, pipeline)
			if it == nil {
				continue
			}
			epoch, _ := strconv.ParseInt(attrN(it, "epoch"), 10, 64)
			pos := attrS(it, "position")
			var p struct{ LSN string }
			if pos == "" || json.Unmarshal([]byte(pos), &p) != nil {
				continue
			}
			lsn, err := pglogrepl.ParseLSN(p.LSN)
			w.mu.Lock()
			if pos != lastPos {
				w.seen++
				lastPos = pos
			}
			if err == nil && uint64(lsn) < lastLSN {
				w.errs = append(w.errs, "checkpoint LSN moved back from "+pglogrepl.LSN(lastLSN).String()+" to "+p.LSN)
			}
			if epoch < lastEpoch {
				w.errs = append(w.errs, "epoch moved back from "+strconv.FormatInt(lastEpoch, 10)+" to "+strconv.FormatInt(epoch, 10))
			}
			w.mu.Unlock()
			lastLSN, lastEpoch = max(lastLSN, uint64(lsn)), max(lastEpoch, epoch)
		}
	}()
	t.Cleanup(func() { cancel(); w.wg.Wait() })
	return w
}

func (w *checkpointWatch) stop(t *testing.T) {
	t.Helper()
	w.cancel()
	w.wg.Wait()
	for _, e := range w.errs {
		t.Error(e)
	}
}
