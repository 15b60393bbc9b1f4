package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The exactly-once tests run the binary with delivery exactly_once and the
// DynamoDB store on moto, and read the topics as a read_committed consumer
// does: every committed change exactly once (0 gaps, 0 duplicates) across
// SIGKILLs and a SIGSTOP takeover, and nothing from a fenced owner after
// the takeover.

// exactlyOnceLines turn a pipeline config into an exactly-once one; they
// go after the checkpoint section (top level).
const exactlyOnceLines = "delivery: exactly_once\n"

// committedMessage is a message read read_committed, with the producer
// epoch that tells transactions of different owners apart.
type committedMessage struct {
	message
	Epoch int16
}

// readCommitted reads topic from the start to its end with isolation
// level read_committed. Transactional topics end with a marker, so control
// records are kept to see the end, and dropped from the result.
func readCommitted(t *testing.T, topic string) []committedMessage {
	t.Helper()
	var msgs []committedMessage
	eachRecordWithin(t, topic, 60*time.Second, []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()},
		func(r *kgo.Record, m message) {
			msgs = append(msgs, committedMessage{message: m, Epoch: r.ProducerEpoch})
		})
	return msgs
}

func plain(msgs []committedMessage) []message {
	out := make([]message, len(msgs))
	for i, m := range msgs {
		out[i] = m.message
	}
	return out
}

// awaitSentinelCommitted is awaitSentinel for a transactional topic.
func (e *env) awaitSentinelCommitted(p *proc, id int) {
	e.t.Helper()
	e.exec(`INSERT INTO sentinel VALUES ($1)`, id)
	topic := e.prefix + ".public.sentinel"
	p.waitFor(e.t, 120*time.Second, fmt.Sprintf("sentinel row %d committed", id), func() bool {
		if topicEnd(topic) == 0 {
			return false
		}
		for _, m := range readCommitted(e.t, topic) {
			if after, ok := m.payload()["after"].(map[string]any); ok && after["id"] == float64(id) {
				return true
			}
		}
		return false
	})
}

// oracleSetup makes the ledger of the oracle writer with rows rows and the
// sentinel table, and returns the ledger's topic.
func (e *env) oracleSetup(rows int) string {
	e.exec(`CREATE TABLE ledger (k int PRIMARY KEY, seq bigint NOT NULL, pad text)`)
	e.exec(`ALTER TABLE ledger REPLICA IDENTITY FULL`)
	e.exec(fmt.Sprintf(`INSERT INTO ledger SELECT g, g, 'x' FROM generate_series(1, %d) g`, rows))
	e.exec(sentinelTable)
	return e.prefix + ".public.ledger"
}

// startWriter runs the oracle writer for d in the background.
func (e *env) startWriter(rows int64, d time.Duration) (*writer, func()) {
	w := newWriter(rows)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.run(ctx, e.t, e.pgURL(), d) }()
	var once sync.Once
	stop := func() {
		once.Do(func() { cancel(); wg.Wait() })
		if w.err != nil {
			e.t.Fatal(w.err)
		}
	}
	e.t.Cleanup(func() { once.Do(func() { cancel(); wg.Wait() }) })
	return w, stop
}

// TestExactlyOnceCrashes SIGKILLs an exactly-once pipeline again and again
// while the writer commits changes: at random moments from outside, right
// after a Kafka transaction committed (before the checkpoint store knows),
// and right after a record was handed to the producer. A read_committed
// consumer must see every committed change exactly once.
func TestExactlyOnceCrashes(t *testing.T) {
	e := newEnv(t, "eoscrash")
	useMoto(t)
	const rows = 200
	topic := e.oracleSetup(rows)
	cfg := e.writePipeline(pipelineConfig{checkpoint: dynamoCheckpoint(testTableName("eoscrash")) + exactlyOnceLines})

	p := e.start("run", "--config", cfg)
	p.waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= rows })
	w, stopWriter := e.startWriter(rows, 90*time.Second)

	kills := 0
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	for i := 0; i < 6; i++ {
		time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
		p.kill()
		kills++
		p = e.start("run", "--config", cfg)
	}
	p.kill()
	kills++
	for _, point := range []string{"after-txn-commit:2", "after-produce:30", "after-txn-commit:5"} {
		p = e.startWith([]string{"TRIBUTARY_TEST_CRASH=" + point}, "run", "--config", cfg)
		select {
		case <-p.done:
		case <-time.After(60 * time.Second):
			t.Fatalf("crash point %s not reached within 60 s; output:\n%s", point, p.out)
		}
		if !p.killedBy(syscall.SIGKILL) {
			t.Fatalf("ended with %v, not by its own SIGKILL at %s; output:\n%s", p.err, point, p.out)
		}
		kills++
	}
	stopWriter()

	p = e.start("run", "--config", cfg)
	e.awaitSentinelCommitted(p, 1)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	msgs := readCommitted(t, topic)
	res := verifyMessages(t, plain(msgs), w)
	t.Logf("exactly_once, %d SIGKILLs: %d committed changes (+%d backfilled rows), %d rolled back; read_committed: %s; %d records in the topic including aborted ones and markers",
		kills, len(w.committed()), rows, len(w.rolledBack), res, topicEnd(topic))
	if res.gaps > 0 || res.dups > 0 {
		t.Fatalf("exactly_once: %d gaps and %d duplicates, want 0 and 0", res.gaps, res.dups)
	}
}

