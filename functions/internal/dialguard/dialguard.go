// Package dialguard dials TCP for the Lambda functions, which connect to
// addresses that users configure (Kafka brokers, webhook URLs), while
// refusing what lives inside the function's own sandbox: loopback (where
// the Lambda runtime API listens, AWS_LAMBDA_RUNTIME_API), the link-local
// range and the instance metadata service (169.254.0.0/16, fe80::/10,
// fd00:ec2::254). The check runs on the IP the dialer is about to connect
// to, after resolution, so a name that resolves (or re-resolves) to a
// forbidden address is refused too. An IPv6 address that carries an IPv4
// one (IPv4-mapped, -compatible and -translated, NAT64, 6to4, Teredo,
// ISATAP) is judged by the IPv4 address too, since a gateway or the
// kernel may deliver it there.
//
// Webhooks (PublicDialer) are held to more: only public addresses, not
// the private (RFC 1918), shared (CGNAT, 100.64.0.0/10), unique-local
// (fc00::/7) and other special-purpose ranges where the VPC's and the
// company's internal services live, unless a pipeline opts in.
package dialguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// ErrForbiddenAddress is matched (errors.Is) by every refusal.
var ErrForbiddenAddress = errors.New("address refused")

// imdsIPv6 is the instance metadata service on IPv6 (Nitro instances).
var imdsIPv6 = netip.MustParseAddr("fd00:ec2::254")

// Check returns an error matching ErrForbiddenAddress when ip may not be
// dialled: loopback, link-local, metadata, unspecified or multicast, as
// itself or as the IPv4 address it embeds.
func Check(ip netip.Addr) error {
	ip = ip.Unmap()
	if err := checkOne(ip); err != nil {
		return err
	}
	if v4, how, ok := embeddedIPv4(ip); ok {
		if err := checkOne(v4); err != nil {
			return fmt.Errorf("%w (%s embeds %s as %s)", err, ip, v4, how)
		}
	}
	return nil
}

// CheckPublic is Check, and refuses every address that is not public
// (nonPublic), as itself or as the IPv4 address it embeds.
func CheckPublic(ip netip.Addr) error {
	if err := Check(ip); err != nil {
		return err
	}
	ip = ip.Unmap()
	if what := nonPublic(ip); what != "" {
		return fmt.Errorf("%w: %s is %s, not a public address (a receiver inside the network needs webhooks.allow_private_network: true and the pipeline in the stack's privateWebhooks context)", ErrForbiddenAddress, ip, what)
	}
	if v4, how, ok := embeddedIPv4(ip); ok {
		if what := nonPublic(v4); what != "" {
			return fmt.Errorf("%w: %s embeds %s as %s, which is %s, not a public address (a receiver inside the network needs webhooks.allow_private_network: true and the pipeline in the stack's privateWebhooks context)", ErrForbiddenAddress, ip, v4, how, what)
		}
	}
	return nil
}

// nonPublicRanges are the special-purpose ranges (RFC 6890 and its
// successors) that reach no public receiver, besides those Check refuses.
var nonPublicRanges = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), `in "this network" (0.0.0.0/8)`},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (10.0.0.0/8)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space, carrier-grade NAT (100.64.0.0/10)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (172.16.0.0/12)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved for protocol assignments (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved for documentation (192.0.2.0/24)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (192.168.0.0/16)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved for documentation (198.51.100.0/24)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved for documentation (203.0.113.0/24)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved for benchmarking (198.18.0.0/15)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240.0.0.0/4, broadcast included)"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (fc00::/7)"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (fec0::/10)"},
	{netip.MustParsePrefix("100::/64"), "a discard prefix (100::/64)"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved for documentation (2001:db8::/32)"},
}

func nonPublic(ip netip.Addr) string {
	for _, r := range nonPublicRanges {
		if r.prefix.Contains(ip) {
			return r.what
		}
	}
	return ""
}

