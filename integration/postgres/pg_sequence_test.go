package postgres_test

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGSourceSequence: a streamed event's source.sequence is Debezium's
// "[\"<last commit LSN>\",\"<event LSN>\"]" (a string holding a JSON
// array of decimal LSNs), which consumers order and deduplicate by; it
// was null. The first element is where the previous transaction's commit
// ends: the same for every change of a transaction, after the previous
// transaction's changes and up to this one's, and known again after a
// restart. (Debezium's own values are compared by the differential
// oracle, integration/scenario/differential_test.go.)
func TestPGSourceSequence(t *testing.T) {
	e := itest.NewEnv(t, "pgseq")
	e.Exec(`CREATE TABLE t (k int PRIMARY KEY, v text)`)
	cfg := e.WritePipeline(itest.PipelineConfig{})
	topic := e.Prefix + ".public.t"
	p := e.Start("run", "--config", cfg)
	// After the (empty) backfill, so that every row is streamed: one
	// written during it could be read by it too, with no sequence.
	p.WaitFor(t, 60*time.Second, "the slot and the backfill", func() bool {
		return slotLSN(e) != 0 && strings.Contains(p.Out.String(), "backfill: table done")
	})
	e.Exec(`INSERT INTO t VALUES (1, 'a')`)
	e.Exec(`BEGIN; INSERT INTO t VALUES (2, 'b'); INSERT INTO t VALUES (3, 'c'); COMMIT`)
	e.Exec(`UPDATE t SET v = 'bb' WHERE k = 2`)
	// A transaction of an application's logical decoding message alone
	// comes last before the stop: Debezium's stream sees it (pgoutput's
	// messages option), and so the last commit after the restart is its
	// (TestPGSourceSequenceAgainstDebezium compares the values).
	afterUpdate := walLSN(e)
	e.Exec(`SELECT pg_logical_emit_message(true, 'not-tributary', 'x')`)
	itest.WaitOrDump(t, p, 60*time.Second, "4 events", func() bool { return itest.TopicEnd(topic) >= 4 })
	time.Sleep(time.Second) // the message's commit passed too
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}
	before := itest.TopicEnd(topic)
	p = e.Start("run", "--config", cfg)
	e.Exec(`DELETE FROM t WHERE k = 3`)
	itest.WaitOrDump(t, p, 60*time.Second, "the delete", func() bool { return itest.TopicEnd(topic) > before })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}

	type ev struct{ commit, lsn uint64 }
	var evs []ev
	for _, m := range itest.ReadTopic(t, topic) {
		src, _ := m.Payload()["source"].(map[string]any)
		seq, ok := src["sequence"].(string)
		if !ok {
			t.Fatalf("source.sequence is %v, want a string", src["sequence"])
		}
		var pair []*string
		if err := json.Unmarshal([]byte(seq), &pair); err != nil || len(pair) != 2 || pair[1] == nil {
			t.Fatalf("source.sequence %q: want an array of two decimal strings", seq)
		}
		lsn, _ := src["lsn"].(float64)
		var commit uint64
		var err1 error
		if pair[0] != nil {
			commit, err1 = strconv.ParseUint(*pair[0], 10, 64)
		}
		at, err2 := strconv.ParseUint(*pair[1], 10, 64)
		if err1 != nil || err2 != nil || at != uint64(lsn) {
			t.Fatalf("source.sequence %q: want decimal LSNs, the second the event's source.lsn %v", seq, src["lsn"])
		}
		evs = append(evs, ev{commit, at})
	}
	if len(evs) != 5 {
		t.Fatalf("%d events, want 5 (%d before the restart)", len(evs), before)
	}
	// The topic's partitions interleave: in WAL order.
	slices.SortFunc(evs, func(a, b ev) int { return cmp.Compare(a.lsn, b.lsn) })
	t.Logf("events (last commit, lsn): %v", evs)
	// Transactions: [0], [1 2], [3], [4] (after the restart). Before the
	// first commit a fresh slot streams, none is known: null, as Debezium
	// writes it.
	if evs[0].commit != 0 {
		t.Errorf("the first change of a fresh slot: last commit %d, want null", evs[0].commit)
	}
	if evs[1].commit != evs[2].commit {
		t.Errorf("the changes of one transaction have last commits %d and %d", evs[1].commit, evs[2].commit)
	}
	if c := evs[4].commit; c <= afterUpdate || c > evs[4].lsn {
		t.Errorf("after the restart: last commit %d is not the message's transaction's (after %d, where the WAL was after the update, and up to the delete at %d)", c, afterUpdate, evs[4].lsn)
	}
	for i, prev := range map[int]int{1: 0, 3: 2} {
		// The commit's end is where the next record starts: with nothing
		// written in between, the next change's own LSN.
		if c := evs[i].commit; c <= evs[prev].lsn || c > evs[i].lsn {
			t.Errorf("event %d (lsn %d): last commit %d is not after the previous transaction's change (lsn %d) and up to it", i, evs[i].lsn, c, evs[prev].lsn)
		}
	}
}
