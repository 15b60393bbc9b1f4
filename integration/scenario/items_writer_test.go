package scenario_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// itemsWriting is the scenario the snapshot-while-writing tests share:
// the items table filled with rows, a pipeline config capturing it, a
// writer changing it while the pipeline snapshots, and the ending that
// compares each key's history on the topic with the table's row.
type itemsWriting struct {
	b      itest.Backend
	e      *itest.Env
	cfg    string // the pipeline config
	ckpt   string // its checkpoint file
	seq    atomic.Int64
	writes atomic.Int64
	stop   atomic.Bool
	wg     sync.WaitGroup
}

// newItemsWriting makes b's items table with rows rows (k and seq 1…rows)
// and a pipeline config capturing every table.
func newItemsWriting(t *testing.T, b itest.Backend, rows int) *itemsWriting {
	t.Helper()
	itest.CreateTables(t, b, "items")
	itest.MustExecOn(t, b, b.BulkInsert("items", 0, 0, rows))
	w := &itemsWriting{b: b, e: b.Env(), cfg: b.Config(nil, "")}
	w.ckpt = filepath.Join(w.e.Dir, "checkpoints", w.e.Name+".checkpoint.json")
	w.seq.Store(1_000_000)
	return w
}

// write starts the writer: each turn takes the next seq (above every
// bulk row's) and runs the statement next makes of it ("": none this
// turn), then pauses. A statement's error fails the test and stops the
// writer, except a duplicate key when duplicates is set (a key moved onto
// one in use).
func (w *itemsWriting) write(t *testing.T, pause time.Duration, duplicates bool, next func(seq int64) string) {
	// A test that fails before end stops the writer too: it must not
	// report to a test that has returned.
	t.Cleanup(func() { w.stop.Store(true); w.wg.Wait() })
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for !w.stop.Load() {
			sql := next(w.seq.Add(1))
			if sql == "" {
				continue
			}
			err := w.b.Exec(sql)
			if err != nil && !(duplicates && strings.Contains(strings.ToLower(err.Error()), "duplicate")) {
				t.Errorf("%s: %v", sql, err)
				return
			}
			w.writes.Add(1)
			time.Sleep(pause)
		}
	}()
}

// end stops the writer and writes a last row (k -1), which tells that
// every earlier write is published once p published it; stops p (exit 0
// after SIGTERM) and checks that each key's history on the topic ends
// at the table's row, its seq never going back. read reads the topic
// (itest.ReadTopic, or readCommitted); end returns what it read and the
// table's rows.
func (w *itemsWriting) end(t *testing.T, p *itest.Proc, read func(*testing.T, string) []itest.Message) ([]itest.Message, map[int64]itest.DBRow) {
	t.Helper()
	w.stop.Store(true)
	w.wg.Wait()
	itest.MustExecOn(t, w.b, fmt.Sprintf(`INSERT INTO items (k, seq, v) VALUES (%d, %d, 'last')`, -1, w.seq.Add(1)))
	topic := w.b.Topic("items")
	itest.WaitOrDump(t, p, 60*time.Second, "the last write", func() bool {
		for _, m := range read(t, topic) {
			if k, _ := m.Key["payload"].(map[string]any)["k"].(float64); k == -1 {
				return true
			}
		}
		return false
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	want, err := w.b.State("items")
	if err != nil {
		t.Fatal(err)
	}
	msgs := read(t, topic)
	itest.CheckKeyHistories(t, msgs, want)
	return msgs, want
}

// readCommitted is itest.ReadCommitted's messages.
func readCommitted(t *testing.T, topic string) []itest.Message {
	var msgs []itest.Message
	for _, m := range itest.ReadCommitted(t, topic) {
		msgs = append(msgs, m.Message)
	}
	return msgs
}

// deleteMoveOrUpdate is the statement mix of the review writers: one in
// six deletes row k, one in six moves it to key seq, the rest update it.
func deleteMoveOrUpdate(k, seq int64) string {
	switch rand.IntN(6) {
	case 0:
		return fmt.Sprintf(`DELETE FROM items WHERE k = %d`, k)
	case 1:
		return fmt.Sprintf(`UPDATE items SET k = %d, seq = %d, v = 'moved' WHERE k = %d`, seq, seq, k)
	default:
		return fmt.Sprintf(`UPDATE items SET seq = %d, v = 'upd' WHERE k = %d`, seq, k)
	}
}
