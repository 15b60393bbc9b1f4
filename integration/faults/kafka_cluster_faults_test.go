package faults_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The multi-broker fault suite: a PostgreSQL pipeline streams
// to the three-broker cluster while a writer commits random changes, and
// each fault strikes the cluster in the middle. Per fault it measures
//
//   - gaps: committed source changes that never reached the topic (must
//     be 0). For the two faults that delete data on purpose, data the user
//     deleted from Kafka is not a gap:
//   - topic deleted and recreated: a change is excused (counted apart, as
//     "deleted by the user") only if it was committed to the source after
//     the tail had read everything committed before the deletion began
//     and before DeleteTopics returned (+0.5 s for the brokers to apply
//     it): only such a change can have been acknowledged by the deleted
//     topic and deleted before anyone read it. Every change committed
//     before that window was read from the old topic; every change
//     committed after it must be in the recreated topic.
//   - retention: a missing change is excused only while the tail saw that
//     many offsets disappear (deleted by retention) before reading them;
//     retention.ms is far above the tail's lag, so this is 0 in practice.
//   - duplicates: records whose tributary-event-id was already read;
//   - the longest stall: the longest time, from the fault on until the
//     writer stopped, in which the cluster appended nothing to one of the
//     topic's partitions (broker append times, LogAppendTime, so the
//     reader's own lag does not count);
//   - whether the pipeline recovered by itself or exited; an exit is
//     restarted as ECS restarts a task, and the gap count then proves the
//     restart lost nothing.
//
// The short form (`make test`) runs a few faults with short durations;
// KAFKA_FAULTS=full (`make faults`) runs every fault, longer;
// KAFKA_FAULTS=all runs every fault with the short durations.

type clusterFault struct {
	name   string
	short  bool // part of the short form
	inject func(f *faultRun)
	noExit bool // the pipeline must ride the fault out without exiting
}

// faultRun is one fault's world.
type faultRun struct {
	t        *testing.T
	e        *itest.Env
	topic    string
	adm      *kadm.Client
	sup      *supervisor
	tl       *topicTail
	old      []itest.Message // what the tail read from a deleted topic
	oldTimes []time.Time     // and their append times
	w        *itest.LedgerWriter
	full     bool
	excuse   func(i int) bool // a missing change i (index in w.committed()) is not a gap
	excusedN int64            // at most this many changes are excused
	notes    []string
}

// scale picks the short or the full duration.
func (f *faultRun) scale(short, full time.Duration) time.Duration {
	if f.full {
		return full
	}
	return short
}

func (f *faultRun) note(format string, args ...any) {
	f.notes = append(f.notes, fmt.Sprintf(format, args...))
}

// leader is the node that leads partition 0 of the topic.
func (f *faultRun) leader() int {
	f.t.Helper()
	var n int
	itest.WaitFor(f.t, 60*time.Second, "a leader of partition 0", func() bool {
		md, err := f.adm.Metadata(context.Background(), f.topic)
		if err != nil {
			return false
		}
		p, ok := md.Topics[f.topic].Partitions[0]
		if !ok || p.Leader < 1 {
			return false
		}
		n = int(p.Leader)
		return true
	})
	return n
}

// awaitISR waits until every partition of the topic has all three replicas
// in sync (what MSK waits for before patching the next broker).
func (f *faultRun) awaitISR() {
	f.t.Helper()
	itest.WaitFor(f.t, 180*time.Second, "all replicas in sync", func() bool {
		md, err := f.adm.Metadata(context.Background(), f.topic)
		if err != nil || len(md.Topics[f.topic].Partitions) == 0 {
			return false
		}
		for _, p := range md.Topics[f.topic].Partitions {
			if len(p.ISR) < 3 {
				return false
			}
		}
		return true
	})
}

func otherNode(n int) int { return n%3 + 1 }

