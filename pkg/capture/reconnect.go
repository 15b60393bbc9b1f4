package capture

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// DefaultOutageWindow is how long a source keeps reconnecting when
// source.outage_window is not set: long enough for a database restart, a
// Multi-AZ failover or a network blip, short enough that a real outage
// ends the task (exit 1) and its alarm fires.
const DefaultOutageWindow = 5 * time.Minute

// ErrOutage wraps the last error when the source stayed unreachable for
// longer than the outage window.
var ErrOutage = errors.New("source unreachable for longer than source.outage_window")

// ErrNeverConnected wraps the dial error of the first connection attempt
// of a pipeline that has no checkpoint: a start that never reached its
// database is a configuration problem far more often than an outage, and
// is not retried (docs/operations.md, "A source never reached").
var ErrNeverConnected = errors.New("the source was never reached")

// reconnector runs the capture loop (run) again after a retriable
// failure, from the last position it handed to the pipeline (every
// emitted position is a safe resume point: a commit, or a backfill
// chunk's end), with jittered, capped exponential backoff, for at most
// Window of continuous outage. Rows emitted after that position are
// emitted again (at-least-once, in the same order), never skipped. It is
// the one reconnect wrapper of every database: a driver only says which
// of its errors are a lost connection (Database.Retriable).
type reconnector struct {
	run       func(ctx context.Context, from change.Position, emit func(context.Context, *change.Event) error) error
	retriable func(error) bool // the driver's rules; source.NetworkRetriable when nil
	Window    time.Duration    // outage window; DefaultOutageWindow when 0
	Log       *slog.Logger

	// Backoff bounds; 500 ms and 30 s when 0.
	MinBackoff, MaxBackoff time.Duration
	// Resnapshot runs the source again from no position (a fresh start:
	// a new log position and a backfill of every table) when it fails
	// with source.ErrResnapshotRequired after a position was handed on
	// (source.snapshot_mode when_needed).
	Resnapshot bool

	connected   atomic.Bool
	reconnects  atomic.Int64
	resnapshots atomic.Int64
	failures    atomic.Int64 // failed attempts of the current outage
	state       connRecord
}

// State is the connection as of now, for the live status record.
func (r *reconnector) State() source.ConnState { return r.state.get() }

// Connected reports whether the source is up (1) or reconnecting (0), for
// the tributary_source_connected gauge.
func (r *reconnector) Connected() bool { return r.connected.Load() }

// Reconnects counts the reconnect attempts since start.
func (r *reconnector) Reconnects() int64 { return r.reconnects.Load() }

// Resnapshots counts the fresh starts that Resnapshot made since start.
func (r *reconnector) Resnapshots() int64 { return r.resnapshots.Load() }

// retriableErr classifies an error of the loop: never one marked fatal;
// otherwise the driver's rules.
func (r *reconnector) retriableErr(err error) bool {
	if err == nil || errors.Is(err, source.ErrFatal) {
		return false
	}
	if r.retriable != nil {
		return r.retriable(err)
	}
	return source.NetworkRetriable(err)
}

