package kafka_test

// A review check that held (passes on the reviewed code); it runs only
// with TRIBUTARY_REVIEW_HELD=1 (reviewHeld).
//
// The topic's message limit (pkg/kafka/messagesize.go classify,
// pkg/pipeline/exactlyonce.go commitTransaction) under exactly_once:
// TestReviewEOSTopicLimitLowered lowers the topic's max.message.bytes to
// 20,000 while an exactly-once pipeline runs (as TestKafkaTopicLimitLowered
// does at least once, with the same rows). The refused batches must abort
// their transaction and be sent again: a read_committed consumer reads
// every small row's insert once and each update once, after its insert,
// and only the three 30 KB rows are skipped.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

func TestReviewEOSTopicLimitLowered(t *testing.T) {
	itest.ReviewHeld(t)
	e := itest.NewEnv(t, "rveoslim")
	topic := e.Prefix + ".public.docs"
	createTopicConfig(t, topic, 3, 1<<20)
	e.Exec(`CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL)`)
	e.Exec(`ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL`)
	e.Exec(`INSERT INTO docs VALUES (0, 'first')`)
	cfg := e.WritePipeline(itest.PipelineConfig{Checkpoint: "  path: " + e.Dir + "/checkpoints\n" + itest.ExactlyOnceLines})
	p := e.Start("run", "--config", cfg)
	itest.WaitOrDump(t, p, 60*time.Second, "row 0", func() bool { return itest.TopicEnd(topic) >= 1 })
	setTopicLimit(t, topic, lowLimit)
	insertLimitRows(t, e)

	type counts struct{ c, u, r int }
	var per map[int]*counts
	var order map[int][]string
	read := func() {
		per, order = map[int]*counts{}, map[int][]string{}
		if itest.TopicEnd(topic) == 0 {
			return
		}
		for _, m := range itest.ReadCommitted(t, topic) {
			id, _ := strconv.Atoi(fmt.Sprint(m.Key["payload"].(map[string]any)["id"]))
			if per[id] == nil {
				per[id] = &counts{}
			}
			switch op := m.Headers["tributary-op"]; op {
			case "c":
				per[id].c++
			case "u":
				per[id].u++
			case "r":
				per[id].r++
			}
			order[id] = append(order[id], m.Headers["tributary-op"])
		}
	}
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) && !p.Exited() {
		read()
		if len(per) >= smallRows-len(bigRows)+1 && per[1] != nil && per[1].u > 0 {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	if !strings.Contains(p.Out.String(), "the limit was lowered") {
		t.Errorf("no stall for the lowered limit in the log: the scenario did not happen")
	}
	read()
	var missing, twice, misordered []int
	for id := 1; id <= smallRows; id++ {
		c := per[id]
		if slices.Contains(bigRows, id) {
			if c != nil {
				t.Errorf("row %d (30 KB) is on the topic: %v", id, order[id])
			}
			continue
		}
		switch {
		case c == nil || c.c == 0:
			missing = append(missing, id)
		case c.c > 1 || c.u > 1:
			twice = append(twice, id)
		case id <= updateRows && (c.u != 1 || order[id][len(order[id])-1] != "u"):
			misordered = append(misordered, id)
		}
	}
	var keys []int
	for _, s := range e.SkippedLines(t) {
		id, _ := strconv.Atoi(fmt.Sprint(s.PrimaryKey["id"]))
		keys = append(keys, id)
	}
	slices.Sort(keys)
	t.Logf("read_committed: %d rows missing (first %v), %d read twice (first %v), %d updates missing or misordered (first %v); row.skipped keys %v",
		len(missing), head(missing), len(twice), head(twice), len(misordered), head(misordered), head(keys))
	if len(missing)+len(twice)+len(misordered) > 0 || !slices.Equal(keys, bigRows) {
		out := p.Out.String()
		if len(out) > 4000 {
			out = out[len(out)-4000:]
		}
		t.Fatalf("exactly_once after the topic's limit was lowered: %d missing, %d duplicated, %d updates wrong; skipped %v, want %v; output (tail):\n%s",
			len(missing), len(twice), len(misordered), head(keys), bigRows, out)
	}
}