var clusterFaults = []clusterFault{
	{"partition leader SIGKILLed, restarted", true, func(f *faultRun) {
		n := f.leader()
		kafkaCluster(f.t, "kill", fmt.Sprint(n))
		time.Sleep(f.scale(5*time.Second, 20*time.Second))
		kafkaCluster(f.t, "start", fmt.Sprint(n))
		f.note("killed node %d", n)
	}, false},
	{"rolling restart of all three brokers", false, func(f *faultRun) {
		for n := 1; n <= 3; n++ {
			kafkaCluster(f.t, "stop", fmt.Sprint(n))
			time.Sleep(f.scale(2*time.Second, 10*time.Second))
			kafkaCluster(f.t, "start", fmt.Sprint(n))
			f.awaitISR()
		}
	}, false},
	{"broker frozen (SIGSTOP), thawed", false, func(f *faultRun) {
		n := f.leader()
		f.t.Cleanup(func() { exec2("services/kafka-cluster.sh", "thaw", fmt.Sprint(n)) })
		kafkaCluster(f.t, "freeze", fmt.Sprint(n))
		// Longer than broker.session.timeout.ms (9 s): the controllers fence it.
		time.Sleep(f.scale(12*time.Second, 30*time.Second))
		kafkaCluster(f.t, "thaw", fmt.Sprint(n))
		kafkaCluster(f.t, "start", fmt.Sprint(n))
		f.note("froze node %d", n)
	}, false},
	{"broker cut off from the client", true, func(f *faultRun) {
		n := f.leader()
		f.t.Cleanup(func() { exec2("services/kafka-cluster.sh", "uncut", fmt.Sprint(n)) })
		kafkaCluster(f.t, "cut", fmt.Sprint(n))
		// A real partition: the packets between every client and the
		// node's client ports are dropped both ways, the pipeline's open
		// connections included, while the brokers still reach each other
		// (replication and the controllers have listeners of their own),
		// so the cluster keeps the node as leader and the pipeline must
		// ride the cut out.
		time.Sleep(f.scale(8*time.Second, 30*time.Second))
		still := f.leader() == n
		kafkaCluster(f.t, "uncut", fmt.Sprint(n))
		f.note("cut off node %d; still the leader of partition 0 at the end of the cut: %v", n, still)
		if !still {
			f.t.Errorf("node %d lost the leadership during the cut: the cluster saw the cut, not only the client", n)
		}
	}, false},
	{"two brokers down", true, func(f *faultRun) {
		a := f.leader()
		b := otherNode(a)
		kafkaCluster(f.t, "kill", fmt.Sprint(a))
		kafkaCluster(f.t, "kill", fmt.Sprint(b))
		// min.insync.replicas=2 cannot be met (and the controllers have
		// no quorum): writes must stall, not fail, and resume once the
		// brokers are back, without the task exiting.
		time.Sleep(f.scale(10*time.Second, 60*time.Second))
		restart := time.Now()
		kafkaCluster(f.t, "start")
		f.note("killed nodes %d and %d; restarting them took %s", a, b, time.Since(restart).Round(100*time.Millisecond))
	}, true},
	{"topic deleted and recreated", true, func(f *faultRun) {
		n0 := len(f.w.Committed())
		f.awaitRead(n0)
		f.tl.Stop()
		f.old, f.oldTimes, _ = f.tl.snapshot()
		ctx := context.Background()
		if _, err := f.adm.DeleteTopic(ctx, f.topic); err != nil {
			f.t.Fatalf("delete %s: %v", f.topic, err)
		}
		time.Sleep(500 * time.Millisecond)
		n1 := len(f.w.Committed())
		f.excuse = func(i int) bool { return i >= n0 && i < n1 }
		f.excusedN = int64(n1 - n0)
		time.Sleep(f.scale(2*time.Second, 10*time.Second)) // an operator recreates it
		itest.WaitFor(f.t, 60*time.Second, "the topic recreated", func() bool {
			// The pipeline may have created it first.
			_, err := f.adm.CreateTopic(ctx, 3, -1, nil, f.topic)
			return err == nil || errors.Is(err, kerr.TopicAlreadyExists)
		})
		f.tl = startTail(f.t, f.topic)
		f.note("%d changes committed while the topic was being deleted", n1-n0)
	}, true},
	{"retention deleting old segments", false, func(f *faultRun) {
		// The topic was created with retention.ms/segment.ms (see below).
		time.Sleep(f.scale(15*time.Second, 40*time.Second))
		starts, err := f.adm.ListStartOffsets(context.Background(), f.topic)
		if err != nil {
			f.t.Fatal(err)
		}
		var deleted int64
		starts.Each(func(o kadm.ListedOffset) { deleted += o.Offset })
		if deleted == 0 {
			f.t.Errorf("retention deleted nothing: the fault did not happen")
		}
		f.note("%d records deleted by retention", deleted)
	}, false},
	{"partitions added while streaming", true, func(f *faultRun) {
		if _, err := f.adm.CreatePartitions(context.Background(), 3, f.topic); err != nil {
			f.t.Fatal(err)
		}
		time.Sleep(f.scale(5*time.Second, 20*time.Second))
	}, false},
}

// retentionTopic is how the retention fault's topic is created before the
// pipeline starts: segments roll every second and are deleted 8 s after
// their last record, far above the tail's lag.
var retentionTopic = map[string]*string{"retention.ms": ptr("8000"), "segment.ms": ptr("1000")}

