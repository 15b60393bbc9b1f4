package integration

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestOutOfOrderAcksCheckpointPrefix runs the binary against an in-process
// Kafka (kfake: the one place we use a fake, because a real broker cannot
// be told to hold back one partition's acknowledgements) with three
// brokers, one partition leader each. Produce requests to one broker are
// stalled with SleepControl while transactions, one row each, are
// committed (after one acknowledged row): rows on the other partitions are acknowledged out of order,
// after the first stalled one. Then the binary is SIGKILLed. The checkpoint
// must be exactly the contiguous acknowledged prefix: at or after the end of
// the last transaction before the first stalled row, and before that row's
// transaction ends.
func TestOutOfOrderAcksCheckpointPrefix(t *testing.T) {
	e := newEnv(t, "ooo")
	useMoto(t)
	e.exec(`CREATE TABLE ledger (k int PRIMARY KEY, v text)`)
	topic := e.prefix + ".public.ledger"

	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, topic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// kfake picks leaders at random; give each partition its own broker so
	// that stalling one leaves the other two acknowledging.
	for part := int32(0); part < 3; part++ {
		if err := c.MoveTopicPartition(topic, part, part); err != nil {
			t.Fatal(err)
		}
	}
	stalledNode := c.LeaderFor(topic, 0)
	var stalling atomic.Bool
	release := make(chan struct{})
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if stalling.Load() && c.CurrentNode() == stalledNode {
			c.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	defer close(release)

	table := testTableName("ooo")
	cfgPath := e.writeDynamoConfig(table, "")
	cfg, _ := os.ReadFile(cfgPath)
	cfg = []byte(strings.Replace(string(cfg), kafkaAddr, strings.Join(c.ListenAddrs(), ","), 1))
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}

	p := e.start("run", "--config", cfgPath)
	p.waitFor(t, 60*time.Second, "the first checkpoint", func() bool { return checkpointLSN(t, table, e.name) > 0 })

	// A logical slot of our own tells each transaction's end LSN, the very
	// value pgoutput reports and the pipeline checkpoints.
	probe := "probe_" + e.name
	e.exec(`SELECT pg_create_logical_replication_slot($1, 'test_decoding')`, probe)
	e.exec(`INSERT INTO ledger VALUES (1, 'x')`)
	p.waitFor(t, 30*time.Second, "key 1", func() bool { return keysIn(t, c.ListenAddrs(), topic)[1] })
	stalling.Store(true)
	const n = 30
	for k := 2; k <= n; k++ {
		e.exec(`INSERT INTO ledger VALUES ($1, 'x')`, k)
	}
	ends := commitEnds(t, e, probe) // key → end LSN of its transaction

	// Wait until every unstalled row is acknowledged and checkpointed.
	var acked map[int]bool
	prev := -1
	p.waitFor(t, 30*time.Second, "the unstalled partitions", func() bool {
		acked = keysIn(t, c.ListenAddrs(), topic)
		stable := len(acked) > 1 && len(acked) == prev
		prev = len(acked)
		time.Sleep(500 * time.Millisecond)
		return stable
	})
	first := 0
	for k := 1; k <= n; k++ {
		if !acked[k] {
			first = k
			break
		}
	}
	later := 0
	for k := first + 1; k <= n; k++ {
		if acked[k] {
			later++
		}
	}
	if first < 2 || later == 0 {
		t.Fatalf("the stalled partition got key %d first and %d later keys were acknowledged: nothing out of order to check", first, later)
	}
	time.Sleep(2 * time.Second) // two checkpoint intervals
	p.kill()

	cp := checkpointLSN(t, table, e.name)
	lo, hi := ends[first-1], ends[first]
	t.Logf("stalled broker %d: first unacknowledged key %d, %d later keys acknowledged out of order; checkpoint %s, prefix ends at %s, key %d's transaction at %s",
		stalledNode, first, later, pglogrepl.LSN(cp), pglogrepl.LSN(lo), first, pglogrepl.LSN(hi))
	if cp < lo {
		t.Errorf("checkpoint %s is behind the acknowledged prefix, which ends at %s", pglogrepl.LSN(cp), pglogrepl.LSN(lo))
	}
	if cp >= hi {
		t.Errorf("checkpoint %s passes the unacknowledged key %d (its transaction ends at %s)", pglogrepl.LSN(cp), first, pglogrepl.LSN(hi))
	}
}

var insertKey = regexp.MustCompile(`^table public\.ledger: INSERT: k\[integer\]:(\d+) `)

// commitEnds maps each inserted key to the end LSN of its transaction,
// from the test_decoding slot (its COMMIT rows carry the end of the commit
// record).
func commitEnds(t *testing.T, e *env, slot string) map[int]uint64 {
	t.Helper()
	rows, err := e.conn.Query(context.Background(), `SELECT lsn::text, xid::text, data FROM pg_logical_slot_peek_changes($1, NULL, NULL)`, slot)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	keys := map[string]int{}
	ends := map[int]uint64{}
	for rows.Next() {
		var lsn, xid, data string
		if err := rows.Scan(&lsn, &xid, &data); err != nil {
			t.Fatal(err)
		}
		if m := insertKey.FindStringSubmatch(data); m != nil {
			keys[xid], _ = strconv.Atoi(m[1])
		}
		if strings.HasPrefix(data, "COMMIT") {
			if k, ok := keys[xid]; ok {
				l, _ := pglogrepl.ParseLSN(lsn)
				ends[k] = uint64(l)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ends
}

// keysIn returns the ledger keys present in topic on the kfake cluster.
func keysIn(t *testing.T, addrs []string, topic string) map[int]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int64{}
	offsets := map[string]map[int32]kgo.Offset{topic: {}}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			want[o.Partition] = o.Offset
			offsets[topic][o.Partition] = kgo.NewOffset().AtStart()
		}
	})
	keys := map[int]bool{}
	if len(want) == 0 {
		return keys
	}
	cl.AddConsumePartitions(offsets)
	for len(want) > 0 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			var key struct{ Payload struct{ K int } }
			if json.Unmarshal(r.Key, &key) == nil {
				keys[key.Payload.K] = true
			}
			if r.Offset+1 >= want[r.Partition] {
				delete(want, r.Partition)
			}
		})
	}
	return keys
}
