package itest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pgx/v5"
)

// LedgerResult is what VerifyLedger found.
type LedgerResult struct {
	Changes, messages, Gaps, Dups, Reversals int
}

func (r LedgerResult) String() string {
	return fmt.Sprintf("%d messages read, %d gaps, %d duplicates, %d reversals", r.messages, r.Gaps, r.Dups, r.Reversals)
}

// VerifyLedger reads topic from the start and checks it against what w
// committed: every committed change present (gaps are errors), no
// rolled-back value, per key the first occurrences in seq order.
// Duplicates are counted, not errors.
func VerifyLedger(t *testing.T, topic string, w *LedgerWriter) LedgerResult {
	t.Helper()
	return VerifyLedgerMessages(t, ReadTopic(t, topic), w)
}

// VerifyLedgerMessages is VerifyLedger on messages already read.
func VerifyLedgerMessages(t *testing.T, msgs []Message, w *LedgerWriter) LedgerResult {
	t.Helper()
	want := w.Committed()
	res := LedgerResult{Changes: len(want), messages: len(msgs)}
	seen := map[string]bool{}      // event ids
	got := map[LedgerChange]bool{} // (op, k, seq) published
	lastSeq := map[int64]int64{}   // per key, seq of the last first-occurrence
	for _, m := range msgs {
		id := m.Headers["tributary-event-id"]
		if seen[id] {
			res.Dups++
			continue
		}
		seen[id] = true
		c, ok := ChangeOf(m)
		if !ok {
			t.Errorf("a message without a row: %v", m.Payload())
			continue
		}
		k, seq := c.K, c.Seq
		got[c] = true
		if seq < lastSeq[k] {
			res.Reversals++
			t.Errorf("key %d: seq %d published after seq %d", k, seq, lastSeq[k])
		}
		lastSeq[k] = seq
		if w.RolledBack[seq] {
			t.Errorf("rolled-back seq %d (key %d) was published", seq, k)
		}
	}
	for _, c := range want {
		if !got[c] {
			res.Gaps++
			if res.Gaps <= 10 {
				t.Errorf("gap: committed %s k=%d seq=%d never published", c.op, c.K, c.Seq)
			}
		}
	}
	return res
}

type LedgerChange struct {
	op  string
	K   int64
	Seq int64
}

// ChangeOf is the change a message of the ledger table carries: its op
// and the after row's k and seq (the before row's for a delete); false
// for a message without that row.
func ChangeOf(m Message) (LedgerChange, bool) {
	pl := m.Payload()
	op, _ := pl["op"].(string)
	row, _ := pl["after"].(map[string]any)
	if op == "d" {
		row, _ = pl["before"].(map[string]any)
	}
	if row == nil {
		return LedgerChange{}, false
	}
	return LedgerChange{op, int64(row["k"].(float64)), int64(row["seq"].(float64))}, true
}

// LedgerWriter makes random committed and rolled-back changes to the
// table ledger (k, seq) and remembers them, for VerifyLedger: the
// no-gap check of the delivery, fault and lease tests. (The randomized
// workload oracle of integration/scenario is another, larger model.)
type LedgerWriter struct {
	mu         sync.Mutex
	nextKey    int64
	seq        int64
	live       map[int64]int64 // key → current seq
	log        []LedgerChange
	RolledBack map[int64]bool
	Err        error
}

func NewLedgerWriter(rows int64) *LedgerWriter {
	w := &LedgerWriter{nextKey: rows + 1, seq: rows, live: map[int64]int64{}, RolledBack: map[int64]bool{}}
	for k := int64(1); k <= rows; k++ {
		w.live[k] = k
	}
	return w
}

func (w *LedgerWriter) Committed() []LedgerChange {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]LedgerChange(nil), w.log...)
}

func (w *LedgerWriter) Run(ctx context.Context, t *testing.T, url string, d time.Duration) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		w.Err = err
		return
	}
	defer conn.Close(context.Background())
	w.RunOn(ctx, PGExec(ctx, conn), d)
}

// PGExec runs the writer's statements on a PostgreSQL connection.
func PGExec(ctx context.Context, conn *pgx.Conn) func(string) error {
	return func(q string) error { _, err := conn.Exec(ctx, q); return err }
}

// RunOn commits random transactions through exec (one statement per
// call, on one session of any source) for d or until ctx is done.
func (w *LedgerWriter) RunOn(ctx context.Context, exec func(string) error, d time.Duration) {
	rng := rand.New(rand.NewPCG(42, uint64(time.Now().UnixNano())))
	end := time.Now().Add(d)
	for time.Now().Before(end) && ctx.Err() == nil {
		if err := w.Tx(exec, rng); err != nil && ctx.Err() == nil {
			w.Err = fmt.Errorf("writer: %w", err)
			return
		}
		time.Sleep(time.Duration(rng.IntN(4)) * time.Millisecond)
	}
}

