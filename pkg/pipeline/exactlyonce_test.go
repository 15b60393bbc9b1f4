package pipeline

import (
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
)

// TestResumeFrom: exactly once resumes from the newer of the offsets
// topic and the checkpoint store. The store lags the offsets topic while
// it is written exactly once; written at least once after the last
// commit (delivery switched to at_least_once and back), it leads.
func TestResumeFrom(t *testing.T) {
	committed := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	offsets, store := change.Position(`{"n":1}`), change.Position(`{"n":2}`)
	for name, c := range map[string]struct {
		cp        checkpoint.Checkpoint
		fromStore bool
	}{
		"store written exactly once after the commit":   {checkpoint.Checkpoint{Position: store, UpdatedAt: committed.Add(time.Second), Delivery: checkpoint.DeliveryExactlyOnce}, false},
		"store written at least once after the commit":  {checkpoint.Checkpoint{Position: store, UpdatedAt: committed.Add(time.Hour), Delivery: checkpoint.DeliveryAtLeastOnce}, true},
		"store written at least once before the commit": {checkpoint.Checkpoint{Position: store, UpdatedAt: committed.Add(-time.Second), Delivery: checkpoint.DeliveryAtLeastOnce}, false},
		"store of a version without the mode":           {checkpoint.Checkpoint{Position: store, UpdatedAt: committed.Add(time.Hour)}, false},
		"no checkpoint":                                 {checkpoint.Checkpoint{}, false},
	} {
		pos, fromStore := resumeFrom(offsets, committed, c.cp)
		want := offsets
		if c.fromStore {
			want = store
		}
		if fromStore != c.fromStore || string(pos) != string(want) {
			t.Errorf("%s: resumes from %s (store %v), want %s", name, pos, fromStore, want)
		}
	}
}

// TestCommitTickBoundsTheWait: the README promises a read_committed
// consumer sees a record at most max_interval plus one commit after it was
// written; on a quiet source the timer's granularity adds to that, and
// must stay within a tenth of the interval (it was half: 75 ms of 50).
func TestCommitTickBoundsTheWait(t *testing.T) {
	for _, iv := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond, time.Second, 10 * time.Second} {
		tick := commitTick(iv)
		if tick <= 0 {
			t.Fatalf("interval %s: tick %s", iv, tick)
		}
		if iv >= 10*time.Millisecond && iv+tick > iv*11/10 {
			t.Errorf("interval %s: tick %s lets a quiet source's last records wait %s, more than 1.1 × the interval", iv, tick, iv+tick)
		}
	}
}

// TestTransactionSpacingFollowsTheBacklog: a transaction commits at
// MaxRecords or MaxInterval while the last change is recent, and at
// backlogRecords times MaxRecords or backlogInterval while the source
// drains changes older than backlogLag; never within a source transaction.
func TestTransactionSpacingFollowsTheBacklog(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	recent, old := now.Add(-backlogLag+time.Millisecond).UnixMicro()+1, now.Add(-backlogLag-time.Millisecond).UnixMicro()+1
	// Dated to the second (MariaDB): committed up to a second later.
	recentSecond, oldSecond := now.Add(-backlogLag-time.Second).UnixMicro(), now.Add(-backlogLag-time.Second-time.Microsecond).Truncate(time.Second).UnixMicro()
	cfg := Transactions{MaxRecords: 5000, MaxInterval: 50 * time.Millisecond}
	for name, c := range map[string]struct {
		records, atMark int
		open            time.Duration
		changeMicros    int64
		due             bool
	}{
		"caught up, few records, young":             {records: 100, open: 10 * time.Millisecond, changeMicros: recent},
		"caught up, MaxRecords":                     {records: 5000, open: 10 * time.Millisecond, changeMicros: recent, due: true},
		"caught up, MaxInterval":                    {records: 100, open: 50 * time.Millisecond, changeMicros: recent, due: true},
		"only backfill rows, MaxInterval":           {records: 100, open: 50 * time.Millisecond, due: true},
		"behind, MaxRecords":                        {records: 5000, open: 40 * time.Millisecond, changeMicros: old},
		"behind, MaxInterval":                       {records: 3000, open: 60 * time.Millisecond, changeMicros: old},
		"behind, below backlogRecords × MaxRecords": {records: backlogRecords*5000 - 1, open: backlogInterval - time.Millisecond, changeMicros: old},
		"behind, backlogRecords × MaxRecords":       {records: backlogRecords * 5000, open: 400 * time.Millisecond, changeMicros: old, due: true},
		"behind, backlogInterval":                   {records: 3000, open: backlogInterval, changeMicros: old, due: true},
		"inside a source transaction":               {records: 60000, atMark: 59000, open: time.Second, changeMicros: old},
		"caught up, inside a source transaction":    {records: 6000, atMark: 5999, open: time.Second, changeMicros: recent},
		"empty":                                     {open: time.Second, changeMicros: recent},
		"caught up, dated to the second":            {records: 3000, open: 60 * time.Millisecond, changeMicros: recentSecond, due: true},
		"behind, dated to the second":               {records: 3000, open: 60 * time.Millisecond, changeMicros: oldSecond},
	} {
		atMark := c.atMark
		if atMark == 0 {
			atMark = c.records
		}
		tx := &txnState{cfg: cfg, records: c.records, atMark: atMark, opened: now.Add(-c.open), changeMicros: c.changeMicros}
		if got := tx.due(now); got != c.due {
			t.Errorf("%s: due %v, want %v", name, got, c.due)
		}
	}
}