func ptr(s string) *string { return &s }

// stallLine is the log line of a retry from the checkpoint while the
// cluster cannot accept writes (cmd/tributary/stall.go).
const stallLine = "Kafka cannot accept writes right now"

// exec2 runs a command, ignoring its result (cleanups).
func exec2(name string, args ...string) { _ = exec.Command(name, args...).Run() }

// faultResult is one row of the table.
type faultResult struct {
	name                         string
	changes, gaps, dups, excused int
	reversals                    int
	stall                        time.Duration
	resumed                      time.Duration // from the end of the fault until every partition was appended to again
	exits                        []string
	notes                        []string
}

func TestKafkaClusterFaults(t *testing.T) {
	startKafkaCluster(t)
	// KAFKA_FAULTS=all: every fault, with the short form's durations.
	full, all := os.Getenv("KAFKA_FAULTS") == "full", os.Getenv("KAFKA_FAULTS") == "all"
	var results []faultResult
	for _, fault := range clusterFaults {
		if !full && !all && !fault.short {
			continue
		}
		t.Run(fault.name, func(t *testing.T) {
			results = append(results, runClusterFault(t, fault, full))
		})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-40s %8s %5s %5s %8s %9s %10s %8s  %s\n", "fault", "changes", "gaps", "dups", "excused", "reversals", "stall", "resumed", "recovered by itself?")
	for _, r := range results {
		rec := "yes"
		if len(r.exits) > 0 {
			rec = fmt.Sprintf("no: %d exit(s), restarted; %s", len(r.exits), strings.Join(r.exits, "; "))
		}
		fmt.Fprintf(&b, "%-40s %8d %5d %5d %8d %9d %10s %8s  %s\n", r.name, r.changes, r.gaps, r.dups, r.excused, r.reversals, r.stall.Round(100*time.Millisecond), r.resumed.Round(100*time.Millisecond), rec)
		for _, n := range r.notes {
			fmt.Fprintf(&b, "%-40s   %s\n", "", n)
		}
	}
	t.Log(b.String())
}

func runClusterFault(t *testing.T, fault clusterFault, full bool) faultResult {
	e := itest.NewEnv(t, "kcf")
	e.Exec(`CREATE TABLE ledger (k int PRIMARY KEY, seq bigint NOT NULL, pad text);
ALTER TABLE ledger REPLICA IDENTITY FULL;
INSERT INTO ledger SELECT g, g, repeat('x', 100) FROM generate_series(1, 200) g`)
	f := &faultRun{t: t, e: e, topic: e.Prefix + ".public.ledger", adm: clusterAdmin(t), w: itest.NewLedgerWriter(200), full: full,
		excuse: func(int) bool { return false }}
	if strings.HasPrefix(fault.name, "retention") {
		if _, err := f.adm.CreateTopic(context.Background(), 3, -1, retentionTopic, f.topic); err != nil {
			t.Fatal(err)
		}
	}
	f.sup = supervise(e, "run", "--config", e.ClusterConfig(""))
	f.tl = startTail(t, f.topic)
	itest.WaitFor(t, 120*time.Second, "the backfill on the cluster", func() bool { return f.tl.count() >= 200 })

	ctx, stopWriting := context.WithCancel(context.Background())
	written := make(chan error, 1)
	defer stopWriting()
	go func() { written <- f.w.Stream(ctx, e.PGURL()) }()
	time.Sleep(2 * time.Second)
	faultAt := time.Now()
	fault.inject(f)
	healedAt := time.Now()
	time.Sleep(f.scale(3*time.Second, 10*time.Second)) // writing on after the fault healed
	stopWriting()
	stoppedAt := time.Now()
	if err := <-written; err != nil {
		t.Fatal(err)
	}

	// Catch up: wait until every change that must be there was read.
	n := len(f.w.Committed())
	deadline := time.Now().Add(180 * time.Second)
	var res faultResult
	for {
		res = f.tally()
		if res.gaps == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if code := f.sup.Stop(t); code != 0 {
		t.Errorf("exit %d after SIGTERM", code)
	}
	f.tl.Stop()
	res = f.tally()
	msgs, appended, _ := f.tl.snapshot()
	res.stall = longestStall(append(f.old, msgs...), append(f.oldTimes, appended...), faultAt, stoppedAt)
	res.resumed = resumedAfter(msgs, appended, healedAt)
	if dir := os.Getenv("KAFKA_FAULTS_OUT"); dir != "" { // the pipeline's log, for a closer look
		os.WriteFile(filepath.Join(dir, strings.ReplaceAll(fault.name, " ", "_")+".log"), []byte(f.sup.output()), 0o644)
	}
	res.name, res.exits, res.notes = fault.name, f.sup.exitLog(), f.notes
	if n := f.sup.count(stallLine); n > 0 {
		res.notes = append(res.notes, fmt.Sprintf("%d retries from the checkpoint while Kafka could not accept writes; first: %s", n, f.sup.first(stallLine)))
	}
	t.Logf("%s: %d committed changes, %d gaps, %d duplicates, %d excused, %d reversals, longest stall %s, every partition appended to again %s after the fault ended, exits %v, %v",
		fault.name, n, res.gaps, res.dups, res.excused, res.reversals, res.stall, res.resumed, res.exits, f.notes)
	if res.gaps > 0 {
		t.Errorf("%d gaps", res.gaps)
	}
	if fault.noExit && len(res.exits) > 0 {
		t.Errorf("the pipeline exited during %q, want it to stall and resume by itself: %v", fault.name, res.exits)
	}
	return res
}

// tally compares what the tail read (and, after a deleted topic, what it
// read before) with what the writer committed.
func (f *faultRun) tally() faultResult {
	msgs, _, skipped := f.tl.snapshot()
	msgs = append(append([]itest.Message(nil), f.old...), msgs...)
	want := f.w.Committed()
	res := faultResult{changes: len(want)}
	seen := map[string]bool{}
	got := map[itest.LedgerChange]bool{}
	lastSeq := map[int64]int64{}
	for _, m := range msgs {
		id := m.Headers["tributary-event-id"]
		if seen[id] {
			res.dups++
			continue
		}
		seen[id] = true
		c, ok := itest.ChangeOf(m)
		if !ok {
			continue
		}
		k, seq := c.K, c.Seq
		got[c] = true
		if seq < lastSeq[k] {
			res.reversals++
		}
		lastSeq[k] = max(lastSeq[k], seq)
	}
	budget := f.excusedN + skipped
	for i, c := range want {
		if got[c] {
			continue
		}
		if (f.excuse(i) || skipped > 0) && int64(res.excused) < budget {
			res.excused++
			continue
		}
		res.gaps++
	}
	return res
}

// awaitRead waits until the tail has read the first n committed changes.
func (f *faultRun) awaitRead(n int) {
	f.t.Helper()
	want := f.w.Committed()[:n]
	itest.WaitFor(f.t, 120*time.Second, "the tail to read what was committed", func() bool {
		msgs, _, _ := f.tl.snapshot()
		got := map[itest.LedgerChange]bool{}
		for _, m := range msgs {
			if c, ok := itest.ChangeOf(m); ok {
				got[c] = true
			}
		}
		for _, c := range want {
			if !got[c] {
				return false
			}
		}
		return true
	})
}

// longestStall is the longest time within [from, to] in which some
// partition had nothing appended: the topic as a whole keeps growing while
// one partition waits for its leader, and the keys of that partition wait
// with it. A partition counts from from if it had records before, else
// (a partition added by the test) from its first record.
func longestStall(msgs []itest.Message, appended []time.Time, from, to time.Time) time.Duration {
	byPart := map[int32][]time.Time{}
	before := map[int32]bool{}
	for i, a := range appended {
		p := msgs[i].Partition
		switch {
		case a.Before(from):
			before[p] = true
		case !a.After(to):
			byPart[p] = append(byPart[p], a)
		}
	}
	var longest time.Duration
	for p := range before {
		if len(byPart[p]) == 0 { // nothing appended from the fault until the end
			longest = to.Sub(from)
		}
	}
	for p, in := range byPart {
		slices.SortFunc(in, func(a, b time.Time) int { return a.Compare(b) })
		prev := in[0]
		if before[p] {
			prev = from
		}
		for _, a := range append(in, to) {
			longest = max(longest, a.Sub(prev))
			prev = a
		}
	}
	return longest
}

// resumedAfter is how long after healed every partition that had records
// appended to it before healed was appended to again: how long the
// pipeline took to resume once the fault was over.
func resumedAfter(msgs []itest.Message, appended []time.Time, healed time.Time) time.Duration {
	before := map[int32]bool{}
	first := map[int32]time.Time{}
	for i, a := range appended {
		p := msgs[i].Partition
		if a.Before(healed) {
			before[p] = true
		} else if f, ok := first[p]; !ok || a.Before(f) {
			first[p] = a
		}
	}
	var longest time.Duration
	for p := range before {
		if f, ok := first[p]; ok {
			longest = max(longest, f.Sub(healed))
		}
	}
	return longest
}