// Tx runs one transaction of 1-5 changes; one in ten is rolled back. The
// SQL is the same on every source.
func (w *LedgerWriter) Tx(exec func(string) error, rng *rand.Rand) error {
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
	var changes []LedgerChange
	for n := 1 + rng.IntN(5); n > 0; n-- {
		seq++
		var k int64
		var q string
		switch r := rng.IntN(10); {
		case r < 5 || len(live) < 50: // insert
			k = nextKey
			nextKey++
			q = fmt.Sprintf(`INSERT INTO ledger (k, seq) VALUES (%d, %d)`, k, seq)
			changes = append(changes, LedgerChange{"c", k, seq})
			live[k] = seq
		case r < 8: // update
			k = AnyKey(live, rng)
			q = fmt.Sprintf(`UPDATE ledger SET seq = %d WHERE k = %d`, seq, k)
			changes = append(changes, LedgerChange{"u", k, seq})
			live[k] = seq
		default: // delete: the event carries the deleted row's seq
			k = AnyKey(live, rng)
			q = fmt.Sprintf(`DELETE FROM ledger WHERE k = %d`, k)
			changes = append(changes, LedgerChange{"d", k, live[k]})
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
				w.RolledBack[c.Seq] = true
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

func AnyKey(live map[int64]int64, rng *rand.Rand) int64 {
	n := rng.IntN(len(live))
	for k := range live {
		if n == 0 {
			return k
		}
		n--
	}
	panic("unreachable")
}

// AwaitCatchUp waits until topic holds at least min messages and has
// stopped growing.
func AwaitCatchUp(t *testing.T, topic string, min int64) {
	t.Helper()
	prev := int64(-1)
	WaitFor(t, 120*time.Second, "every committed change", func() bool {
		n := TopicEnd(topic)
		stable := n == prev && n >= min
		prev = n
		time.Sleep(2 * time.Second)
		return stable
	})
}

// LedgerSetup makes the ledger of the ledger writer with rows rows and the
// sentinel table, and returns the ledger's topic.
func (e *Env) LedgerSetup(rows int) string {
	e.Exec(`CREATE TABLE ledger (k int PRIMARY KEY, seq bigint NOT NULL, pad text)`)
	e.Exec(`ALTER TABLE ledger REPLICA IDENTITY FULL`)
	e.Exec(fmt.Sprintf(`INSERT INTO ledger SELECT g, g, 'x' FROM generate_series(1, %d) g`, rows))
	e.Exec(SentinelTable)
	return e.Prefix + ".public.ledger"
}

// StartLedgerWriter runs the ledger writer for d in the background.
func (e *Env) StartLedgerWriter(rows int64, d time.Duration) (*LedgerWriter, func()) {
	w := NewLedgerWriter(rows)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Run(ctx, e.T, e.PGURL(), d) }()
	var once sync.Once
	stop := func() {
		once.Do(func() { cancel(); wg.Wait() })
		if w.Err != nil {
			e.T.Fatal(w.Err)
		}
	}
	e.T.Cleanup(func() { once.Do(func() { cancel(); wg.Wait() }) })
	return w, stop
}

// WriteMySQLFor commits random transactions (LedgerWriter.Tx) on addr for
// d, connecting again while the server is coming back. It is never
// running while the server goes away, so no commit is in doubt.
func (w *LedgerWriter) WriteMySQLFor(t *testing.T, addr, db string, d time.Duration) {
	t.Helper()
	var conn *client.Conn
	var err error
	WaitFor(t, 60*time.Second, "the writer's connection", func() bool {
		conn, err = client.Connect(addr, "root", "root", db)
		return err == nil
	})
	defer conn.Close()
	w.RunOn(context.Background(), MysqlExec(conn), d)
	if w.Err != nil {
		t.Fatal(w.Err)
	}
}

// WritePgFor commits random transactions (LedgerWriter.Tx) for d. It is never
// running while the server goes away, so no commit is in doubt.
func (w *LedgerWriter) WritePgFor(t *testing.T, url string, d time.Duration) {
	t.Helper()
	w.Run(context.Background(), t, url, d)
	if w.Err != nil {
		t.Fatal(w.Err)
	}
}

// Stream commits writer transactions until ctx ends, about a hundred a
// second, on one connection (the source is not faulted here).
func (w *LedgerWriter) Stream(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	for ctx.Err() == nil {
		if err := w.Tx(PGExec(ctx, conn), rng); err != nil && ctx.Err() == nil {
			return fmt.Errorf("writer: %w", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// MysqlExec runs the writer's statements on a MySQL connection.
func MysqlExec(conn *client.Conn) func(string) error {
	return func(q string) error { _, err := conn.Execute(q); return err }
}
