package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
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
