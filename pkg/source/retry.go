package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// DefaultOutageWindow is how long a source keeps reconnecting when
// source.outage_window is not set: long enough for a database restart, a
// Multi-AZ failover or a network blip, short enough that a real outage
// ends the task (exit 1) and its alarm fires.
const DefaultOutageWindow = 5 * time.Minute

// ErrOutage wraps the last error when the source stayed unreachable for
// longer than the outage window.
var ErrOutage = errors.New("source unreachable for longer than source.outage_window")

// ErrResnapshotRequired reports that the checkpoint's position can no
// longer be resumed from (a slot dropped or invalidated, a binlog purged):
// the pipeline must backfill again. Every source returns it; Reconnecting
// backfills again by itself when Resnapshot is set (source.snapshot_mode
// when_needed), and otherwise it is fatal.
var ErrResnapshotRequired = errors.New("resnapshot required")

// ErrNeverConnected wraps the dial error of the first connection attempt
// of a pipeline that has no checkpoint: a start that never reached its
// database is a configuration problem far more often than an outage, and
// is not retried (docs/operations.md, "A source never reached").
var ErrNeverConnected = errors.New("the source was never reached")

// ErrFatal marks an error that no reconnect can cure (authentication,
// privileges, a lost slot or binlog position, configuration). A source's
// classifier returns it to stop the retry loop at once.
var ErrFatal = errors.New("fatal")

// Classifier says whether err, returned by a source's Run, is a lost
// connection that reconnecting may cure (true) or not (false).
type Classifier func(err error) bool

// classifiers are the per-source-type rules (Register's sub-packages add
// theirs with RegisterClassifier); Retriable falls back to the network
// rules every source shares.
var classifiers sync.Map // source type → Classifier

// RegisterClassifier sets the error rules of a source type: server error
// codes the network rules cannot know (MySQL 2013, Postgres 57P01, …).
func RegisterClassifier(typ string, c Classifier) { classifiers.Store(typ, c) }

// NetworkRetriable reports the failures of the connection itself: EOF,
// reset, refused, broken pipe, timeouts (a dropped packet), DNS lookups
// and TLS handshakes cut short. Anything else is not.
func NetworkRetriable(err error) bool {
	if err == nil || CertificateProblem(err) {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) ||
		errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op != "remote error" {
		return true // dial, read, write on the socket; not a TLS alert the server sent
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// DialFailed reports that no connection to the database could be opened:
// the address refused it, did not answer in time, or did not resolve.
func DialFailed(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &dns) || (errors.As(err, &op) && op.Op == "dial")
}

// CertificateProblem reports a TLS failure that is configuration, not
// the network: an unknown authority, a wrong host name, an expired or
// refused certificate. Retrying cannot fix those.
func CertificateProblem(err error) bool {
	var alert tls.AlertError
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var op *net.OpError
	return errors.As(err, &alert) || errors.As(err, &verify) || errors.As(err, &unknown) ||
		errors.As(err, &host) || errors.As(err, &invalid) ||
		(errors.As(err, &op) && op.Op == "remote error")
}

// connectedKey carries the reconnect loop's "the source is connected"
// callback to the source's Run.
type connectedKey struct{}

// MarkConnected tells the reconnect loop running this source (if any)
// that the connection is up and streaming: the outage, if there was one,
// is over. Sources call it once the replication stream has started.
func MarkConnected(ctx context.Context) {
	if f, ok := ctx.Value(connectedKey{}).(func()); ok {
		f()
	}
}

// Reconnecting runs a Source again after a retriable failure, from the
// last position it handed to the pipeline (every emitted position is a
// safe resume point: a commit, or a backfill chunk's end), with jittered,
// capped exponential backoff, for at most Window of continuous outage.
// Rows emitted after that position are emitted again (at-least-once, in
// the same order), never skipped.
type Reconnecting struct {
	Source
	Type   string        // source type, for its classifier
	Window time.Duration // outage window; DefaultOutageWindow when 0
	Log    *slog.Logger

	// Backoff bounds; 500 ms and 30 s when 0.
	MinBackoff, MaxBackoff time.Duration
	// Resnapshot runs the source again from no position (a fresh start:
	// a new log position and a backfill of every table) when it fails
	// with ErrResnapshotRequired after a position was handed on
	// (source.snapshot_mode when_needed).
	Resnapshot bool

	connected   atomic.Bool
	reconnects  atomic.Int64
	resnapshots atomic.Int64
	failures    atomic.Int64 // failed attempts of the current outage
	state       connRecord
}

// State is the connection as of now, for the live status record.
func (r *Reconnecting) State() ConnState { return r.state.get() }

// Connected reports whether the source is up (1) or reconnecting (0), for
// the tributary_source_connected gauge.
func (r *Reconnecting) Connected() bool { return r.connected.Load() }

// Reconnects counts the reconnect attempts since start.
func (r *Reconnecting) Reconnects() int64 { return r.reconnects.Load() }

// Resnapshots counts the fresh starts that Resnapshot made since start.
func (r *Reconnecting) Resnapshots() int64 { return r.resnapshots.Load() }

// Retriable classifies an error of a source of type typ.
func Retriable(typ string, err error) bool {
	if err == nil || errors.Is(err, ErrFatal) {
		return false
	}
	if c, ok := classifiers.Load(typ); ok {
		return c.(Classifier)(err)
	}
	return NetworkRetriable(err)
}

// Run implements Source.
func (r *Reconnecting) Run(ctx context.Context, from change.Position, emit func(context.Context, *change.Event) error) error {
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
		r.state.set(ConnStreaming, now)
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
	rctx := context.WithValue(ctx, connectedKey{}, up)
	r.state.set(ConnConnecting, time.Now())
	for attempt := 1; ; attempt++ {
		err := r.Source.Run(rctx, last, wrapped)
		if err == nil || ctx.Err() != nil || emitFailed.Load() {
			return err
		}
		mu.Lock()
		resume := last
		mu.Unlock()
		if r.Resnapshot && resume != nil && errors.Is(err, ErrResnapshotRequired) {
			r.resnapshots.Add(1)
			log.Warn("the source position is lost; source.snapshot_mode when_needed: starting again from a new position and backfilling every table",
				"reason", err.Error())
			mu.Lock()
			last = nil
			mu.Unlock()
			continue
		}
		if attempt == 1 && resume == nil && DialFailed(err) {
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
		if !Retriable(r.Type, err) {
			r.state.failed(err, "fatal", r.failures.Load(), window, time.Now())
			log.Error("source error is fatal, not retrying", "class", "fatal", "err", err)
			return err
		}
		mu.Lock()
		now := time.Now()
		if r.connected.Load() && now.Sub(upAt) >= stable {
			outageSince = time.Time{} // the last outage is over: a new one starts
			r.failures.Store(0)
		}
		if outageSince.IsZero() {
			outageSince = now
		}
		if r.connected.Load() || lostAt.IsZero() {
			lostAt = now
		}
		r.connected.Store(false)
		since := outageSince
		mu.Unlock()
		n := r.failures.Add(1)
		r.state.set(ConnReconnecting, now)
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

// Unwrapped returns the source a Reconnecting wraps (src itself
// otherwise): the optional interfaces (Checker, Describer, Lagger) are
// the wrapped source's, and the wrapper does not forward them.
func Unwrapped(src Source) Source {
	if r, ok := src.(*Reconnecting); ok {
		return r.Source
	}
	return src
}