// TestIdleCommitsOnlyCaughtUp: a transaction may commit when the source
// pauses only at a source-transaction end, with records, once a change
// said the source is caught up; behind, or before any change (a first
// backfill), it waits for the limits as before.
func TestIdleCommitsOnlyCaughtUp(t *testing.T) {
	now := time.Now()
	recent, old := now.Add(-10*time.Millisecond).UnixMicro()+1, now.Add(-backlogLag-time.Second).UnixMicro()+1
	for name, c := range map[string]struct {
		records, atMark int
		changeMicros    int64
		idle            bool
	}{
		"caught up, at an end":             {records: 100, atMark: 100, changeMicros: recent, idle: true},
		"caught up, inside a transaction":  {records: 100, atMark: 60, changeMicros: recent},
		"caught up, nothing to commit":     {changeMicros: recent},
		"behind, at an end":                {records: 100, atMark: 100, changeMicros: old},
		"no change yet (a first backfill)": {records: 100, atMark: 100},
	} {
		tx := &txnState{records: c.records, atMark: c.atMark, changeMicros: c.changeMicros}
		if got := tx.idleCommits(now); got != c.idle {
			t.Errorf("%s: idleCommits %v, want %v", name, got, c.idle)
		}
	}
}

// TestTransactionSpacingByCommitTimes: the source's lag is taken from its
// changes and from the later commit time of a source-transaction end
// (MariaDB dates rows to their statements: a transaction whose statements
// ran seconds before its COMMIT is not a backlog), never from an earlier
// one (the end of a long statement on a table not published, dated to its
// start, right after a recent change).
func TestTransactionSpacingByCommitTimes(t *testing.T) {
	now := time.Now()
	at := func(ago time.Duration) int64 { return now.Add(-ago).UnixMicro() + 1 } // +1: not whole seconds
	row := func(ago time.Duration) *change.Event {
		return &change.Event{Op: change.OpCreate, Source: change.Source{CommitMicros: at(ago)}}
	}
	end := func(ago time.Duration) *change.Event {
		ev := &change.Event{Position: change.Position("p")}
		if ago >= 0 {
			ev.Source.CommitMicros = at(ago)
		}
		return ev
	}
	for name, c := range map[string]struct {
		events []*change.Event
		behind bool
	}{
		"statements 3 s before their commit": {[]*change.Event{row(3 * time.Second), end(10 * time.Millisecond)}, false},
		"a backlog":                          {[]*change.Event{row(5 * time.Second), end(5 * time.Second)}, true},
		"a recent change, then an old end of another statement": {[]*change.Event{row(10 * time.Millisecond), end(0), end(2 * time.Second)}, false},
		"an end without a time":                                 {[]*change.Event{row(3 * time.Second), end(-1)}, true},
		"a backlog's change after a recent end":                 {[]*change.Event{end(10 * time.Millisecond), row(5 * time.Second)}, true},
	} {
		tx := &txnState{}
		for _, ev := range c.events {
			tx.observe(ev)
		}
		if got := behind(now, tx.changeMicros); got != c.behind {
			t.Errorf("%s: behind %v, want %v", name, got, c.behind)
		}
	}
}
