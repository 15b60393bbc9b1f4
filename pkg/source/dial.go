package source

import (
	"context"
	"net"
	"time"
)

// Dead-connection detection on every socket a source opens. A database
// that vanishes without a FIN or RST (a network partition, a security
// group change, a failover that moves the address, packets dropped) leaves
// a TCP connection that looks open forever: reads block and nothing says
// it is gone. Keepalive probes find an idle one; the user timeout finds
// one whose sent data (the replication status updates) stays unacknowledged.
const (
	// DialTimeout bounds opening a connection: an address whose packets
	// are dropped answers no SYN, and the reconnect loop must go on.
	DialTimeout = 10 * time.Second
	// keepAliveIdle, keepAliveInterval and keepAliveCount: the first probe
	// after 10 s of silence, then every 5 s; 4 unanswered end it (~30 s).
	keepAliveIdle     = 10 * time.Second
	keepAliveInterval = 5 * time.Second
	keepAliveCount    = 4
	// userTimeout is how long sent data may stay unacknowledged before
	// the kernel drops the connection (TCP_USER_TIMEOUT, Linux): without
	// it a write to a vanished peer retransmits for ~15 minutes.
	userTimeout = 30 * time.Second
)

// Dial is the dialer a source opens its database connections with: base
// (the Lambda functions' guarded dialer), or a direct one when nil, with a
// dial timeout and the dead-connection settings above on the TCP socket.
func Dial(base func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if base == nil {
		d := &net.Dialer{Timeout: DialTimeout, KeepAliveConfig: net.KeepAliveConfig{
			Enable: true, Idle: keepAliveIdle, Interval: keepAliveInterval, Count: keepAliveCount,
		}}
		base = d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, DialTimeout)
		defer cancel()
		c, err := base(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if tc, ok := c.(*net.TCPConn); ok {
			// Best effort: a socket that refuses an option still works,
			// only without that part of the detection.
			_ = tc.SetKeepAliveConfig(net.KeepAliveConfig{
				Enable: true, Idle: keepAliveIdle, Interval: keepAliveInterval, Count: keepAliveCount,
			})
			_ = setUserTimeout(tc, userTimeout)
		}
		return c, nil
	}
}
