//go:build linux

package source

import (
	"context"
	"net"
	"syscall"
	"testing"
)

// Every source socket gets keepalive probes and a user timeout: the kernel's defaults (2 h idle, ~15 min of retransmits) let
// a connection whose packets vanish hang for that long.
func TestDialSetsDeadConnectionDetection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, base := range []func(context.Context, string, string) (net.Conn, error){nil, (&net.Dialer{}).DialContext} {
		c, err := Dial(base)(context.Background(), "tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := c.(*net.TCPConn).SyscallConn()
		var keepalive, idle, user int
		raw.Control(func(fd uintptr) {
			keepalive, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
			idle, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE)
			user, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout)
		})
		c.Close()
		if keepalive != 1 || idle != int(keepAliveIdle.Seconds()) {
			t.Errorf("base %v: SO_KEEPALIVE %d, TCP_KEEPIDLE %d s, want 1 and %s", base != nil, keepalive, idle, keepAliveIdle)
		}
		if user != int(userTimeout.Milliseconds()) {
			t.Errorf("base %v: TCP_USER_TIMEOUT %d ms, want %s", base != nil, user, userTimeout)
		}
	}
}
