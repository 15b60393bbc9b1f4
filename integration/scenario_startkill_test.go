package integration

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The oracle's start-up shapes (issue 28): features startkill and
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
func (s *startKiller) first(t *testing.T, w *workload, e *env, cfg string, start func() *proc, backfilled func() bool) *proc {
	t.Helper()
	p := e.startWith([]string{"TRIBUTARY_CHECKPOINT_INTERVAL=1h"}, "run", "--config", cfg)
	began := time.Now()
	for !backfilled() {
		if p.exited() || time.Since(began) > 90*time.Second {
			t.Fatalf("startkill: the first publisher did not backfill within 90 s; output:\n%s", tail(p.out.String(), 3000))
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("startkill: the first publisher killed once its backfill was on the topics, %s after its start", time.Since(began).Round(time.Millisecond))
	return s.kill(t, w, p, start)
}

// maybe kills p, just started, one time in four, within its first second.
func (s *startKiller) maybe(t *testing.T, w *workload, p *proc, start func() *proc) *proc {
	t.Helper()
	if s.rng.IntN(4) != 0 {
		return p
	}
	time.Sleep(time.Duration(s.rng.IntN(1000)) * time.Millisecond)
	return s.kill(t, w, p, start)
}

func (s *startKiller) kill(t *testing.T, w *workload, p *proc, start func() *proc) *proc {
	t.Helper()
	if p.exited() {
		return p // the controller reports it
	}
	p.kill()
	s.kills++
	w.mu.Lock()
	for range 3 {
		if err := w.tx(); err != nil {
			t.Errorf("startkill: while down: %v", err)
			break
		}
	}
	w.mu.Unlock()
	return start()
}

// stoppedBackfill asks, while the pipeline is stopped, for a backfill of
// one table (`tributary backfill --table`), and checks at the end that the
// next runs served it: the request is gone from the store, and every row
// of the table left unchanged from the request to the end (nor skipped as
// oversized) was published again with op r. The pipeline is stopped with
// SIGTERM after it caught up, so that its checkpoint is at the log's end:
// a restart from an older one replays changes, and a replayed change of a
// key in a chunk's window rightly drops the key from the chunk.
type stoppedBackfill struct {
	table  string
	asked  bool
	reads  map[int64]int   // key → r messages on the topic at the request
	seqAtR map[int64]int64 // key → seq in the database at the request
}

// request runs a publisher until it caught up, stops it and writes the
// request; called while the publisher is down, with the workload's lock
// held.
func (s *stoppedBackfill) request(t *testing.T, run *oracleRun, start func() *proc, cfg string) {
	t.Helper()
	b := run.b
	p := start()
	prev, still := int64(-1), 0
	for began := time.Now(); still < 2; time.Sleep(time.Second) {
		if p.exited() || time.Since(began) > 2*time.Minute {
			t.Errorf("bfstopped: the publisher did not catch up before the stop (exited: %v); output:\n%s", p.exited(), tail(p.out.String(), 3000))
			return
		}
		var n int64
		for tb := range run.configured {
			n += topicEnd(b.topic(tb))
		}
		if n == prev {
			still++
		} else {
			still = 0
		}
		prev = n
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("bfstopped: exit %d after SIGTERM; output:\n%s", code, tail(p.out.String(), 3000))
		return
	}
	db, err := b.state(s.table)
	if err != nil {
		t.Fatalf("bfstopped: read %s: %v", s.table, err)
	}
	s.seqAtR = map[int64]int64{}
	for k, r := range db {
		s.seqAtR[k] = r.seq
	}
	s.reads = readCounts(t, b.topic(s.table))
	if code, out := backfillCLI(t, b.env(), "--config", cfg, "--table", b.tableID(s.table)); code != 0 {
		t.Errorf("bfstopped: tributary backfill: exit %d\n%s", code, out)
		return
	}
	s.asked = true
}

// check runs after the last publisher stopped.
func (s *stoppedBackfill) check(t *testing.T, run *oracleRun, cfg string) {
	t.Helper()
	if !s.asked {
		return
	}
	b := run.b
	if r, _ := statusJSON(t, b.env(), cfg); r.BackfillRequested != nil {
		t.Errorf("bfstopped: the backfill request of %s is still in the store at the end: %+v", s.table, *r.BackfillRequested)
	}
	skipped := map[int64]bool{}
	for _, rs := range readSkipped(t, run) {
		if k, ok := rs.PrimaryKey["k"].(float64); ok {
			skipped[int64(k)] = true
		}
	}
	db, err := b.state(s.table)
	if err != nil {
		t.Fatalf("bfstopped: read %s: %v", s.table, err)
	}
	reads := readCounts(t, b.topic(s.table))
	unchanged := 0
	var missing []int64
	for k, seq := range s.seqAtR {
		if now, ok := db[k]; !ok || now.seq != seq || skipped[k] {
			continue
		}
		unchanged++
		if reads[k] <= s.reads[k] {
			missing = append(missing, k)
		}
	}
	t.Logf("bfstopped: %s backfilled on request while stopped: %d of the %d rows unchanged since were published again with op r", s.table, unchanged-len(missing), unchanged)
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Errorf("bfstopped: %d of the %d rows of %s unchanged since the backfill request were not published again with op r (keys %v)",
			len(missing), unchanged, s.table, missing[:min(len(missing), 10)])
	}
}

// readCounts counts the op r messages of each key on topic.
func readCounts(t *testing.T, topic string) map[int64]int {
	t.Helper()
	out := map[int64]int{}
	if topicEnd(topic) == 0 {
		return out
	}
	eachRawRecordWithin(t, topic, 5*time.Minute, nil, func(r *kgo.Record) {
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
