package cli_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
)

// TestBackfillRequestedAgainDuringItsSnapshot, on every relational source:
// `tributary backfill --table` for a table whose requested snapshot is
// still under way (the first request taken and cleared from the store)
// reads every row again after the second request, not only those the
// first had not reached yet. Before, the second request
// joined the running snapshot, and the rows it had published before the
// second request were never published after it.
func TestBackfillRequestedAgainDuringItsSnapshot(t *testing.T) {
	itest.ForEachBackend(t, "bfagain", func(t *testing.T, b itest.Backend) {
		r := requestTwice(t, b, func(r *twice) {
			// Once the pipeline has taken the first request and cleared
			// it from the store.
			r.p.WaitFor(t, time.Minute, "the first request to leave the store, and a fifth of its rows", func() bool {
				st, _ := itest.StatusJSON(t, r.e, r.cfg)
				return st.BackfillRequested == nil && itest.TopicEnd(r.ledger) >= rows+rows/5
			})
		})
		if r.first >= rows {
			t.Skipf("the first request's snapshot ended before the second request (%d rows published): too fast to test here", r.first)
		}
		r.awaitEveryRowAgain(t, "")
		if !strings.Contains(r.p.Out.String(), "snapshot requested") {
			t.Errorf("no request was logged:\n%s", itest.OutTail(r.p.Out.String()))
		}
	})
}

// TestBackfillRequestedAgainBeforeItIsCleared, on every relational
// source: a second `tributary backfill --table` for the same table, made
// just after the pipeline took the first and before the checkpoint that
// clears it from the store, reads every row again after it too. Before,
// the store held the table's name once for both, the pipeline had it
// handed over already, and its clear removed the second request with the
// first: the rows the snapshot published before the second request were
// never published after it.
func TestBackfillRequestedAgainBeforeItIsCleared(t *testing.T) {
	itest.ForEachBackend(t, "bfwindow", func(t *testing.T, b itest.Backend) {
		r := requestTwice(t, b, func(r *twice) {
			r.p.WaitFor(t, time.Minute, "the pipeline to take the request", func() bool {
				return strings.Contains(r.p.Out.String(), "snapshot requested")
			})
			// Some of its rows published (the ones the second request
			// must publish again), well before the next poll (2 s) may
			// clear it.
			taken := itest.TopicEnd(r.ledger)
			r.p.WaitFor(t, time.Minute, "rows of the requested snapshot", func() bool { return itest.TopicEnd(r.ledger) >= taken+200 })
		})
		// The second request was written on the first's: the first was
		// still in the store.
		if pending, err := checkpoint.PendingFile(filepath.Join(r.e.Dir, "checkpoints"), r.e.Name); err != nil || pending.LastAfter == 0 {
			t.Skipf("the first request was cleared before the second (pending %+v, %v): not the window this test is for", pending, err)
		}
		r.awaitEveryRowAgain(t, ", made before the first was cleared")
	})
}

// twice is a pipeline asked twice for a backfill of its ledger: the
// process, its environment, config and ledger topic, the topic's ends
// at the second request and the rows the first had published then.
type twice struct {
	p           *itest.Proc
	e           *itest.Env
	cfg, ledger string
	ends        map[int32]int64
	first       int64
}

// requestTwice runs a pipeline of b over a ledger of rows rows with
// chunks of 2 (a requested snapshot long enough to ask again while it
// runs), asks for a backfill of the ledger, runs between, and asks again.
func requestTwice(t *testing.T, b itest.Backend, between func(*twice)) *twice {
	t.Helper()
	r := &twice{}
	r.e, r.cfg, r.ledger = backfilledLedger(t, b)
	r.p = r.e.StartWith([]string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=2"}, "run", "--config", r.cfg)
	for i, what := range []string{"backfill", "backfill again"} {
		if i == 1 {
			between(r)
		}
		if code, out := itest.BackfillCLI(t, r.e, "--config", r.cfg, "--table", b.TableID("ledger")); code != 0 {
			t.Fatalf("%s: exit %d\n%s", what, code, out)
		}
	}
	r.ends = partitionEnds(t, r.ledger)
	r.first = itest.TopicEnd(r.ledger) - rows
	return r
}

// awaitEveryRowAgain waits until every row was published after the second
// request (when, what more to say of it), then stops the pipeline.
func (r *twice) awaitEveryRowAgain(t *testing.T, when string) {
	t.Helper()
	awaitReadAfter(t, r.p, r.ledger, r.ends, rows, fmt.Sprintf("the second request%s (the first had published %d when it was made)", when, r.first))
	t.Logf("every row published again after the second request%s, when the first had published %d of %d", when, r.first, rows)
	if code := r.p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, r.p.Out)
	}
}