// Run runs the loop until ctx ends or a failure no reconnect cures.
func (r *reconnector) Run(ctx context.Context, from change.Position, emit func(context.Context, *change.Event) error) error {
	window := r.Window
	if window <= 0 {
		window = DefaultOutageWindow
	}
	minB, maxB := r.MinBackoff, r.MaxBackoff
	if minB <= 0 {
		minB = 500 * time.Millisecond
	}
	if maxB <= 0 {
		maxB = 30 * time.Second
	}
	log := r.Log
	if log == nil {
		log = slog.Default()
	}

	// An outage runs from the first loss until the connection has stayed
	// up for stable: a source that connects and drops again at once
	// (flapping) keeps its outage, its backoff and its window running.
	stable := min(30*time.Second, window/2)
	var outageSince, lostAt, upAt time.Time // outageSince zero: no outage
	var mu sync.Mutex                       // guards the times and last against the emit callback
	last := from
	var emitFailed atomic.Bool
	up := func() {
		mu.Lock()
		defer mu.Unlock()
		if r.connected.Load() {
			return
		}
		now := time.Now()
		if !lostAt.IsZero() {
			log.Info("source reconnected", "outage", now.Sub(lostAt).Round(time.Millisecond).String(), "attempts", r.failures.Load())
		}
		upAt = now
		r.connected.Store(true)
		r.state.set(source.ConnStreaming, now)
	}
	wrapped := func(ctx context.Context, ev *change.Event) error {
		if !r.connected.Load() {
			up() // a row read proves the connection, even before streaming (backfill)
		}
		if err := emit(ctx, ev); err != nil {
			// The pipeline's own failure (publish, lease, a row it
			// refuses) is not the source's connection: never retried.
			emitFailed.Store(true)
			return err
		}
		if ev.Position != nil {
			mu.Lock()
			last = ev.Position
			mu.Unlock()
		}
		return nil
	}
	rctx := source.WithConnected(ctx, up)
	r.state.set(source.ConnConnecting, time.Now())
	for attempt := 1; ; attempt++ {
		err := r.run(rctx, last, wrapped)
		if err == nil || ctx.Err() != nil || emitFailed.Load() {
			return err
		}
		mu.Lock()
		resume := last
		mu.Unlock()
		if r.Resnapshot && resume != nil && errors.Is(err, source.ErrResnapshotRequired) {
			r.resnapshots.Add(1)
			log.Warn("the source position is lost; source.snapshot_mode when_needed: starting again from a new position and backfilling every table",
				"reason", err.Error())
			mu.Lock()
			last = nil
			mu.Unlock()
			continue
		}
		if attempt == 1 && resume == nil && source.DialFailed(err) {
			// No checkpoint, and the first attempt could not open a
			// connection: a first start against a wrong host or port,
			// or a closed security group. An ECS task restarting after
			// a crash has a checkpoint and keeps retrying below, as
			// does a first start whose first attempt reached the server
			// (one still starting up, 57P03, 1053, or one that went
			// down before streaming began): a later refused dial is an
			// outage.
			r.state.failed(err, "fatal", r.failures.Load(), window, time.Now())
			return fmt.Errorf("%w on the first start of this pipeline (no checkpoint yet), so it is not retried: check source.url's host and port and that the database accepts connections from here: %w", ErrNeverConnected, err)
		}
		if !r.retriableErr(err) {
			err = withResnapshotFix(err, r.Resnapshot)
			r.state.failed(err, "fatal", r.failures.Load(), window, time.Now())
			log.Error("source error is fatal, not retrying", "class", "fatal", "err", err)
			return err
		}
		mu.Lock()
		now := time.Now()
		// A driver that noticed the loss late says when it was (the
		// outage counts from there).
		lost := source.LostAt(err, now)
		if r.connected.Load() && lost.Sub(upAt) >= stable {
			outageSince = time.Time{} // the last outage is over: a new one starts
			r.failures.Store(0)
		}
		if outageSince.IsZero() || lost.Before(outageSince) {
			outageSince = lost
		}
		if r.connected.Load() || lostAt.IsZero() {
			lostAt = lost
		}
		r.connected.Store(false)
		since := outageSince
		mu.Unlock()
		n := r.failures.Add(1)
		r.state.set(source.ConnReconnecting, now)
		r.state.failed(err, "retriable", n, window, now)
		if now.Sub(since) >= window {
			return fmt.Errorf("%w (%s, %d attempts): %w", ErrOutage, window, n, err)
		}
		wait := backoff(minB, maxB, n)
		if left := window - now.Sub(since); wait > left {
			wait = left
		}
		log.Warn("source connection lost; reconnecting", "class", "retriable", "err", err,
			"attempt", n, "retry_in", wait.Round(time.Millisecond).String(),
			"outage", now.Sub(since).Round(time.Millisecond).String(), "outage_window", window.String())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		r.reconnects.Add(1)
	}
}

// backoff is the wait before attempt n (1-based): exponential from min,
// capped at max, with full jitter over its upper half so that many tasks
// cut off together do not reconnect in step.
func backoff(min, max time.Duration, n int64) time.Duration {
	d := min
	for i := int64(1); i < n && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)+1))
}

// withResnapshotFix adds to a fatal source.ErrResnapshotRequired what the
// user can do about it; other errors are returned as they are. Under
// when_needed (whenNeeded) the loop already starts again by itself once a
// position was handed on, so only drop is left to say.
func withResnapshotFix(err error, whenNeeded bool) error {
	if !errors.Is(err, source.ErrResnapshotRequired) {
		return err
	}
	if whenNeeded {
		return fmt.Errorf("%w; fix: run `tributary drop` (it removes this pipeline's checkpoint, slot or offsets), then `tributary run` to backfill every table again", err)
	}
	return fmt.Errorf("%w; fix: set source.snapshot_mode: when_needed and run again (it starts from a new position and backfills every table), or run `tributary drop`, then `tributary run`", err)
}
