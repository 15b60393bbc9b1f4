package capture

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
	"github.com/tributary-cdc/tributary/pkg/source"
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
		if got := source.NetworkRetriable(c.err); got != c.want {
			t.Errorf("NetworkRetriable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	if (&reconnector{}).retriableErr(fmt.Errorf("%w: %w", source.ErrFatal, io.EOF)) {
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

// script is a loop whose Run plays one step per call: connect (call
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
		source.MarkConnected(ctx)
		if err := emit(ctx, &change.Event{Position: change.Position(fmt.Sprintf(`{"run":%d}`, s.runs))}); err != nil {
			return err
		}
	}
	return s.err
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// An unreachable source with a checkpoint is retried until the window
// ends, then Run fails with ErrOutage; a source that connects and drops at
// once (flapping) does not restart the window, and each retry resumes from
// the last position handed on.
func TestReconnectWindow(t *testing.T) {
	for _, connect := range []bool{false, true} {
		s := &script{connect: connect, err: io.ErrUnexpectedEOF}
		r := &reconnector{run: s.Run, Window: 300 * time.Millisecond, MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, Log: quietLog()}
		start := time.Now()
		var from change.Position
		if !connect {
			from = change.Position(`{"checkpoint":1}`) // a restart: retried although never connected
		}
		err := r.Run(context.Background(), from, func(context.Context, *change.Event) error { return nil })
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

// A loss its driver noticed late (source.LostSince) counts from when it
// was lost: a window already past ends Run at the first error, and a
// longer one is left with what remains of it.
func TestReconnectOutageCountsFromTheLoss(t *testing.T) {
	for _, c := range []struct {
		window   time.Duration
		wantRuns int
	}{
		{5 * time.Second, 1},         // lost 8 s ago: past the window
		{8500 * time.Millisecond, 2}, // half a second left: one retry
	} {
		s := &script{connect: true, err: &source.LostSince{At: time.Now().Add(-8 * time.Second), Err: io.ErrUnexpectedEOF}}
		r := &reconnector{run: s.Run, Window: c.window, MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, Log: quietLog()}
		start := time.Now()
		err := r.Run(context.Background(), nil, func(context.Context, *change.Event) error { return nil })
		if !errors.Is(err, ErrOutage) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("window %s: err %v, want ErrOutage wrapping the last error", c.window, err)
		}
		if d := time.Since(start); s.runs < c.wantRuns || d > 2*time.Second {
			t.Errorf("window %s: gave up after %d runs and %s, want at least %d within the window's remainder", c.window, s.runs, d, c.wantRuns)
		}
		if c.wantRuns == 1 && s.runs != 1 {
			t.Errorf("window %s: %d runs for a loss already past the window", c.window, s.runs)
		}
	}
}

// A fatal error, or a failure of the pipeline's emit, is never retried.
func TestReconnectFatal(t *testing.T) {
	s := &script{err: fmt.Errorf("%w: password authentication failed", source.ErrFatal)}
	r := &reconnector{run: s.Run, Log: quietLog()}
	if err := r.Run(context.Background(), nil, nil); !errors.Is(err, source.ErrFatal) || s.runs != 1 {
		t.Errorf("fatal: err %v after %d runs", err, s.runs)
	}
	s = &script{connect: true, err: io.EOF}
	r = &reconnector{run: s.Run, Log: quietLog()}
	published := errors.New("publish failed")
	if err := r.Run(context.Background(), nil, func(context.Context, *change.Event) error { return published }); !errors.Is(err, published) || s.runs != 1 {
		t.Errorf("emit failure: err %v after %d runs", err, s.runs)
	}
}

// The first attempt of a pipeline without a checkpoint that cannot open a
// connection fails at once with ErrNeverConnected and the cause; a server
// that answered (and dropped the connection, or is starting up) is
// retried, as is the same dial error once the source connected or with a
// checkpoint.
func TestReconnectNeverConnected(t *testing.T) {
	refused := fmt.Errorf("connect to db at 127.0.0.1:1: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	s := &script{err: refused}
	r := &reconnector{run: s.Run, Window: time.Minute, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Log: quietLog()}
	start := time.Now()
	err := r.Run(context.Background(), nil, func(context.Context, *change.Event) error { return nil })
	if !errors.Is(err, ErrNeverConnected) || !errors.Is(err, syscall.ECONNREFUSED) || s.runs != 1 {
		t.Fatalf("err %v after %d runs, want ErrNeverConnected wrapping the cause after one", err, s.runs)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %s", d)
	}
	if st := r.State(); st.LastErrorClass != "fatal" {
		t.Errorf("state %+v, want the failure recorded as fatal", st)
	}
	for _, c := range []struct {
		err  error
		want error
	}{
		{&net.DNSError{Err: "no such host", Name: "db.example", IsNotFound: true}, ErrNeverConnected},
		{io.ErrUnexpectedEOF, ErrOutage}, // the server answered, then dropped us
	} {
		s = &script{err: c.err}
		r = &reconnector{run: s.Run, Window: 100 * time.Millisecond, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Log: quietLog()}
		if got := r.Run(context.Background(), nil, func(context.Context, *change.Event) error { return nil }); !errors.Is(got, c.want) {
			t.Errorf("%v: err %v after %d runs, want %v", c.err, got, s.runs, c.want)
		}
	}
}

// flaky connects and hands on a position once, then fails every later
// Run with err before connecting.
type flaky struct {
	script
	later error
}

func (f *flaky) Run(ctx context.Context, from change.Position, emit func(context.Context, *change.Event) error) error {
	if f.runs == 0 {
		f.connect = true
	} else {
		f.connect, f.err = false, f.later
	}
	return f.script.Run(ctx, from, emit)
}

// After a connection, a lost one is an outage: retried until the window.
func TestReconnectAfterFirstConnection(t *testing.T) {
	s := &flaky{script: script{err: io.EOF}, later: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	r := &reconnector{run: s.Run, Window: 200 * time.Millisecond, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Log: quietLog()}
	err := r.Run(context.Background(), nil, func(context.Context, *change.Event) error { return nil })
	if !errors.Is(err, ErrOutage) || errors.Is(err, ErrNeverConnected) || s.runs < 3 {
		t.Fatalf("err %v after %d runs, want ErrOutage after retries", err, s.runs)
	}
}

// With Resnapshot (snapshot_mode when_needed), a lost position starts the
// source again from no position, counted; without it, it is returned. A
// fresh start that fails with it again is not looped on.
func TestReconnectResnapshot(t *testing.T) {
	lost := fmt.Errorf("replication slot gone: %w", source.ErrResnapshotRequired)
	for _, resnapshot := range []bool{false, true} {
		s := &script{err: lost}
		r := &reconnector{run: s.Run, Resnapshot: resnapshot, Log: quietLog()}
		err := r.Run(context.Background(), change.Position(`{"lsn":1}`), func(context.Context, *change.Event) error { return nil })
		if !errors.Is(err, source.ErrResnapshotRequired) {
			t.Fatalf("resnapshot=%v: err %v", resnapshot, err)
		}
		wantRuns, wantFroms := 1, []string{`{"lsn":1}`}
		if resnapshot {
			wantRuns, wantFroms = 2, []string{`{"lsn":1}`, ""}
		}
		if s.runs != wantRuns || fmt.Sprint(s.froms) != fmt.Sprint(wantFroms) || r.Resnapshots() != int64(wantRuns-1) {
			t.Errorf("resnapshot=%v: %d runs from %q, %d resnapshots", resnapshot, s.runs, s.froms, r.Resnapshots())
		}
	}
	// The fresh start connects and streams: the pipeline goes on from its position.
	s := &flaky{script: script{err: lost}, later: nil}
	r := &reconnector{run: s.Run, Resnapshot: true, Log: quietLog()}
	if err := r.Run(context.Background(), change.Position(`{"lsn":1}`), func(context.Context, *change.Event) error { return nil }); err != nil {
		t.Fatalf("after the fresh start: %v", err)
	}
	if s.runs != 2 || s.froms[1] != "" || r.Resnapshots() != 1 {
		t.Errorf("%d runs from %q, %d resnapshots", s.runs, s.froms, r.Resnapshots())
	}
}

// answered fails its first Run with err after reaching the server (no
// position handed on), and every later one with later, before connecting.
type answered struct {
	script
	first, later error
}

func (a *answered) Run(ctx context.Context, from change.Position, emit func(context.Context, *change.Event) error) error {
	a.err = a.later
	if a.runs == 0 {
		a.err = a.first
	}
	return a.script.Run(ctx, from, emit)
}

// A first start whose first attempt reached the server, which then went
// down before streaming began (a reboot), is an outage: the refused dials
// after it are retried for the window, not "never reached".
func TestReconnectReachedBeforeStreaming(t *testing.T) {
	s := &answered{first: fmt.Errorf("create replication slot: %w", io.ErrUnexpectedEOF),
		later: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	r := &reconnector{run: s.Run, Window: 100 * time.Millisecond, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Log: quietLog()}
	err := r.Run(context.Background(), nil, func(context.Context, *change.Event) error { return nil })
	if !errors.Is(err, ErrOutage) || errors.Is(err, ErrNeverConnected) || s.runs < 3 {
		t.Fatalf("err %v after %d runs, want ErrOutage after retries", err, s.runs)
	}
}