// TestBackfillAllRequestedWhileStoppedRestartsUnfinished, on every
// relational source: `tributary backfill --all` while the pipeline is
// stopped, after a run was killed during a requested snapshot, reads
// every row again at the next run, not on from the unfinished snapshot's
// key. Before, an --all request (unlike --table) joined that snapshot.
func TestBackfillAllRequestedWhileStoppedRestartsUnfinished(t *testing.T) {
	itest.ForEachBackend(t, "bfallstop", func(t *testing.T, b itest.Backend) {
		e, cfg, ledger := backfilledLedger(t, b)
		// A requested snapshot, killed under way: the checkpoint holds
		// it unfinished.
		if code, out := itest.BackfillCLI(t, e, "--config", cfg, "--table", b.TableID("ledger")); code != 0 {
			t.Fatalf("backfill: exit %d\n%s", code, out)
		}
		p := e.StartWith([]string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=2"}, "run", "--config", cfg)
		p.WaitFor(t, time.Minute, "the request to leave the store, and a fifth of its rows", func() bool {
			r, _ := itest.StatusJSON(t, e, cfg)
			return r.BackfillRequested == nil && itest.TopicEnd(ledger) >= rows+rows/5
		})
		p.Kill()
		if n := itest.TopicEnd(ledger) - rows; n >= rows {
			t.Skipf("the requested snapshot ended before the kill (%d rows published): too fast to test here", n)
		}

		// (The killed run's lease is fresh: the command may say it runs.)
		if code, out := itest.BackfillCLI(t, e, "--config", cfg, "--all"); code != 0 {
			t.Fatalf("backfill --all while stopped: exit %d\n%s", code, out)
		}
		ends := partitionEnds(t, ledger)
		p = e.Start("run", "--config", cfg)
		awaitReadAfter(t, p, ledger, ends, rows, "the --all request made while stopped")
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
		}
	})
}

// rows is the ledger's rows in the tests above.
const rows = 20_000

// backfilledLedger is a pipeline of b capturing a ledger of rows rows,
// run until its initial backfill is published, then stopped: its
// environment, config and the ledger's topic.
func backfilledLedger(t *testing.T, b itest.Backend) (*itest.Env, string, string) {
	t.Helper()
	e := b.Env()
	itest.CreateTables(t, b, "ledger", "sentinel")
	itest.MustExecOn(t, b, b.BulkInsert("ledger", 0, 0, rows))
	cfg := b.Config(nil, "")
	ledger := b.Topic("ledger")
	p := e.Start("run", "--config", cfg)
	p.WaitFor(t, 2*time.Minute, "the initial backfill", func() bool { return itest.TopicEnd(ledger) >= rows })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	return e, cfg, ledger
}

// partitionEnds is each partition's end offset of topic now.
func partitionEnds(t *testing.T, topic string) map[int32]int64 {
	ends := map[int32]int64{}
	for _, m := range itest.ReadTopic(t, topic) {
		ends[m.Partition] = max(ends[m.Partition], m.Offset+1)
	}
	return ends
}

// awaitReadAfter waits until every key from 1 to rows has an op r record
// in topic past ends (partitionEnds when what was made), and fails,
// naming what, if one has none within 2 minutes.
func awaitReadAfter(t *testing.T, p *itest.Proc, topic string, ends map[int32]int64, rows int64, what string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		after := map[int64]bool{}
		for _, m := range itest.ReadTopic(t, topic) {
			if m.Offset >= ends[m.Partition] && m.Payload()["op"] == "r" {
				after[itest.KeyOf(m)] = true
			}
		}
		var missing []int64
		for k := int64(1); k <= rows; k++ {
			if !after[k] {
				missing = append(missing, k)
			}
		}
		if len(missing) == 0 {
			return
		}
		if p.Exited() {
			t.Fatalf("tributary exited: %v; output:\n%s", p.Err, p.Out)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d rows were not published after %s, the first %v; output:\n%s",
				len(missing), rows, what, missing[:min(5, len(missing))], itest.OutTail(p.Out.String()))
		}
		time.Sleep(time.Second)
	}
}
