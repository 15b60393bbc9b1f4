package dialguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		ip      string
		refused bool
	}{
		{"169.254.169.254", true},
		{"169.254.170.2", true}, // ECS task metadata
		{"169.254.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"fd00:ec2::254", true},
		{"fe80::1", true},
		{"0.0.0.0", true},
		{"::", true},
		{"224.0.0.1", true},
		{"127.0.0.1", true}, // the Lambda runtime API listens on 127.0.0.1:9001
		{"127.9.9.9", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true},
		{"10.1.2.3", false},
		{"169.253.255.255", false},
		{"169.255.0.1", false},
		{"fd00:ec2::253", false},
		{"52.94.1.1", false},
	} {
		err := Check(netip.MustParseAddr(tc.ip))
		if (err != nil) != tc.refused || (err != nil && !errors.Is(err, ErrForbiddenAddress)) {
			t.Errorf("%s: refused=%v, err=%v", tc.ip, tc.refused, err)
		}
	}
}

// TestDialerRefusesAtConnect: the refusal happens on the resolved address,
// whatever name was given, and before any packet leaves.
func TestDialerRefusesAtConnect(t *testing.T) {
	dial := Dialer(2 * time.Second)
	ctx := context.Background()
	for _, addr := range []string{"169.254.169.254:80", "[fd00:ec2::254]:80", "[::ffff:169.254.169.254]:80", "0.0.0.0:9092"} {
		start := time.Now()
		_, err := dial(ctx, "tcp", addr)
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("%s: %v", addr, err)
		}
		if time.Since(start) > time.Second {
			t.Errorf("%s: refusal took %v (it must not wait for a timeout)", addr, time.Since(start))
		}
	}
	// A name resolving to loopback is refused: a listener there (as the
	// runtime API is) is never reached; a test-only dialer reaches it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	if c, err := dial(ctx, "tcp", "localhost:"+port); !errors.Is(err, ErrForbiddenAddress) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("loopback listener reached: %v", err)
	}
	c, err := Dialer(2*time.Second, true)(ctx, "tcp", "localhost:"+port)
	if err != nil {
		t.Fatalf("loopback with allowLoopback: %v", err)
	}
	c.Close()
	if _, err := Dialer(2*time.Second, true)(ctx, "tcp", "169.254.169.254:80"); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("allowLoopback let metadata through: %v", err)
	}
}
