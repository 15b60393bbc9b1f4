package itest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ExactlyOnceLines turn a pipeline config into an exactly-once one; they
// go after the checkpoint section (top level).
const ExactlyOnceLines = "delivery: exactly_once\n"

// CommittedMessage is a message read read_committed, with the producer
// epoch that tells transactions of different owners apart.
type CommittedMessage struct {
	Message
	Epoch int16
}

// ReadCommitted reads topic from the start to its end with isolation
// level read_committed. Transactional topics end with a marker, so control
// records are kept to see the end, and dropped from the result.
func ReadCommitted(t *testing.T, topic string) []CommittedMessage {
	t.Helper()
	var msgs []CommittedMessage
	EachRecordWithin(t, topic, 60*time.Second, []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()},
		func(r *kgo.Record, m Message) {
			msgs = append(msgs, CommittedMessage{Message: m, Epoch: r.ProducerEpoch})
		})
	return msgs
}

// AwaitSentinelCommitted is awaitSentinel for a transactional topic.
func (e *Env) AwaitSentinelCommitted(p *Proc, id int) {
	e.T.Helper()
	e.Exec(`INSERT INTO sentinel VALUES ($1)`, id)
	topic := e.Prefix + ".public.sentinel"
	p.WaitFor(e.T, 120*time.Second, fmt.Sprintf("sentinel row %d committed", id), func() bool {
		if TopicEnd(topic) == 0 {
			return false
		}
		for _, m := range ReadCommitted(e.T, topic) {
			if after, ok := m.Payload()["after"].(map[string]any); ok && after["id"] == float64(id) {
				return true
			}
		}
		return false
	})
}

// OracleSetup makes the ledger of the oracle writer with rows rows and the
// sentinel table, and returns the ledger's topic.
func (e *Env) OracleSetup(rows int) string {
	e.Exec(`CREATE TABLE ledger (k int PRIMARY KEY, seq bigint NOT NULL, pad text)`)
	e.Exec(`ALTER TABLE ledger REPLICA IDENTITY FULL`)
	e.Exec(fmt.Sprintf(`INSERT INTO ledger SELECT g, g, 'x' FROM generate_series(1, %d) g`, rows))
	e.Exec(SentinelTable)
	return e.Prefix + ".public.ledger"
}

// StartWriter runs the oracle writer for d in the background.
func (e *Env) StartWriter(rows int64, d time.Duration) (*Writer, func()) {
	w := NewWriter(rows)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Run(ctx, e.T, e.PGURL(), d) }()
	var once sync.Once
	stop := func() {
		once.Do(func() { cancel(); wg.Wait() })
		if w.Err != nil {
			e.T.Fatal(w.Err)
		}
	}
	e.T.Cleanup(func() { once.Do(func() { cancel(); wg.Wait() }) })
	return w, stop
}
