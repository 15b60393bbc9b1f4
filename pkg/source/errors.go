package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

// ErrResnapshotRequired reports that the checkpoint's position can no
// longer be resumed from (a slot dropped or invalidated, a binlog purged):
// the pipeline must backfill again. Every driver returns it, and only it,
// for a lost position; the capture loop (pkg/capture/reconnect.go)
// backfills again by itself under source.snapshot_mode when_needed, and
// otherwise it is fatal.
var ErrResnapshotRequired = errors.New("resnapshot required")

// ErrReaderInUse reports that another live process streams this
// pipeline's changes (it holds the PostgreSQL slot, or is registered with
// the pipeline's MySQL server_id) and this task may not end it: only a
// lease lets a task take the stream over (Options.Leased). Never retried.
// Drivers prefix it with what is in use ("replication slot", "binlog
// stream").
var ErrReaderInUse = errors.New("in use by another reader")

// ErrFatal marks an error that no reconnect can cure (authentication,
// privileges, a lost slot or binlog position, configuration). A driver
// wraps it to stop the reconnect loop at once.
var ErrFatal = errors.New("fatal")

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
// callback to the driver (pkg/capture/reconnect.go).
type connectedKey struct{}

// WithConnected returns ctx carrying up, which MarkConnected calls: the
// reconnect loop (pkg/capture) learns that way that its driver streams.
func WithConnected(ctx context.Context, up func()) context.Context {
	return context.WithValue(ctx, connectedKey{}, up)
}

// MarkConnected tells the reconnect loop running this driver (if any)
// that the connection is up and streaming: the outage, if there was one,
// is over. Drivers call it once the replication stream has started.
func MarkConnected(ctx context.Context) {
	if f, ok := ctx.Value(connectedKey{}).(func()); ok {
		f()
	}
}

// LostSince is a lost connection that its driver noticed only some time
// after the loss (a MongoDB client that rides out short outages by
// itself, then gives up): At is when the connection was lost, so that
// source.outage_window and the logged outage count from there
// (pkg/capture/reconnect.go), not from when the error came.
type LostSince struct {
	At  time.Time
	Err error
}

func (e *LostSince) Error() string { return e.Err.Error() }
func (e *LostSince) Unwrap() error { return e.Err }

// LostAt is when the connection err reports was lost: LostSince's time
// when err carries one before now, else now.
func LostAt(err error, now time.Time) time.Time {
	var ls *LostSince
	if errors.As(err, &ls) && !ls.At.IsZero() && ls.At.Before(now) {
		return ls.At
	}
	return now
}
