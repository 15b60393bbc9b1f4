package integration

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSnapshotWhileWriting, on every source: the initial snapshot runs in
// small chunks while a writer inserts, updates, deletes and changes
// primary keys as fast as it can. Afterwards the last message of every key
// in Kafka is the database's row (or a delete for a key that is gone), and
// per key the rows' seq (every write sets a new, larger one) never goes
// back: no r row is older than a change published before it, and a
// deleted key is never brought back by an r.
func TestSnapshotWhileWriting(t *testing.T) {
	forEachBackend(t, "snapwrite", func(t *testing.T, b backend) {
		const rows = 6000
		mustExec := func(sql string) {
			t.Helper()
			if err := b.exec(sql); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		for _, s := range b.createTable("items") {
			mustExec(s)
		}
		mustExec(b.bulkInsert("items", 0, 0, rows))
		e := b.env()
		cfg := b.config(nil, "")
		p := e.startWith([]string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=150"}, "run", "--config", cfg)

		// Writes until the snapshot is done (the checkpoint shows no table
		// left), at least 3 s.
		var seq atomic.Int64
		seq.Store(1_000_000)
		var stop atomic.Bool
		var wg sync.WaitGroup
		var writes atomic.Int64
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := int64(rows + 1)
			for !stop.Load() {
				k := rand.Int64N(next) + 1
				n := seq.Add(1)
				var sql string
				switch rand.IntN(10) {
				case 0, 1:
					sql = fmt.Sprintf(`DELETE FROM items WHERE k = %d`, k)
				case 2, 3:
					next++
					sql = fmt.Sprintf(`INSERT INTO items (k, seq, v) VALUES (%d, %d, 'new')`, next, n)
				case 4:
					next++
					sql = fmt.Sprintf(`UPDATE items SET k = %d, seq = %d, v = 'moved' WHERE k = %d`, next, n, k)
				default:
					sql = fmt.Sprintf(`UPDATE items SET seq = %d, v = 'upd' WHERE k = %d`, n, k)
				}
				if err := b.exec(sql); err != nil {
					t.Errorf("%s: %v", sql, err)
					return
				}
				writes.Add(1)
			}
		}()
		ckpt := filepath.Join(e.dir, "checkpoints", e.name+".checkpoint.json")
		began := time.Now()
		waitOrDump(t, p, 180*time.Second, "the snapshot to finish", func() bool {
			st, ok := readSnapshotState(ckpt)
			return ok && len(st.Tables) == 0 && time.Since(began) > 3*time.Second
		})
		stop.Store(true)
		wg.Wait()
		// A last write, to know every earlier one is published.
		n := seq.Add(1)
		mustExec(fmt.Sprintf(`INSERT INTO items (k, seq, v) VALUES (%d, %d, 'last')`, -1, n))
		topic := b.topic("items")
		waitOrDump(t, p, 60*time.Second, "the last write", func() bool {
			found := false
			for _, m := range readTopic(t, topic) {
				if k, _ := m.Key["payload"].(map[string]any)["k"].(float64); k == -1 {
					found = true
				}
			}
			return found
		})
		if code := p.stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
		}

		want, err := b.state("items")
		if err != nil {
			t.Fatal(err)
		}
		checkKeyHistories(t, readTopic(t, topic), want)
		t.Logf("%d writes during the snapshot; %d rows in the table at the end", writes.Load(), len(want))
	})
}

// checkKeyHistories checks, per key, that the seq of its messages never
// goes back and that its last message is the database's row.
func checkKeyHistories(t *testing.T, msgs []message, want map[int64]dbRow) {
	t.Helper()
	type step struct {
		op  string
		seq int64
	}
	hist := map[int64][]step{}
	reads := 0
	for _, m := range msgs {
		if m.Value == nil {
			continue // tombstone
		}
		pl := m.payload()
		op, _ := pl["op"].(string)
		row, _ := pl["after"].(map[string]any)
		if op == "d" {
			row, _ = pl["before"].(map[string]any)
		}
		if op == "r" {
			reads++
		}
		k := int64(m.Key["payload"].(map[string]any)["k"].(float64))
		s, _ := row["seq"].(float64)
		hist[k] = append(hist[k], step{op, int64(s)})
	}
	if reads == 0 {
		t.Fatal("no r rows published")
	}
	bad := 0
	for k, h := range hist {
		for i := 1; i < len(h); i++ {
			if h[i].seq < h[i-1].seq && bad < 10 {
				bad++
				t.Errorf("key %d: %s seq %d published after %s seq %d (an older version after a newer one): %v", k, h[i].op, h[i].seq, h[i-1].op, h[i-1].seq, h)
			}
		}
		last := h[len(h)-1]
		row, ok := want[k]
		switch {
		case last.op == "d" && ok:
			t.Errorf("key %d: last message is a delete, the database has seq %d: %v", k, row.seq, h)
		case last.op != "d" && !ok:
			t.Errorf("key %d: last message %s seq %d, the key is not in the database: %v", k, last.op, last.seq, h)
		case ok && last.seq != row.seq:
			t.Errorf("key %d: last message %s seq %d, the database has seq %d: %v", k, last.op, last.seq, row.seq, h)
		}
	}
	for k := range want {
		if _, ok := hist[k]; !ok {
			t.Errorf("key %d is in the database and was never published", k)
		}
	}
}

// snapshotStateJSON is the capture engine's state in a position.
type snapshotStateJSON struct {
	Tables []struct {
		Table string   `json:"table"`
		Key   []string `json:"key"` // base64 of each key value's text
		Rows  int64    `json:"rows"`
	} `json:"tables"`
	Done []string `json:"done"`
}

// readSnapshotState reads the snapshot state of a file checkpoint; ok is
// false before the first checkpoint.
func readSnapshotState(path string) (st snapshotStateJSON, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return st, false
	}
	var f struct {
		Position struct {
			Snapshot *snapshotStateJSON `json:"snapshot"`
		} `json:"position"`
	}
	if json.Unmarshal(b, &f) != nil {
		return st, false
	}
	if f.Position.Snapshot != nil {
		st = *f.Position.Snapshot
	}
	return st, true
}

// intKey decodes a one-column integer key of the snapshot state.
func intKey(key []string) int {
	if len(key) != 1 {
		return -1
	}
	raw, err := base64.StdEncoding.DecodeString(key[0])
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil {
		return -1
	}
	return n
}

// waitOrDump is waitFor that shows the pipeline's output (its tail) when
// the wait fails or the pipeline exits.
func waitOrDump(t *testing.T, p *proc, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if p.exited() || time.Now().After(deadline) {
			out := p.out.String()
			if len(out) > 8000 {
				out = out[len(out)-8000:]
			}
			t.Fatalf("waiting for %s: timed out after %s or tributary exited; output (tail):\n%s", what, timeout, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
