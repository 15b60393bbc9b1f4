// Package dialguard dials TCP for the Lambda functions, which connect to
// addresses that users configure (Kafka brokers, webhook URLs), while
// refusing what lives inside the function's own sandbox: loopback (where
// the Lambda runtime API listens, AWS_LAMBDA_RUNTIME_API), the link-local
// range and the instance metadata service (169.254.0.0/16, fe80::/10,
// fd00:ec2::254). The check runs on the IP the dialer is about to connect
// to, after resolution, so a name that resolves (or re-resolves) to a
// forbidden address is refused too.
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
// dialled.
func Check(ip netip.Addr) error {
	ip = ip.Unmap()
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
// that refuses forbidden addresses at connect time. allowLoopback exempts
// loopback only (never metadata or link-local): for tests whose Kafka and
// webhook receivers listen on 127.0.0.1; the functions never pass it.
func Dialer(timeout time.Duration, allowLoopback ...bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
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
			return Check(ap.Addr())
		},
	}
	return d.DialContext
}
