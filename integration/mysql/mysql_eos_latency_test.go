package mysql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLExactlyOnceLongTransactionLatency: with delivery exactly_once,
// a caught-up pipeline makes a transaction whose statements ran seconds
// before its COMMIT visible to read_committed consumers about
// transactions.max_interval (50 ms) after the commit, as
// docs/exactly-once.md says. MariaDB dates each rows event to its
// statement, and the pipeline took those times for the source's lag: it
// counted as draining a backlog, whose transactions commit once open 1 s
// (500 ms before), so every such transaction waited that long (a review,
// 1,005 ms). Each transaction's latency here has that wait as its floor,
// so the fastest of three says whether it is there, whatever the load.
func TestMySQLExactlyOnceLongTransactionLatency(t *testing.T) {
	e := itest.NewMyEnv(t, "myeoslong")
	e.Exec("CREATE TABLE lat (id INT PRIMARY KEY, v INT)")
	cfg := e.WriteConfig("")
	itest.AppendConfig(t, cfg, itest.ExactlyOnceLines)
	topic := e.Prefix + "." + e.DB + ".lat"
	p := e.Start("run", "--config", cfg)
	defer p.Stop(t)

	seen := watchCommitted(t, topic)
	e.Exec("INSERT INTO lat VALUES (0, 0)")
	p.WaitFor(t, 120*time.Second, "the first row read_committed", func() bool { _, ok := seen.at(0); return ok })

	fastest := time.Hour
	for id := 1; id <= 3; id++ {
		e.Exec("BEGIN")
		e.Exec(fmt.Sprintf("INSERT INTO lat VALUES (%d, %d)", id, id))
		e.Exec("DO SLEEP(2.5)")
		e.Exec("COMMIT")
		committed := time.Now()
		var at time.Time
		p.WaitFor(t, 30*time.Second, fmt.Sprintf("row %d read_committed", id), func() bool {
			var ok bool
			at, ok = seen.at(id)
			return ok
		})
		lat := at.Sub(committed)
		t.Logf("row %d: visible to read_committed %s after its COMMIT returned (its INSERT ran 2.5 s before)", id, lat.Round(time.Millisecond))
		fastest = min(fastest, lat)
	}
	// Caught up: max_interval (50 ms) plus one commit; the backlog's
	// interval puts a floor of 500 ms (1 s since 020eda6) under every one.
	if fastest >= 450*time.Millisecond {
		t.Fatalf("the fastest of three long transactions became visible %s after its commit; want about max_interval (50 ms) plus one commit: the caught-up pipeline took itself for one draining a backlog", fastest)
	}
}

// committedTimes is when a read_committed consumer first received each id.
type committedTimes struct {
	mu    sync.Mutex
	first map[int]time.Time
}

func (c *committedTimes) at(id int) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.first[id]
	return t, ok
}

// watchCommitted consumes topic read_committed until the test ends and
// notes when each row's id (after.id) arrived.
func watchCommitted(t *testing.T, topic string) *committedTimes {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(itest.KafkaAddr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.AllowAutoTopicCreation(), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done; cl.Close() })
	c := &committedTimes{first: map[int]time.Time{}}
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			now := time.Now()
			fs.EachRecord(func(r *kgo.Record) {
				var v struct {
					Payload struct {
						After *struct {
							ID int `json:"id"`
						} `json:"after"`
					} `json:"payload"`
				}
				if json.Unmarshal(r.Value, &v) != nil || v.Payload.After == nil {
					return
				}
				c.mu.Lock()
				if _, ok := c.first[v.Payload.After.ID]; !ok {
					c.first[v.Payload.After.ID] = now
				}
				c.mu.Unlock()
			})
		}
	}()
	return c
}
