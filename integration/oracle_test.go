package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The writer and verifyOracle below serve TestCrashPoints (crash_test.go).
// The no-gap oracles that were here, one per source, are now subtests of
// TestRandomOracle (scenario_oracle_test.go), whose base workload (no
// ORACLE_FEATURES) is theirs: inserts, updates and deletes under random
// SIGKILLs.

// oracleResult is what verifyOracle found.
type oracleResult struct {
	changes, messages, gaps, dups, reversals int
}

func (r oracleResult) String() string {
	return fmt.Sprintf("%d messages read, %d gaps, %d duplicates, %d reversals", r.messages, r.gaps, r.dups, r.reversals)
}

// verifyOracle reads topic from the start and checks it against what w
// committed: every committed change present (gaps are errors), no
// rolled-back value, per key the first occurrences in seq order.
// Duplicates are counted, not errors.
func verifyOracle(t *testing.T, topic string, w *writer) oracleResult {
	t.Helper()
	return verifyMessages(t, readTopic(t, topic), w)
}

// verifyMessages is verifyOracle on messages already read.
func verifyMessages(t *testing.T, msgs []message, w *writer) oracleResult {
	t.Helper()
	want := w.committed()
	res := oracleResult{changes: len(want), messages: len(msgs)}
	seen := map[string]bool{}    // event ids
	got := map[change3]bool{}    // (op, k, seq) published
	lastSeq := map[int64]int64{} // per key, seq of the last first-occurrence
	for _, m := range msgs {
		id := m.Headers["tributary-event-id"]
		if seen[id] {
			res.dups++
			continue
		}
		seen[id] = true
		c, ok := changeOf(m)
		if !ok {
			t.Errorf("a message without a row: %v", m.payload())
			continue
		}
		k, seq := c.k, c.seq
		got[c] = true
		if seq < lastSeq[k] {
			res.reversals++
			t.Errorf("key %d: seq %d published after seq %d", k, seq, lastSeq[k])
		}
		lastSeq[k] = seq
		if w.rolledBack[seq] {
			t.Errorf("rolled-back seq %d (key %d) was published", seq, k)
		}
	}
	for _, c := range want {
		if !got[c] {
			res.gaps++
			if res.gaps <= 10 {
				t.Errorf("gap: committed %s k=%d seq=%d never published", c.op, c.k, c.seq)
			}
		}
	}
	return res
}

type change3 struct {
	op  string
	k   int64
	seq int64
}

// changeOf is the change a message of an oracle table carries: its op
// and the after row's k and seq (the before row's for a delete); false
// for a message without that row.
func changeOf(m message) (change3, bool) {
	pl := m.payload()
	op, _ := pl["op"].(string)
	row, _ := pl["after"].(map[string]any)
	if op == "d" {
		row, _ = pl["before"].(map[string]any)
	}
	if row == nil {
		return change3{}, false
	}
	return change3{op, int64(row["k"].(float64)), int64(row["seq"].(float64))}, true
}

// writer makes random committed and rolled-back changes and remembers them.
type writer struct {
	mu         sync.Mutex
	nextKey    int64
	seq        int64
	live       map[int64]int64 // key → current seq
	log        []change3
	rolledBack map[int64]bool
	err        error
}

func newWriter(rows int64) *writer {
	w := &writer{nextKey: rows + 1, seq: rows, live: map[int64]int64{}, rolledBack: map[int64]bool{}}
	for k := int64(1); k <= rows; k++ {
		w.live[k] = k
	}
	return w
}

func (w *writer) committed() []change3 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]change3(nil), w.log...)
}

func (w *writer) run(ctx context.Context, t *testing.T, url string, d time.Duration) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		w.err = err
		return
	}
	defer conn.Close(context.Background())
	w.runOn(ctx, pgExec(ctx, conn), d)
}

// pgExec runs the writer's statements on a PostgreSQL connection.
func pgExec(ctx context.Context, conn *pgx.Conn) func(string) error {
	return func(q string) error { _, err := conn.Exec(ctx, q); return err }
}

// runOn commits random transactions through exec (one statement per
// call, on one session of any source) for d or until ctx is done.
func (w *writer) runOn(ctx context.Context, exec func(string) error, d time.Duration) {
	rng := rand.New(rand.NewPCG(42, uint64(time.Now().UnixNano())))
	end := time.Now().Add(d)
	for time.Now().Before(end) && ctx.Err() == nil {
		if err := w.tx(exec, rng); err != nil && ctx.Err() == nil {
			w.err = fmt.Errorf("writer: %w", err)
			return
		}
		time.Sleep(time.Duration(rng.IntN(4)) * time.Millisecond)
	}
}

// tx runs one transaction of 1-5 changes; one in ten is rolled back. The
// SQL is the same on every source.
func (w *writer) tx(exec func(string) error, rng *rand.Rand) error {
	if err := exec("BEGIN"); err != nil {
		return err
	}
	rollback := rng.IntN(10) == 0
	live := map[int64]int64{}
	w.mu.Lock()
	for k, s := range w.live {
		live[k] = s
	}
	nextKey, seq := w.nextKey, w.seq
	w.mu.Unlock()
	var changes []change3
	for n := 1 + rng.IntN(5); n > 0; n-- {
		seq++
		var k int64
		var q string
		switch r := rng.IntN(10); {
		case r < 5 || len(live) < 50: // insert
			k = nextKey
			nextKey++
			q = fmt.Sprintf(`INSERT INTO ledger (k, seq) VALUES (%d, %d)`, k, seq)
			changes = append(changes, change3{"c", k, seq})
			live[k] = seq
		case r < 8: // update
			k = anyKey(live, rng)
			q = fmt.Sprintf(`UPDATE ledger SET seq = %d WHERE k = %d`, seq, k)
			changes = append(changes, change3{"u", k, seq})
			live[k] = seq
		default: // delete: the event carries the deleted row's seq
			k = anyKey(live, rng)
			q = fmt.Sprintf(`DELETE FROM ledger WHERE k = %d`, k)
			changes = append(changes, change3{"d", k, live[k]})
			delete(live, k)
		}
		if err := exec(q); err != nil {
			exec("ROLLBACK")
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if rollback {
		for _, c := range changes {
			if c.op != "d" {
				w.rolledBack[c.seq] = true
			}
		}
		w.seq = seq // rolled-back seqs are never reused
		return exec("ROLLBACK")
	}
	if err := exec("COMMIT"); err != nil {
		return err
	}
	w.live, w.nextKey, w.seq = live, nextKey, seq
	w.log = append(w.log, changes...)
	return nil
}

func anyKey(live map[int64]int64, rng *rand.Rand) int64 {
	n := rng.IntN(len(live))
	for k := range live {
		if n == 0 {
			return k
		}
		n--
	}
	panic("unreachable")
}

// awaitCatchUp waits until topic holds at least min messages and has
// stopped growing.
func awaitCatchUp(t *testing.T, topic string, min int64) {
	t.Helper()
	prev := int64(-1)
	waitFor(t, 120*time.Second, "every committed change", func() bool {
		n := topicEnd(topic)
		stable := n == prev && n >= min
		prev = n
		time.Sleep(2 * time.Second)
		return stable
	})
}
