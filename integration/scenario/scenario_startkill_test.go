package scenario_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// The oracle's start-up shapes: features startkill and
// bfstopped of TestRandomOracle.

// startKiller SIGKILLs publishers within the first second of their start:
// the pipeline's first one as soon as its backfill is on the topics
// (before its first checkpoint on the cadence, on a quiet machine), later
// ones now and then at a random moment of their first second;
// transactions commit while each is down. Waiting for the whole backfill
// keeps the model's r rows: the changes made while the first one is down
// would otherwise change rows before the backfill read them. Its own
// PRNG: the controller's kills stay those of the seed.
type startKiller struct {
	rng   *rand.Rand
	kills int
}

func newStartKiller(seed uint64) *startKiller {
	return &startKiller{rng: rand.New(rand.NewPCG(seed, 0x57a27))}
}

// first starts the pipeline's first publisher, with no checkpoint on the
// cadence, kills it once backfilled says its rows are all in Kafka, and
// returns the publisher started after.
func (s *startKiller) first(t *testing.T, w *workload, e *itest.Env, cfg string, start func() *itest.Proc, backfilled func() bool) *itest.Proc {
	t.Helper()
	p := e.StartWith([]string{"TRIBUTARY_CHECKPOINT_INTERVAL=1h"}, "run", "--config", cfg)
	began := time.Now()
	for !backfilled() {
		if p.Exited() || time.Since(began) > 90*time.Second {
			t.Fatalf("startkill: the first publisher did not backfill within 90 s; output:\n%s", itest.Tail(p.Out.String(), 3000))
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("startkill: the first publisher killed once its backfill was on the topics, %s after its start", time.Since(began).Round(time.Millisecond))
	return s.Kill(t, w, p, start)
}

// maybe kills p, just started, one time in four, within its first second.
func (s *startKiller) maybe(t *testing.T, w *workload, p *itest.Proc, start func() *itest.Proc) *itest.Proc {
	t.Helper()
	if s.rng.IntN(4) != 0 {
		return p
	}
	time.Sleep(time.Duration(s.rng.IntN(1000)) * time.Millisecond)
	return s.Kill(t, w, p, start)
}

func (s *startKiller) Kill(t *testing.T, w *workload, p *itest.Proc, start func() *itest.Proc) *itest.Proc {
	t.Helper()
	if p.Exited() {
		return p // the controller reports it
	}
	p.Kill()
	s.kills++
	w.mu.Lock()
	for range 3 {
		if err := w.Tx(); err != nil {
			t.Errorf("startkill: while down: %v", err)
			break
		}
	}
	w.mu.Unlock()
	return start()
}

// oracleBackfillWhileStopped is the bfstopped shape: with the writer paused
// (w.mu held) and the publisher down, it runs a publisher until it caught
// up (streaming, and its topics still for two polls) and stops it
// (SIGTERM: its checkpoint is then at the log's end, so
// the next run replays nothing, and no replayed change drops a key from a
// chunk), asks for a backfill of the smallest captured table that has
// rows (`tributary backfill --table`; small keeps the run short), and
// runs a publisher again until every row of it, nor skipped as oversized,
// is published again with op r and the request has left the store; then
// stops it. The controller starts the next one.
func oracleBackfillWhileStopped(t *testing.T, run *oracleRun, start func() *itest.Proc, cfg string) {
	t.Helper()
	b := run.b
	p := start()
	still := topicsStill(b, func() []string { return slices.Collect(maps.Keys(run.configured)) })
	owner := fmt.Sprintf("%d@", p.Cmd.Process.Pid)
	// Catching up may take minutes on a loaded machine (a 500,000-row
	// transaction replayed beside a resumed snapshot): it fails only after
	// two minutes in which its topics did not grow, and it never leaves
	// the publisher running (the next one would find the lock held).
	for progress, stillFor := time.Now(), 0; stillFor < 2; time.Sleep(time.Second) {
		if p.Exited() || time.Since(progress) > 2*time.Minute {
			t.Errorf("bfstopped: the publisher did not catch up before the stop (exited: %v, no progress for %s); output:\n%s", p.Exited(), time.Since(progress).Round(time.Second), itest.Tail(p.Out.String(), 3000))
			p.Stop(t)
			return
		}
		r, _ := itest.StatusJSON(t, b.Env(), cfg)
		streaming := r.Live != nil && strings.HasPrefix(r.Live.Owner, owner) && r.Live.Source != nil && r.Live.Source.State == source.ConnStreaming
		switch grew := !still(); {
		case grew:
			progress, stillFor = time.Now(), 0
		case !streaming:
			stillFor = 0
		default:
			stillFor++
		}
	}
	if code := p.Stop(t); code != 0 {
		t.Errorf("bfstopped: exit %d after SIGTERM; output:\n%s", code, itest.Tail(p.Out.String(), 3000))
		return
	}
	var table string
	var db map[int64]itest.DBRow
	for _, tb := range slices.Sorted(maps.Keys(run.configured)) {
		if run.w.shapes[tb].Feature == "keyless" {
			continue // its messages have no key to count the reads by (readCounts)
		}
		rows, err := b.State(tb)
		if err != nil {
			t.Fatalf("bfstopped: read %s: %v", tb, err)
		}
		if table == "" || len(rows) > 0 && (len(db) == 0 || len(rows) < len(db)) {
			table, db = tb, rows
		}
	}
	before := readCounts(t, b.Topic(table))
	if code, out := itest.BackfillCLI(t, b.Env(), "--config", cfg, "--table", b.TableID(table)); code != 0 {
		t.Errorf("bfstopped: tributary backfill: exit %d\n%s", code, out)
		return
	}

	p = start()
	defer p.Stop(t)
	var missing []int64
	for began := time.Now(); ; time.Sleep(time.Second) {
		skipped := map[int64]bool{}
		for _, rs := range itest.ReadSkipped(t, run.b.Env()) {
			if k, ok := rs.PrimaryKey["k"].(float64); ok && strings.HasSuffix(rs.Table, "."+table) {
				skipped[int64(k)] = true
			}
		}
		reads := readCounts(t, b.Topic(table))
		missing = missing[:0]
		for k := range db {
			if !skipped[k] && reads[k] <= before[k] {
				missing = append(missing, k)
			}
		}
		r, _ := itest.StatusJSON(t, b.Env(), cfg)
		if len(missing) == 0 && r.BackfillRequested == nil {
			t.Logf("bfstopped: %s backfilled on request while stopped: its %d rows published again with op r in %s", table, len(db), time.Since(began).Round(time.Second))
			return
		}
		if p.Exited() || time.Since(began) > 2*time.Minute {
			slices.Sort(missing)
			t.Errorf("bfstopped: %d of the %d rows of %s not published again with op r after a backfill requested while stopped (keys %v), request pending: %v",
				len(missing), len(db), table, missing[:min(len(missing), 10)], r.BackfillRequested != nil)
			return
		}
	}
}

// topicsStill returns a poll that reports whether the tables' topics
// together hold as many records as at the previous poll.
func topicsStill(b itest.Backend, tables func() []string) func() bool {
	prev := int64(-1)
	return func() bool {
		var n int64
		for _, tb := range tables() {
			n += itest.TopicEnd(b.Topic(tb))
		}
		still := n == prev
		prev = n
		return still
	}
}

// readCounts counts the op r messages of each key on topic (those a
// read_committed consumer reads).
func readCounts(t *testing.T, topic string) map[int64]int {
	t.Helper()
	out := map[int64]int{}
	if itest.TopicEnd(topic) == 0 {
		return out
	}
	// Read committed, with the control records: under exactly_once a
	// topic's last offset is a transaction marker, which a consumer
	// without them never reaches.
	opts := []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()}
	itest.EachRawRecordWithin(t, topic, 5*time.Minute, opts, func(r *kgo.Record) {
		if r.Value == nil {
			return
		}
		m, err := oracleRecordOf(r)
		if err != nil {
			t.Fatalf("%s %d/%d: %v", topic, r.Partition, r.Offset, err)
		}
		if m.op == "r" && m.k != nil {
			out[*m.k]++
		}
	})
	return out
}
