package dialguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
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
		// IPv6 forms that carry a forbidden IPv4 address.
		{"::a9fe:a9fe", true},                 // IPv4-compatible 169.254.169.254
		{"::169.254.169.254", true},           // the same, written dotted
		{"::7f00:1", true},                    // IPv4-compatible 127.0.0.1
		{"::ffff:a9fe:a9fe", true},            // IPv4-mapped
		{"::ffff:0:7f00:1", true},             // IPv4-translated 127.0.0.1
		{"64:ff9b::a9fe:a9fe", true},          // NAT64
		{"64:ff9b::127.0.0.1", true},          // NAT64
		{"64:ff9b:1::a9fe:a9fe", true},        // NAT64, local-use prefix
		{"2002:a9fe:a9fe::1", true},           // 6to4
		{"2002:7f00:1::", true},               // 6to4 127.0.0.1
		{"2001:0:4136:e378::5601:5601", true}, // Teredo, client 169.254.169.254 inverted
		{"2001:db8::5efe:a9fe:a9fe", true},    // ISATAP
		{"2001:db8::200:5efe:7f00:1", true},   // ISATAP, universal bit
		{"::e000:1", true},                    // IPv4-compatible 224.0.0.1 (multicast)
		// … and the same forms carrying a public address pass.
		{"64:ff9b::3d5e:101", false}, // NAT64 52.94.1.1
		{"2002:345e:101::1", false},  // 6to4 52.94.1.1
		{"::ffff:52.94.1.1", false},
		{"2600:1f18::1", false},
	} {
		err := Check(netip.MustParseAddr(tc.ip))
		if (err != nil) != tc.refused || (err != nil && !errors.Is(err, ErrForbiddenAddress)) {
			t.Errorf("%s: refused=%v, err=%v", tc.ip, tc.refused, err)
		}
	}
}

// TestCheckPublic: webhooks reach public receivers only: private,
// shared (CGNAT), unique-local and other special-purpose ranges are
// refused, as themselves or embedded in IPv6; what Check refuses stays
// refused.
func TestCheckPublic(t *testing.T) {
	for _, tc := range []struct {
		ip      string
		refused bool
	}{
		{"10.0.0.1", true},
		{"10.255.255.255", true},
		{"172.16.0.1", true},
		{"172.31.255.254", true},
		{"172.32.0.1", false},
		{"192.168.1.1", true},
		{"100.64.0.1", true},
		{"100.127.255.254", true},
		{"100.128.0.1", false},
		{"100.63.255.255", false},
		{"0.1.2.3", true},
		{"198.18.0.1", true},
		{"192.0.2.2", true},
		{"203.0.113.9", true},
		{"240.0.0.1", true},
		{"255.255.255.255", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"fec0::1", true},
		{"::ffff:10.0.0.1", true},
		{"::a00:1", true},          // IPv4-compatible 10.0.0.1
		{"64:ff9b::a00:1", true},   // NAT64 10.0.0.1
		{"64:ff9b::6440:1", true},  // NAT64 100.64.0.1
		{"2002:c0a8:101::1", true}, // 6to4 192.168.1.1
		{"2002:ac10:1::1", true},   // 6to4 172.16.0.1
		{"169.254.169.254", true},  // what Check refuses
		{"127.0.0.1", true},
		{"::a9fe:a9fe", true},
		{"52.94.1.1", false},
		{"8.8.8.8", false},
		{"2600:1f18::1", false},
		{"64:ff9b::808:808", false}, // NAT64 8.8.8.8
		{"2002:808:808::1", false},  // 6to4 8.8.8.8
	} {
		ip := netip.MustParseAddr(tc.ip)
		err := CheckPublic(ip)
		if (err != nil) != tc.refused || (err != nil && !errors.Is(err, ErrForbiddenAddress)) {
			t.Errorf("%s: refused=%v, err=%v", tc.ip, tc.refused, err)
		}
		if tc.refused && Check(ip) == nil && !strings.Contains(err.Error(), "allow_private_network") {
			t.Errorf("%s: the refusal does not say how to opt in: %v", tc.ip, err)
		}
	}
}

// TestPublicDialer: the webhook dialer refuses a private address at
// connect time; allowLoopback (tests) exempts loopback, nothing else.
func TestPublicDialer(t *testing.T) {
	ctx := context.Background()
	for _, addr := range []string{"10.0.0.1:443", "192.168.0.1:443", "100.64.0.1:443", "[fd00::1]:443", "[64:ff9b::a00:1]:443", "[::a9fe:a9fe]:80"} {
		if _, err := PublicDialer(time.Second, true)(ctx, "tcp", addr); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("%s: %v", addr, err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := PublicDialer(2*time.Second, true)(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("loopback with allowLoopback: %v", err)
	}
	c.Close()
}

// TestDialerRefusesAtConnect: the refusal happens on the resolved address,
// whatever name was given, and before any packet leaves.
func TestDialerRefusesAtConnect(t *testing.T) {
	dial := Dialer(2 * time.Second)
	ctx := context.Background()
	for _, addr := range []string{"169.254.169.254:80", "[fd00:ec2::254]:80", "[::ffff:169.254.169.254]:80", "0.0.0.0:9092",
		"[::a9fe:a9fe]:80", "[64:ff9b::a9fe:a9fe]:80", "[2002:a9fe:a9fe::1]:80", "[::7f00:1]:80"} {
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
