package aws_test

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

	"github.com/tributary-cdc/tributary/integration/awstest"
	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/jackc/pglogrepl"
)

// TestLeaseTakeover freezes the owner (SIGSTOP) past its lease: a second
// task takes the pipeline over with the next epoch, ending the frozen
// task's replication connection (walsender, binlog dump), and publishes
// what was committed meanwhile. Thawed (SIGCONT), the first task must stop
// without publishing anything more and exit non-zero saying it lost the
// lease or its stream, and the checkpoint must never move backwards. On
// every source, with the store in each DynamoDB engine.
func TestLeaseTakeover(t *testing.T) {
	awstest.ForEachDynamoDB(t, func(t *testing.T, eng awstest.Engine) {
		itest.ForEachBackend(t, "lease", func(t *testing.T, b itest.Backend) { leaseTakeover(t, b, eng) })
	})
}

func leaseTakeover(t *testing.T, b itest.Backend, eng awstest.Engine) {
	e := b.Env()
	useEngine(t, eng)
	itest.CreateTables(t, b, "ledger", "sentinel")
	itest.MustExecOn(t, b, b.BulkInsert("ledger", 0, 0, 50))
	table := itest.TestTableName("lease")
	cfg := itest.WithDynamoStore(t, b.Config(nil, ""), table)
	topic := b.Topic("ledger")

	// Watch the checkpoint: its position and epoch never go backwards.
	watch := startCheckpointWatch(t, table, e.Name)

	first := e.Start("run", "--config", cfg)
	first.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 50 })
	itest.AwaitBackendSentinel(t, b, first, 1)
	firstMsgs := itest.ReadTopic(t, topic)
	firstPID := firstMsgs[0].ProducerID

	// Frozen only once every thread stopped: until then it may still read
	// and publish the rows inserted next, as the owner it still is.
	t.Cleanup(func() { first.Cmd.Process.Signal(syscall.SIGCONT) })
	first.Freeze(t)
	frozenAt := time.Now()
	itest.MustExecOn(t, b, b.BulkInsert("ledger", 50, 50, 10)) // while frozen

	second := e.Start("run", "--config", cfg)
	itest.AwaitBackendSentinel(t, b, second, 2)
	took := time.Since(frozenAt)
	if !strings.Contains(second.Out.String(), "took over the lease") {
		t.Fatalf("second task did not report a takeover; output:\n%s", second.Out)
	}

	// Thaw the first task, and give it something it would publish.
	if err := first.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	thawed := time.Now()
	itest.MustExecOn(t, b, b.BulkInsert("ledger", 60, 60, 10)) // after the thaw
	select {
	case <-first.Done:
	case <-time.After(15 * time.Second):
		t.Fatalf("the stale owner still runs 15 s after SIGCONT; output:\n%s", first.Out)
	}
	stoppedIn := time.Since(thawed)
	if lease, _ := time.ParseDuration(itest.TestLease); stoppedIn > lease {
		t.Errorf("the stale owner took %s to stop after SIGCONT, more than one lease (%s)", stoppedIn, lease)
	}
	if code := first.Cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("stale owner exit code %d, want 1", code)
	}
	// Which it notices first is a race: its lease, or (MariaDB) the
	// server's notice that another replica took its server_id.
	if out := first.Out.String(); !strings.Contains(out, "lease lost") && !strings.Contains(out, "binlog stream in use by another reader") {
		t.Errorf("stale owner did not say it lost the lease; output:\n%s", first.Out)
	}
	itest.AwaitBackendSentinel(t, b, second, 3)
	if code := second.Stop(t); code != 0 {
		t.Fatalf("second task exit %d after SIGTERM; output:\n%s", code, second.Out)
	}
	watch.Stop(t)

	msgs := itest.ReadTopic(t, topic)
	keys := map[int]bool{}
	stale := false
	for _, m := range msgs {
		k := int(m.Key["payload"].(map[string]any)["k"].(float64))
		keys[k] = true
		if m.ProducerID == firstPID && k > 50 {
			t.Errorf("the frozen owner published key %d (offset %d/%d) after it was frozen", k, m.Partition, m.Offset)
			stale = true
		}
	}
	if stale {
		t.Logf("the frozen owner's output:\n%s\nthe second task's output:\n%s", first.Out, second.Out)
	}
	for k := 1; k <= 70; k++ {
		if !keys[k] {
			t.Errorf("key %d never published", k)
		}
	}
	it := itest.DynamoItem(t, table, e.Name)
	t.Logf("%s, store in %s: takeover %s after SIGSTOP (lease %s); stale owner stopped %s after SIGCONT; %d messages; checkpoint positions seen %d, final epoch %s, owner after SIGTERM %q",
		b.Kind(), eng.Name, took.Round(100*time.Millisecond), itest.TestLease, stoppedIn.Round(10*time.Millisecond), len(msgs), watch.seen, itest.AttrN(it, "epoch"), itest.AttrS(it, "owner"))
	out, err := exec.Command(itest.Binary, "status", "--config", cfg).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "epoch 2") {
		t.Errorf("status: %v\n%s", err, out)
	}
	if itest.AttrN(it, "epoch") != "2" {
		t.Errorf("epoch %s after one takeover, want 2", itest.AttrN(it, "epoch"))
	}
}

// checkpointWatch polls a pipeline's DynamoDB item and fails the test when
// its position or epoch moves backwards.
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
		var lastAt uint64
		lastPosOK := ""
		var lastEpoch int64
		lastPos := ""
		for ctx.Err() == nil {
			time.Sleep(150 * time.Millisecond)
			it := itest.DynamoItemQuiet(table, pipeline)
			if it == nil {
				continue
			}
			epoch, _ := strconv.ParseInt(itest.AttrN(it, "epoch"), 10, 64)
			pos := itest.AttrS(it, "position")
			at, ok := positionOrder(pos)
			if !ok {
				continue
			}
			w.mu.Lock()
			if pos != lastPos {
				w.seen++
				lastPos = pos
			}
			if at < lastAt {
				w.errs = append(w.errs, "checkpoint moved back from "+lastPosOK+" to "+pos)
			}
			if epoch < lastEpoch {
				w.errs = append(w.errs, "epoch moved back from "+strconv.FormatInt(lastEpoch, 10)+" to "+strconv.FormatInt(epoch, 10))
			}
			w.mu.Unlock()
			if at >= lastAt {
				lastAt, lastPosOK = at, pos
			}
			lastEpoch = max(lastEpoch, epoch)
		}
	}()
	t.Cleanup(func() { cancel(); w.wg.Wait() })
	return w
}

func (w *checkpointWatch) Stop(t *testing.T) {
	t.Helper()
	w.cancel()
	w.wg.Wait()
	for _, e := range w.errs {
		t.Error(e)
	}
}

// positionOrder maps a checkpointed position of either source to a number
// that grows with it: PostgreSQL's LSN, or MySQL's binlog file number and
// offset. ok is false for a position it cannot read.
func positionOrder(pos string) (uint64, bool) {
	var p struct {
		LSN  string
		File string
		Pos  uint64
	}
	if pos == "" || json.Unmarshal([]byte(pos), &p) != nil {
		return 0, false
	}
	if p.LSN != "" {
		lsn, err := pglogrepl.ParseLSN(p.LSN)
		return uint64(lsn), err == nil
	}
	i := strings.LastIndexByte(p.File, '.')
	n, err := strconv.ParseUint(p.File[i+1:], 10, 32)
	if i < 0 || err != nil {
		return 0, false
	}
	return n<<32 | p.Pos, true
}