// The IPv6 forms that carry an IPv4 address.
var (
	compatible = netip.MustParsePrefix("::/96")           // IPv4-compatible (deprecated)
	translated = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (SIIT)
	nat64      = netip.MustParsePrefix("64:ff9b::/96")    // NAT64, well-known prefix
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")  // NAT64, local use
	sixToFour  = netip.MustParsePrefix("2002::/16")       // 6to4
	teredo     = netip.MustParsePrefix("2001::/32")       // Teredo
)

// embeddedIPv4 returns the IPv4 address an IPv6 address carries, and the
// name of the form. ip is not IPv4-mapped (Check unmaps it).
func embeddedIPv4(ip netip.Addr) (v4 netip.Addr, how string, ok bool) {
	if !ip.Is6() {
		return netip.Addr{}, "", false
	}
	b := ip.As16()
	last := netip.AddrFrom4([4]byte(b[12:16]))
	switch {
	case compatible.Contains(ip):
		return last, "IPv4-compatible", true
	case translated.Contains(ip):
		return last, "IPv4-translated", true
	case nat64.Contains(ip):
		return last, "NAT64", true
	case nat64Local.Contains(ip):
		// The local-use prefix may be any length up to /96; the last 32
		// bits are the IPv4 address in the /96 layout networks use.
		return last, "NAT64 (local-use prefix)", true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), "6to4", true
	case teredo.Contains(ip):
		// The client's address, each bit inverted.
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), "Teredo", true
	case b[8]&^0x02 == 0 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe:
		return last, "ISATAP", true
	}
	return netip.Addr{}, "", false
}

func checkOne(ip netip.Addr) error {
	switch {
	case ip == imdsIPv6:
		return fmt.Errorf("%w: %s is the instance metadata service", ErrForbiddenAddress, ip)
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return fmt.Errorf("%w: %s is link-local (where instance metadata lives)", ErrForbiddenAddress, ip)
	case ip.IsLoopback():
		return fmt.Errorf("%w: %s is loopback (the function's own sandbox, where the Lambda runtime API listens)", ErrForbiddenAddress, ip)
	case ip.IsUnspecified(), ip.IsMulticast():
		return fmt.Errorf("%w: %s is not a unicast address", ErrForbiddenAddress, ip)
	case ip == runtimeAPI:
		return fmt.Errorf("%w: %s is the Lambda runtime API", ErrForbiddenAddress, ip)
	}
	return nil
}

// runtimeAPI is the address of AWS_LAMBDA_RUNTIME_API (host:port), in case
// it is ever neither loopback nor link-local; invalid when unset.
var runtimeAPI = func() netip.Addr {
	ap, err := netip.ParseAddrPort(os.Getenv("AWS_LAMBDA_RUNTIME_API"))
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}()

// Dialer returns a dial function bounded by timeout per connection attempt
// that refuses forbidden addresses (Check) at connect time. allowLoopback
// exempts loopback only (never metadata or link-local): for tests whose
// Kafka and webhook receivers listen on 127.0.0.1; the functions never
// pass it.
func Dialer(timeout time.Duration, allowLoopback ...bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return dialer(timeout, Check, allowLoopback)
}

// PublicDialer is Dialer for webhooks: it refuses every address that is
// not public (CheckPublic).
func PublicDialer(timeout time.Duration, allowLoopback ...bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return dialer(timeout, CheckPublic, allowLoopback)
}

func dialer(timeout time.Duration, check func(netip.Addr) error, allowLoopback []bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	loopbackOK := len(allowLoopback) > 0 && allowLoopback[0]
	d := &net.Dialer{
		Timeout:   timeout,
		KeepAlive: 30 * time.Second,
		// Control runs for each resolved address just before connect(2).
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: cannot check %q", ErrForbiddenAddress, address)
			}
			if loopbackOK && ap.Addr().Unmap().IsLoopback() {
				return nil
			}
			return check(ap.Addr())
		},
	}
	return d.DialContext
}
