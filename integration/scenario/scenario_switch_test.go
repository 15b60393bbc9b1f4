package scenario_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// The switch shape of TestRandomOracle: between
// publishers the controller now and then switches delivery between
// at_least_once and exactly_once (docs/configuration.md delivery). The
// checker reads read_committed and allows a duplicate only where at least
// once allows one: a change published again after an at_least_once
// publisher ran since its last transactional copy (a replay from that
// publisher's checkpoint), or published again by an at_least_once one. A
// transactional copy of a change already committed, with only
// exactly_once publishers between the two, is a failure.

// deliveryPeriod is a time from which publishers ran with one delivery
// mode, up to the next period.
type deliveryPeriod struct {
	from time.Time
	eos  bool
}

// switcher flips run's delivery now and then, on its own PRNG (the
// controller's kills stay those of the seed).
type switcher struct {
	rng *rand.Rand
	n   int
}

func newSwitcher(seed uint64) *switcher { return &switcher{rng: rand.New(rand.NewPCG(seed, 0x5e71c))} }

// maybe flips the delivery one time in three, never while a topic
// refuses writes (scenario_refuse_test.go); true when it did.
func (s *switcher) maybe(run *oracleRun) bool {
	if s.rng.IntN(3) != 0 || run.refusing {
		return false
	}
	if run.eos {
		run.lastEOS = time.Now() // the last exactly_once publisher was just killed
	}
	run.eos = !run.eos
	s.n++
	return true
}

// started records that a publisher starts now with run's delivery.
func (run *oracleRun) started() {
	if n := len(run.periods); n == 0 || run.periods[n-1].eos != run.eos {
		run.periods = append(run.periods, deliveryPeriod{from: time.Now(), eos: run.eos})
	}
}

// readsCommitted tells whether the checker reads as a read_committed
// consumer and checks duplicates against the delivery periods.
func (run *oracleRun) readsCommitted() bool { return run.exactlyOnce || run.switches != nil }

// atLeastOnceBetween tells whether an at_least_once publisher may have run
// between times a and b (a period at least once overlaps [a, b]).
func (run *oracleRun) atLeastOnceBetween(a, b time.Time) bool {
	for i, p := range run.periods {
		end := time.Now().Add(time.Hour)
		if i+1 < len(run.periods) {
			end = run.periods[i+1].from
		}
		if !p.eos && p.from.Before(b) && end.After(a) {
			return true
		}
	}
	return false
}

// dupAllowed tells whether a copy of a change already read, published at
// ts (transactional: txn), is a duplicate the delivery periods allow; the
// change's previous transactional copy was published at lastTxn (zero if
// none).
func (run *oracleRun) dupAllowed(txn bool, ts, lastTxn time.Time) bool {
	return !txn || lastTxn.IsZero() || run.atLeastOnceBetween(lastTxn, ts)
}

// switchSummary is the switch part of the oracle's report line.
func switchSummary(run *oracleRun) string {
	if run.switches == nil {
		return ""
	}
	return fmt.Sprintf(" | delivery switched %d times (%d periods)", run.switches.n, len(run.periods))
}

// The switch rule: a transactional copy of a change is a failure unless an
// at_least_once publisher ran since its previous transactional copy.
func TestOracleSwitchDuplicates(t *testing.T) {
	t0 := time.Now().Add(-time.Hour)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	run := &oracleRun{periods: []deliveryPeriod{{at(0), true}, {at(10), false}, {at(20), true}}}
	for _, c := range []struct {
		name     string
		txn      bool
		at, prev time.Time
		want     bool
	}{
		{"exactly once, then again exactly once", true, at(5), at(2), false},
		{"exactly once, at least once between, then exactly once", true, at(25), at(5), true},
		{"both in the last exactly once period", true, at(30), at(22), false},
		{"a copy published at least once", false, at(15), at(5), true},
		{"the first transactional copy after at least once copies", true, at(25), time.Time{}, true},
	} {
		if got := run.dupAllowed(c.txn, c.at, c.prev); got != c.want {
			t.Errorf("%s: allowed %v, want %v", c.name, got, c.want)
		}
	}
}
