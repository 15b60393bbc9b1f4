package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

func TestNetworkRetriable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("receive message failed: %w", io.ErrUnexpectedEOF), true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{&net.DNSError{Err: "no such host", Name: "db.internal", IsNotFound: true}, true},
		{fmt.Errorf("tls handshake: %w", io.EOF), true},
		{fmt.Errorf("wait: %w", context.DeadlineExceeded), true},
		{errors.New("password authentication failed for user x"), false},
		{fmt.Errorf("tls: %w", x509.UnknownAuthorityError{}), false},
		{&net.OpError{Op: "remote error", Err: tls.AlertError(42)}, false},
		{nil, false},
	} {
		if got := NetworkRetriable(c.err); got != c.want {
			t.Errorf("NetworkRetriable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	if Retriable("nosuchtype", fmt.Errorf("%w: %w", ErrFatal, io.EOF)) {
		t.Error("an error marked ErrFatal is retried")
	}
}

// The wait grows from min to max, never past it, and is jittered over
// the upper half of each step.
func TestBackoff(t *testing.T) {
	min, max := 500*time.Millisecond, 30*time.Second
	for n := int64(1); n <= 20; n++ {
		step := min << min64(n-1, 10)
		if step > max {
			step = max
		}
		for i := 0; i < 50; i++ {
			d := backoff(min, max, n)
			if d < step/2 || d > step {
				t.Fatalf("attempt %d: wait %s outside [%s, %s]", n, d, step/2, step)
			}
		}
	}
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

// script is a Source whose Run plays one step per call: connect (call
// MarkConnected) or not, then fail with err.
type script struct {
	connect bool
	err     error
	runs    int
	froms   []string
}

func (s *script) Run(ctx context.Context, from change.Position, emit func(context.Context, *change.Event) error) error {
	s.runs++
	s.froms = append(s.froms, string(from))
	if s.connect {
		MarkConnected(ctx)
		if err := emit(ctx, &change.Event{Position: change.Position(fmt.Sprintf(`{"run":%d}`, s.runs))}); err != nil {
			return err
		}
	}
	return s.err
}
func (s *script) Ack(change.Position) {}
func (s *script) Close() error        { return nil }

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// An unreachable source is retried until the window ends, then Run fails
// with ErrOutage; a source that connects and drops at once (flapping)
// does not restart the window, and each retry resumes from the last
// position handed on.
func TestReconnectWindow(t *testing.T) {
	for _, connect := range []bool{false, true} {
		s := &script{connect: connect, err: io.ErrUnexpectedEOF}
		r := &Reconnecting{Source: s, Type: "test", Window: 300 * time.Millisecond, MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, Log: quietLog()}
		start := time.Now()
		err := r.Run(context.Background(), nil, func(context.Context, *change.Event) error { return nil })
		if !errors.Is(err, ErrOutage) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("connect=%v: err %v, want ErrOutage wrapping the last error", connect, err)
		}
		if d := time.Since(start); d < 300*time.Millisecond || d > 2*time.Second {
			t.Errorf("connect=%v: gave up after %s, window 300ms", connect, d)
		}
		if s.runs < 3 || r.Reconnects() != int64(s.runs-1) || r.Connected() {
			t.Errorf("connect=%v: %d runs, %d reconnects, connected %v", connect, s.runs, r.Reconnects(), r.Connected())
		}
		if connect && s.froms[2] != `{"run":2}` {
			t.Errorf("run 3 resumed from %q, want the position run 2 emitted", s.froms[2])
		}
	}
}

// A fatal error, or a failure of the pipeline's emit, is never retried.
func TestReconnectFatal(t *testing.T) {
	s := &script{err: fmt.Errorf("%w: password authentication failed", ErrFatal)}
	r := &Reconnecting{Source: s, Type: "test", Log: quietLog()}
	if err := r.Run(context.Background(), nil, nil); !errors.Is(err, ErrFatal) || s.runs != 1 {
		t.Errorf("fatal: err %v after %d runs", err, s.runs)
	}
	s = &script{connect: true, err: io.EOF}
	r = &Reconnecting{Source: s, Type: "test", Log: quietLog()}
	published := errors.New("publish failed")
	if err := r.Run(context.Background(), nil, func(context.Context, *change.Event) error { return published }); !errors.Is(err, published) || s.runs != 1 {
		t.Errorf("emit failure: err %v after %d runs", err, s.runs)
	}
}
