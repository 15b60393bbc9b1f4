//go:build !linux

package source

import (
	"net"
	"time"
)

// setUserTimeout: TCP_USER_TIMEOUT is Linux only; elsewhere keepalive
// probes alone find a dead connection.
func setUserTimeout(*net.TCPConn, time.Duration) error { return nil }
