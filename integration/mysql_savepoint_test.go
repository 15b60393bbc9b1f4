package integration

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMySQLSavepointCrash: one transaction with savepoints, a partial
// rollback and many rows after them; the publisher is SIGKILLed while the
// rows after the savepoints stream, then restarted. Every committed row
// must reach Kafka and no rolled-back row may. Before the fix, each
// SAVEPOINT / ROLLBACK TO / RELEASE emitted a checkpoint holding the
// transaction's GTID, so the restarted stream skipped the rest of it.
func TestMySQLSavepointCrash(t *testing.T) {
	e := newMyEnv(t, "mysavept")
	e.exec("CREATE TABLE sp (id INT PRIMARY KEY, v VARCHAR(20))")
	e.exec("INSERT INTO sp VALUES (-1, 'before')")
	// done gets a row once the restarted pipeline streams: when it is on
	// its topic, every change before it was published (a count of sp's
	// records would not do: the replay's duplicates make it up early).
	e.exec("CREATE TABLE done (id INT PRIMARY KEY)")
	cfg := e.writeConfig("")
	topic := e.prefix + "." + e.db + ".sp"
	p := e.start("run", "--config", cfg)
	waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= 1 })

	const n = 100000 // rows after the savepoints: several seconds of streaming
	e.exec("BEGIN")
	e.exec("INSERT INTO sp VALUES (0, 'first')")
	e.exec("SAVEPOINT a")
	e.exec("INSERT INTO sp SELECT seq, 'rolled back' FROM seq_300000_to_300999")
	e.exec("ROLLBACK TO SAVEPOINT a")
	e.exec(fmt.Sprintf("INSERT INTO sp SELECT seq, 'kept' FROM seq_1_to_%d", n/2))
	e.exec("RELEASE SAVEPOINT a")
	e.exec("SAVEPOINT b")
	e.exec(fmt.Sprintf("INSERT INTO sp SELECT seq, 'kept' FROM seq_%d_to_%d", n/2+1, n))
	e.exec("COMMIT")
	gtid := e.exec("SELECT @@gtid_binlog_pos")
	txGTID, _ := gtid.GetString(0, 0)

	// Kill as soon as a checkpoint names the transaction (only a bug
	// would write one before its last row) or, failing that, part-way
	// through its rows.
	cpPath := filepath.Join(e.dir, "checkpoints", e.name+".checkpoint.json")
	var atKill int64
	waitFor(t, 120*time.Second, "the transaction's rows to stream", func() bool {
		if p.exited() {
			t.Fatalf("tributary exited: %v\n%s", p.err, p.out)
		}
		atKill = topicEnd(topic)
		return checkpointHas(cpPath, `"`+txGTID+`"`) || atKill >= 1+n/2+n/4
	})
	p.kill()
	if atKill >= n+2 {
		t.Fatalf("the whole transaction (%d rows) was published before the kill: the test proves nothing; make it larger", atKill)
	}
	t.Logf("killed with %d of %d records published", atKill, n+2)

	p = e.start("run", "--config", cfg)
	e.exec("INSERT INTO done VALUES (1)")
	doneTopic := e.prefix + "." + e.db + ".done"
	waitFor(t, 5*time.Minute, "the restarted pipeline to publish past the transaction", func() bool {
		if p.exited() {
			t.Fatalf("tributary exited after the restart: %v\n%s", p.err, p.out)
		}
		return topicEnd(doneTopic) >= 1
	})
	time.Sleep(2 * time.Second) // anything more would be a published rollback
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}

	seen := map[int64]bool{}
	dups := 0
	for _, m := range readTopic(t, topic) {
		after, _ := m.payload()["after"].(map[string]any)
		id := int64(after["id"].(float64))
		if id >= 300000 {
			t.Fatalf("rolled-back row %d was published", id)
		}
		if seen[id] {
			dups++
		}
		seen[id] = true
	}
	var missing []int64
	for id := int64(-1); id <= n; id++ {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d committed rows never published (first %d); checkpoint %s", len(missing), missing[0], readFile(cpPath))
	}
	t.Logf("all %d rows published, %d duplicates after the kill", n+2, dups)
}

// checkpointHas tells whether the file store's checkpoint position holds s.
func checkpointHas(path, s string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var cp struct {
		Position json.RawMessage `json:"position"`
	}
	if json.Unmarshal(b, &cp) != nil {
		return false
	}
	pos := string(cp.Position)
	var enc string
	if json.Unmarshal(cp.Position, &enc) == nil {
		if raw, err := base64.StdEncoding.DecodeString(enc); err == nil {
			pos = string(raw)
		}
	}
	return strings.Contains(pos, s)
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
