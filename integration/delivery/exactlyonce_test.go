package delivery_test

import (
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// The exactly-once tests run the binary with delivery exactly_once and the
// DynamoDB store on moto, and read the topics as a read_committed consumer
// does: every committed change exactly once (0 gaps, 0 duplicates) across
// SIGKILLs and a SIGSTOP takeover, and nothing from a fenced owner after
// the takeover.

func plain(msgs []itest.CommittedMessage) []itest.Message {
	out := make([]itest.Message, len(msgs))
	for i, m := range msgs {
		out[i] = m.Message
	}
	return out
}

// TestExactlyOnceCrashes SIGKILLs an exactly-once pipeline again and again
// while the writer commits changes: at random moments from outside, right
// after a Kafka transaction committed (before the checkpoint store knows),
// and right after a record was handed to the producer. A read_committed
// consumer must see every committed change exactly once.
func TestExactlyOnceCrashes(t *testing.T) {
	e := itest.NewEnv(t, "eoscrash")
	itest.UseMoto(t)
	const rows = 200
	topic := e.LedgerSetup(rows)
	cfg := e.WritePipeline(itest.PipelineConfig{Checkpoint: itest.DynamoCheckpoint(itest.TestTableName("eoscrash")) + itest.ExactlyOnceLines})

	p := e.Start("run", "--config", cfg)
	p.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= rows })
	w, stopWriter := e.StartLedgerWriter(rows, 90*time.Second)

	kills := 0
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	for i := 0; i < 6; i++ {
		time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
		p.Kill()
		kills++
		p = e.Start("run", "--config", cfg)
	}
	p.Kill()
	kills++
	for _, point := range []string{"after-txn-commit:2", "after-produce:30", "after-txn-commit:5"} {
		p = startToCrash(t, e, nil, cfg, point, 60*time.Second)
		kills++
	}
	stopWriter()

	p = e.Start("run", "--config", cfg)
	e.AwaitSentinelCommitted(p, 1)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	msgs := itest.ReadCommitted(t, topic)
	res := itest.VerifyLedgerMessages(t, plain(msgs), w)
	t.Logf("exactly_once, %d SIGKILLs: %d committed changes (+%d backfilled rows), %d rolled back; read_committed: %s; %d records in the topic including aborted ones and markers",
		kills, len(w.Committed()), rows, len(w.RolledBack), res, itest.TopicEnd(topic))
	if res.Gaps > 0 || res.Dups > 0 {
		t.Fatalf("exactly_once: %d gaps and %d duplicates, want 0 and 0", res.Gaps, res.Dups)
	}
}

// TestExactlyOnceTakeover freezes the owner (SIGSTOP) while the writer
// commits changes, lets a second task take over, and thaws the first
// (SIGCONT). With exactly_once the broker fences the frozen producer: a
// read_committed consumer sees every change exactly once, and no record of
// the first owner after one of the second in any partition.
func TestExactlyOnceTakeover(t *testing.T) {
	res, stale := takeover(t, true)
	if res.Gaps > 0 || res.Dups > 0 || res.Reversals > 0 || stale > 0 {
		t.Fatalf("exactly_once takeover: %s, %d records of the fenced owner after the takeover; want all 0", res, stale)
	}
}

// TestAtLeastOnceTakeover is the same scenario at least once: it must lose
// nothing, and it reports what a stale owner still wrote (the records it
// had in flight when frozen can land after the successor's).
func TestAtLeastOnceTakeover(t *testing.T) {
	res, stale := takeover(t, false)
	if res.Gaps > 0 {
		t.Fatalf("at_least_once takeover: %d gaps", res.Gaps)
	}
	t.Logf("at_least_once takeover observed: %s, %d records of the stale owner after the successor's first in their partition", res, stale)
}

func takeover(t *testing.T, exactlyOnce bool) (itest.LedgerResult, int) {
	e := itest.NewEnv(t, "takeover")
	itest.UseMoto(t)
	const rows = 100
	topic := e.LedgerSetup(rows)
	extra := ""
	if exactlyOnce {
		extra = itest.ExactlyOnceLines
	}
	cfg := e.WritePipeline(itest.PipelineConfig{Checkpoint: itest.DynamoCheckpoint(itest.TestTableName("takeover")) + extra})
	read := func() []itest.CommittedMessage {
		if exactlyOnce {
			return itest.ReadCommitted(t, topic)
		}
		var out []itest.CommittedMessage
		for _, m := range itest.ReadTopic(t, topic) {
			out = append(out, itest.CommittedMessage{Message: m})
		}
		return out
	}

	first := e.Start("run", "--config", cfg)
	first.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= rows })
	w, stopWriter := e.StartLedgerWriter(rows, 40*time.Second)
	time.Sleep(3 * time.Second) // records in flight, transactions open
	t.Cleanup(func() { first.Cmd.Process.Signal(syscall.SIGCONT) })
	first.Freeze(t)
	frozen := time.Now()

	second := e.Start("run", "--config", cfg)
	second.WaitFor(t, 60*time.Second, "the takeover", func() bool { return strings.Contains(second.Out.String(), "took over the lease") })
	time.Sleep(2 * time.Second) // the successor publishes
	if err := first.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first.Done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the stale owner still runs 20 s after SIGCONT; output:\n%s", first.Out)
	}
	if code := first.Cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("stale owner exit code %d, want 1; output:\n%s", code, first.Out)
	}
	stopWriter()
	if exactlyOnce {
		e.AwaitSentinelCommitted(second, 1)
	} else {
		e.AwaitSentinel(second, 1)
	}
	if code := second.Stop(t); code != 0 {
		t.Fatalf("second task exit %d after SIGTERM; output:\n%s", code, second.Out)
	}
	msgs := read()
	res := itest.VerifyLedgerMessages(t, plain(msgs), w)
	stale := staleAfterTakeover(msgs, exactlyOnce)
	mode := "at_least_once"
	if exactlyOnce {
		mode = "exactly_once"
	}
	t.Logf("%s: frozen %s; %d committed changes (+%d backfilled), %d rolled back; %s; stale-owner records after takeover %d; stale owner said: %s",
		mode, time.Since(frozen).Round(time.Second), len(w.Committed()), rows, len(w.RolledBack), res, stale, lastLine(first.Out.String()))
	return res, stale
}

// staleAfterTakeover counts records written by an earlier owner after a
// later owner's record in the same partition. Exactly once, all tasks
// share one producer id and each initialisation (and, with transaction
// protocol v2, each transaction) raises the epoch: an epoch lower than
// one before it is a stale write. At least once, each process has its own
// producer id: the first process's id after another one's is stale.
func staleAfterTakeover(msgs []itest.CommittedMessage, exactlyOnce bool) int {
	stale := 0
	maxEpoch := map[int32]int16{}
	firstPID := int64(-1)
	otherSeen := map[int32]bool{}
	for _, m := range msgs {
		if firstPID < 0 {
			firstPID = m.ProducerID
		}
		if exactlyOnce {
			if m.Epoch < maxEpoch[m.Partition] {
				stale++
			}
			maxEpoch[m.Partition] = max(maxEpoch[m.Partition], m.Epoch)
			continue
		}
		if m.ProducerID != firstPID {
			otherSeen[m.Partition] = true
		} else if otherSeen[m.Partition] {
			stale++
		}
	}
	return stale
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