// TestExactlyOnceTakeover freezes the owner (SIGSTOP) while the writer
// commits changes, lets a second task take over, and thaws the first
// (SIGCONT). With exactly_once the broker fences the frozen producer: a
// read_committed consumer sees every change exactly once, and no record of
// the first owner after one of the second in any partition.
func TestExactlyOnceTakeover(t *testing.T) {
	res, stale := takeover(t, true)
	if res.gaps > 0 || res.dups > 0 || res.reversals > 0 || stale > 0 {
		t.Fatalf("exactly_once takeover: %s, %d records of the fenced owner after the takeover; want all 0", res, stale)
	}
}

// TestAtLeastOnceTakeover is the same scenario at least once: it must lose
// nothing, and it reports what a stale owner still wrote (the records it
// had in flight when frozen can land after the successor's).
func TestAtLeastOnceTakeover(t *testing.T) {
	res, stale := takeover(t, false)
	if res.gaps > 0 {
		t.Fatalf("at_least_once takeover: %d gaps", res.gaps)
	}
	t.Logf("at_least_once takeover observed: %s, %d records of the stale owner after the successor's first in their partition", res, stale)
}

func takeover(t *testing.T, exactlyOnce bool) (oracleResult, int) {
	e := newEnv(t, "takeover")
	useMoto(t)
	const rows = 100
	topic := e.oracleSetup(rows)
	extra := ""
	if exactlyOnce {
		extra = exactlyOnceLines
	}
	cfg := e.writePipeline(pipelineConfig{checkpoint: dynamoCheckpoint(testTableName("takeover")) + extra})
	read := func() []committedMessage {
		if exactlyOnce {
			return readCommitted(t, topic)
		}
		var out []committedMessage
		for _, m := range readTopic(t, topic) {
			out = append(out, committedMessage{message: m})
		}
		return out
	}

	first := e.start("run", "--config", cfg)
	first.waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= rows })
	w, stopWriter := e.startWriter(rows, 40*time.Second)
	time.Sleep(3 * time.Second) // records in flight, transactions open
	if err := first.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.cmd.Process.Signal(syscall.SIGCONT) })
	frozen := time.Now()

	second := e.start("run", "--config", cfg)
	second.waitFor(t, 60*time.Second, "the takeover", func() bool { return strings.Contains(second.out.String(), "took over the lease") })
	time.Sleep(2 * time.Second) // the successor publishes
	if err := first.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the stale owner still runs 20 s after SIGCONT; output:\n%s", first.out)
	}
	if code := first.cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("stale owner exit code %d, want 1; output:\n%s", code, first.out)
	}
	stopWriter()
	if exactlyOnce {
		e.awaitSentinelCommitted(second, 1)
	} else {
		e.awaitSentinel(second, 1)
	}
	if code := second.stop(t); code != 0 {
		t.Fatalf("second task exit %d after SIGTERM; output:\n%s", code, second.out)
	}
	msgs := read()
	res := verifyMessages(t, plain(msgs), w)
	stale := staleAfterTakeover(msgs, exactlyOnce)
	mode := "at_least_once"
	if exactlyOnce {
		mode = "exactly_once"
	}
	t.Logf("%s: frozen %s; %d committed changes (+%d backfilled), %d rolled back; %s; stale-owner records after takeover %d; stale owner said: %s",
		mode, time.Since(frozen).Round(time.Second), len(w.committed()), rows, len(w.rolledBack), res, stale, lastLine(first.out.String()))
	return res, stale
}

// staleAfterTakeover counts records written by an earlier owner after a
// later owner's record in the same partition. Exactly once, all tasks
// share one producer id and each initialisation (and, with transaction
// protocol v2, each transaction) raises the epoch: an epoch lower than
// one before it is a stale write. At least once, each process has its own
// producer id: the first process's id after another one's is stale.
func staleAfterTakeover(msgs []committedMessage, exactlyOnce bool) int {
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
