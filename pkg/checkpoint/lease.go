package checkpoint

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The lease is timed with durations measured on this host's monotonic
// clock, never by comparing wall-clock timestamps written by other hosts:
//
//   - The owner renews by incrementing a heartbeat counter with a write
//     conditional on its owner id and epoch. A renewal sent at local time t
//     entitles it to publish until t + duration (measured from the send, not
//     the reply, so the entitlement never outlives what the table saw).
//     Past that, Owned fails and the holder stops publishing, even if it
//     cannot reach the table to learn why.
//   - A candidate sees (owner, epoch, heartbeat) and starts a local timer.
//     Every change of those restarts it. Only when they stayed unchanged for
//     the holder's lease duration plus a margin does it take over, with a
//     write conditional on the very epoch and heartbeat it watched, which
//     increments the epoch. Any renewal the holder made in between changes
//     the heartbeat and fails that write.
//
// The holder's last successful renewal was sent before the candidate first
// read its heartbeat value, so the holder's entitlement ends before the
// candidate's wait does; the margin covers clock-rate differences between
// the hosts. Every checkpoint write is conditional on owner and epoch, so a
// holder that was frozen (SIGSTOP, a stuck VM) and wakes up late can
// neither move the checkpoint nor, checking Owned, publish again.

// takeoverMargin is added to a holder's lease duration before a candidate
// takes over: it absorbs a 10 % difference in clock rates.
func takeoverWait(holder time.Duration) time.Duration { return holder + holder/10 }

// renewEvery is how often the holder renews: three tries per lease.
func renewEvery(d time.Duration) time.Duration { return d / 3 }

// pollEvery is how often a candidate looks at a held lease.
func pollEvery(d time.Duration) time.Duration {
	return min(max(d/5, 100*time.Millisecond), 5*time.Second)
}

// lease is the holder's side: until when it may act as the owner, and
// whether it has lost the pipeline.
type lease struct {
	duration time.Duration
	base     time.Time    // a monotonic origin of this process
	deadline atomic.Int64 // nanoseconds after base

	once sync.Once
	lost chan struct{}
	err  error // set before lost closes
}

func newLease(d time.Duration) *lease {
	return &lease{duration: d, base: time.Now(), lost: make(chan struct{})}
}

// renewed records a renewal that was sent at sent and succeeded.
func (l *lease) renewed(sent time.Time) {
	until := int64(sent.Sub(l.base) + l.duration)
	for {
		cur := l.deadline.Load()
		if until <= cur || l.deadline.CompareAndSwap(cur, until) {
			return
		}
	}
}

// remaining is how long the current entitlement lasts (negative: expired).
func (l *lease) remaining() time.Duration {
	return time.Duration(l.deadline.Load()) - time.Since(l.base)
}

// owned is nil while the holder may publish.
func (l *lease) owned() error {
	select {
	case <-l.lost:
		return l.err
	default:
	}
	if l.remaining() <= 0 {
		l.lose(fmt.Errorf("%w: not renewed within %s", ErrLeaseLost, l.duration))
		return l.err
	}
	return nil
}

// lose marks the lease lost with err (the first cause wins).
func (l *lease) lose(err error) {
	l.once.Do(func() {
		l.err = err
		close(l.lost)
	})
}

// observation is a candidate's view of somebody else's lease.
type observation struct {
	owner     string
	epoch     int64
	heartbeat int64
	since     time.Time // local monotonic time it was first seen so
}

// observe returns the observation for it, restarting the timer when the
// holder, epoch or heartbeat changed since prev.
func observe(prev observation, it item, now time.Time) observation {
	if prev.owner == it.Owner && prev.epoch == it.Epoch && prev.heartbeat == it.Heartbeat && !prev.since.IsZero() {
		return prev
	}
	return observation{owner: it.Owner, epoch: it.Epoch, heartbeat: it.Heartbeat, since: now}
}
