package scenario_test

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// The refuse shape of TestRandomOracle: while the writer runs,
// one table's topic at a time refuses every write for 15-30 s
// (refuseWrites: INVALID_TIMESTAMP from the real broker), then takes them
// again for 10-20 s. The
// pipeline must ride each refusal as a stall (no exit, docs/aws.md
// tributary_kafka_stalled), skip nothing for it (the checker: a
// row.skipped record only for an oversized change) and leave no gap. Each
// round logs how much the refused topic and the others grew meanwhile.
//
// Only while the publishers run at_least_once, and no transaction of an
// exactly_once one can still be open (refuseTxnTimeout after the last
// one; the switch shape keeps the delivery meanwhile): Kafka 4.4's transaction coordinator cannot write a
// transaction marker to a partition refusing its timestamp (an
// IllegalStateException in TransactionMarkerRequestCompletionHandler for
// INVALID_TIMESTAMP) and leaves the transaction in PrepareAbort for good,
// so the next exactly_once publisher's initialisation waits forever.

// refuseTxnTimeout is the publishers' transaction timeout with refuse
// (TRIBUTARY_TEST_TRANSACTION_TIMEOUT, pkg/kafka/transactional.go): the
// wait before a refusal after an exactly_once publisher.
const refuseTxnTimeout = 20 * time.Second

type refuser struct {
	rng    *rand.Rand
	rounds int
	wg     sync.WaitGroup
}

// startRefuser runs the refusals until ctx ends; wait returns once the
// last refused topic takes writes again.
func startRefuser(ctx context.Context, t *testing.T, run *oracleRun, seed uint64) *refuser {
	r := &refuser{rng: rand.New(rand.NewPCG(seed, 0x4ef05e))}
	adm := itest.NewAdmin(t)
	b := run.b
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for sleep(time.Duration(5+r.rng.IntN(10)) * time.Second) {
			run.w.mu.Lock()
			tables := slices.Sorted(maps.Keys(run.configured))
			eos := run.eos
			run.refusing = !eos // the delivery stays at_least_once from here on
			wait := time.Until(run.lastEOS.Add(refuseTxnTimeout + 10*time.Second))
			run.w.mu.Unlock()
			if eos || wait > 0 && !sleep(wait) {
				continue // the loop's sleep returns false once ctx is done
			}
			tb := tables[r.rng.IntN(len(tables))]
			others := func() (n int64) {
				for _, o := range tables {
					if o != tb {
						n += itest.TopicEnd(b.Topic(o))
					}
				}
				return n
			}
			topic := b.Topic(tb)
			hold := time.Duration(15+r.rng.IntN(16)) * time.Second
			ownAt, othersAt, began := itest.TopicEnd(topic), others(), time.Now()
			itest.RefuseWrites(t, adm, topic, true)
			sleep(hold)
			own, rest := itest.TopicEnd(topic)-ownAt, others()-othersAt
			itest.RefuseWrites(t, adm, topic, false)
			run.w.mu.Lock()
			run.refusing = false
			run.w.mu.Unlock()
			r.rounds++
			t.Logf("refuse: %s refused writes for %s (at_least_once): its topic grew by %d records, the other %d topics by %d",
				tb, time.Since(began).Round(time.Second), own, len(tables)-1, rest)
			if !sleep(time.Duration(10+r.rng.IntN(11)) * time.Second) {
				return
			}
		}
	}()
	return r
}

func (r *refuser) wait() { r.wg.Wait() }
