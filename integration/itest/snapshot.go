package itest

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"
)

// CheckKeyHistories checks, per key, that the seq of its messages never
// goes back and that its last message is the database's row.
func CheckKeyHistories(t *testing.T, msgs []Message, want map[int64]DBRow) {
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
		pl := m.Payload()
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
			t.Errorf("key %d: last message is a delete, the database has seq %d: %v", k, row.Seq, h)
		case last.op != "d" && !ok:
			t.Errorf("key %d: last message %s seq %d, the key is not in the database: %v", k, last.op, last.seq, h)
		case ok && last.seq != row.Seq:
			t.Errorf("key %d: last message %s seq %d, the database has seq %d: %v", k, last.op, last.seq, row.Seq, h)
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

// ReadSnapshotState reads the snapshot state of a file checkpoint; ok is
// false before the first checkpoint.
func ReadSnapshotState(path string) (st snapshotStateJSON, ok bool) {
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

// IntKey decodes a one-column integer key of the snapshot state.
func IntKey(key []string) int {
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

// WaitOrDump is waitFor that shows the pipeline's output (its tail) when
// the wait fails or the pipeline exits.
func WaitOrDump(t *testing.T, p *Proc, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if p.Exited() || time.Now().After(deadline) {
			out := p.Out.String()
			if len(out) > 8000 {
				out = out[len(out)-8000:]
			}
			t.Fatalf("waiting for %s: timed out after %s or tributary exited; output (tail):\n%s", what, timeout, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
