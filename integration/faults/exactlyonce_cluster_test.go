package faults_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Exactly once across broker restarts, on the
// three-broker cluster of integration/services/kafka-cluster.sh: a
// PostgreSQL pipeline with delivery exactly_once streams while a writer
// commits random changes, and brokers die and come back under it — the
// transaction coordinator's broker and the data partition's leader
// SIGKILLed, then a rolling restart of all three. A read_committed
// consumer must see every committed change exactly once (0 gaps, 0
// duplicates). A pipeline that exits is restarted as ECS restarts a task
// (supervisor); the table says whether it recovered by itself, and the
// counts prove that a restart lost and repeated nothing.

type eosClusterFault struct {
	name   string
	short  bool // part of the short form (`make test`)
	inject func(f *faultRun, txnID string)
}

var eosClusterFaults = []eosClusterFault{
	{"coordinator and partition leader SIGKILLed, restarted", true, func(f *faultRun, txnID string) {
		c := txnCoordinator(f, txnID)
		kafkaCluster(f.t, "kill", fmt.Sprint(c))
		time.Sleep(5 * time.Second)
		kafkaCluster(f.t, "start", fmt.Sprint(c))
		f.note("killed node %d (transaction coordinator)", c)
		f.awaitISR()
		if l := f.leader(); l != c {
			time.Sleep(2 * time.Second) // writing on, through the new coordinator
			kafkaCluster(f.t, "kill", fmt.Sprint(l))
			time.Sleep(5 * time.Second)
			kafkaCluster(f.t, "start", fmt.Sprint(l))
			f.note("killed node %d (leader of partition 0)", l)
		} else {
			f.note("node %d also led partition 0", c)
		}
	}},
	{"rolling restart of all three brokers", false, func(f *faultRun, _ string) {
		for n := 1; n <= 3; n++ {
			kafkaCluster(f.t, "stop", fmt.Sprint(n))
			time.Sleep(2 * time.Second)
			kafkaCluster(f.t, "start", fmt.Sprint(n))
			f.awaitISR()
		}
	}},
}

// TestExactlyOnceBrokerFaults runs the faults of eosClusterFaults: the
// short form (`make test`) the SIGKILLs, KAFKA_FAULTS=full or all (`make
// faults`) the rolling restart too. Run it only under `flock
// /tmp/cluster.lock` beside other cluster tests.
func TestExactlyOnceBrokerFaults(t *testing.T) {
	startKafkaCluster(t)
	all := os.Getenv("KAFKA_FAULTS") == "full" || os.Getenv("KAFKA_FAULTS") == "all"
	var results []faultResult
	for _, fault := range eosClusterFaults {
		if !all && !fault.short {
			continue
		}
		t.Run(fault.name, func(t *testing.T) {
			results = append(results, runEOSClusterFault(t, fault))
		})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nexactly_once, read_committed:\n%-55s %8s %5s %5s %9s %10s  %s\n", "fault", "changes", "gaps", "dups", "reversals", "stall", "recovered by itself?")
	for _, r := range results {
		rec := "yes"
		if len(r.exits) > 0 {
			rec = fmt.Sprintf("no: %d exit(s), restarted; %s", len(r.exits), strings.Join(r.exits, "; "))
		}
		fmt.Fprintf(&b, "%-55s %8d %5d %5d %9d %10s  %s\n", r.name, r.changes, r.gaps, r.dups, r.reversals, r.stall.Round(100*time.Millisecond), rec)
		for _, n := range r.notes {
			fmt.Fprintf(&b, "%-55s   %s\n", "", n)
		}
	}
	t.Log(b.String())
}

func runEOSClusterFault(t *testing.T, fault eosClusterFault) faultResult {
	e := itest.NewEnv(t, "kceos")
	e.Exec(`CREATE TABLE ledger (k int PRIMARY KEY, seq bigint NOT NULL, pad text);
ALTER TABLE ledger REPLICA IDENTITY FULL;
INSERT INTO ledger SELECT g, g, repeat('x', 100) FROM generate_series(1, 200) g`)
	f := &faultRun{t: t, e: e, topic: e.Prefix + ".public.ledger", adm: clusterAdmin(t), w: itest.NewLedgerWriter(200),
		excuse: func(int) bool { return false }}
	cfg := e.ClusterConfig("")
	appendFile(t, cfg, itest.ExactlyOnceLines)
	txnID := e.Prefix + ".tributary-" + e.Name
	offsets := e.Prefix + ".tributary-offsets"

	f.sup = supervise(e, "run", "--config", cfg)
	itest.WaitFor(t, 120*time.Second, "the backfill committed on the cluster", func() bool {
		return len(readCommittedCluster(t, f.topic)) >= 200
	})
	checkTransactionReplication(t, f, offsets)

	ctx, stopWriting := context.WithCancel(context.Background())
	written := make(chan error, 1)
	defer stopWriting()
	go func() { written <- f.w.Stream(ctx, e.PGURL()) }()
	time.Sleep(2 * time.Second)
	faultAt := time.Now()
	fault.inject(f, txnID)
	time.Sleep(3 * time.Second) // writing on after the fault healed
	stopWriting()
	stoppedAt := time.Now()
	if err := <-written; err != nil {
		t.Fatal(err)
	}

	// Catch up: every committed change read read_committed, or 180 s.
	for deadline := time.Now().Add(180 * time.Second); missingChanges(readCommittedCluster(t, f.topic), f.w) > 0; time.Sleep(2 * time.Second) {
		if time.Now().After(deadline) {
			break // verifyMessages names the gaps
		}
	}
	if code := f.sup.Stop(t); code != 0 {
		t.Errorf("exit %d after SIGTERM", code)
	}
	recs := readCommittedCluster(t, f.topic)
	msgs := make([]itest.Message, len(recs))
	appended := make([]time.Time, len(recs))
	for i, r := range recs {
		msgs[i], appended[i] = r.Message, r.appended
	}
	v := itest.VerifyLedgerMessages(t, msgs, f.w)
	res := faultResult{name: fault.name, changes: v.Changes, gaps: v.Gaps, dups: v.Dups, reversals: v.Reversals,
		stall: longestStall(msgs, appended, faultAt, stoppedAt), exits: f.sup.exitLog(), notes: f.notes}
	t.Logf("%s: %d committed changes, read_committed %s, longest stall %s, exits %v, %v",
		fault.name, res.changes, v, res.stall, res.exits, res.notes)
	if res.gaps > 0 || res.dups > 0 {
		t.Errorf("exactly_once: %d gaps and %d duplicates, want 0 and 0", res.gaps, res.dups)
	}
	return res
}

// txnCoordinator is the node coordinating the transactional id.
func txnCoordinator(f *faultRun, txnID string) int {
	f.t.Helper()
	var n int
	itest.WaitFor(f.t, 60*time.Second, "the transaction coordinator of "+txnID, func() bool {
		r, ok := f.adm.FindTxnCoordinators(context.Background(), txnID)[txnID]
		if !ok || r.Err != nil || r.NodeID < 1 {
			return false
		}
		n = int(r.NodeID)
		return true
	})
	return n
}

// checkTransactionReplication fails unless the offsets topic and
// __transaction_state survive one broker down with writes going on:
// replication factor 3 and min.insync.replicas 2, as the cluster's
// kafka-cluster.sh sets (transaction.state.log.*).
func checkTransactionReplication(t *testing.T, f *faultRun, offsets string) {
	t.Helper()
	ctx := context.Background()
	topics := []string{offsets, "__transaction_state"}
	md, err := f.adm.Metadata(ctx, topics...)
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := f.adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range topics {
		parts := md.Topics[topic].Partitions
		if len(parts) == 0 {
			t.Fatalf("%s: no partitions in the cluster's metadata", topic)
		}
		for _, p := range parts {
			if len(p.Replicas) != 3 {
				t.Errorf("%s partition %d has replicas %v, want 3", topic, p.Partition, p.Replicas)
			}
		}
		rc, err := cfgs.On(topic, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rc.Configs {
			if c.Key == "min.insync.replicas" && (c.Value == nil || *c.Value != "2") {
				t.Errorf("%s: min.insync.replicas %v, want 2", topic, c.MaybeValue())
			}
		}
	}
}

// committedRecord is a record read read_committed from the cluster, with
// the broker's append time (LogAppendTime) that measures stalls.
type committedRecord struct {
	itest.Message
	appended time.Time
}

// readCommittedCluster reads topic on the cluster from its start to its
// end, read_committed.
func readCommittedCluster(t *testing.T, topic string) []committedRecord {
	t.Helper()
	var out []committedRecord
	opts := []kgo.Opt{kgo.SeedBrokers(strings.Split(itest.ClusterBootstrap, ",")...),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(), kgo.RetryTimeout(30 * time.Second)}
	itest.EachRecordWithin(t, topic, 120*time.Second, opts, func(r *kgo.Record, m itest.Message) {
		out = append(out, committedRecord{Message: m, appended: r.Timestamp})
	})
	return out
}

// missingChanges counts the changes w committed that recs lack (quietly:
// the catch-up loop asks again and again).
func missingChanges(recs []committedRecord, w *itest.LedgerWriter) int {
	got := map[itest.LedgerChange]bool{}
	for _, r := range recs {
		if c, ok := itest.ChangeOf(r.Message); ok {
			got[c] = true
		}
	}
	n := 0
	for _, c := range w.Committed() {
		if !got[c] {
			n++
		}
	}
	return n
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
