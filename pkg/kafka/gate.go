package kafka

import (
	"context"
	"net"
	"sync/atomic"
)

// writeGate lets a producer's connections write to a broker only while a
// check passes (GateWrites): at least once, the check is the checkpoint
// store's lease. Failing records that are still buffered when the lease is
// found lost (Producer.AbortBuffered) cannot be relied on alone: a task
// frozen (SIGSTOP, a stuck VM) with records buffered, or lingering, or
// waiting for a retry, runs again with franz-go's goroutines and its own
// lease check racing, and a linger timer that expired while it was frozen
// fires at once, so the batch would be written before anything noticed
// that the lease ran out meanwhile. The gate makes every write, and every
// new connection, look at the lease first.
type writeGate struct {
	check atomic.Pointer[func() error]
}

// err is the check's verdict: nil while writes may go out (or no check is
// set).
func (g *writeGate) err() error {
	if f := g.check.Load(); f != nil {
		return (*f)()
	}
	return nil
}

// dialer wraps dial: no connection is made while the check fails, and the
// connections it makes refuse every write once it fails.
func (g *writeGate) dialer(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if err := g.err(); err != nil {
			return nil, err
		}
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &gatedConn{Conn: conn, gate: g}, nil
	}
}

// gatedConn is a broker connection whose writes pass through the gate. A
// refused write writes nothing; franz-go fails the request and drops the
// connection.
type gatedConn struct {
	net.Conn
	gate *writeGate
}

func (c *gatedConn) Write(b []byte) (int, error) {
	if err := c.gate.err(); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// GateWrites makes the producer write to brokers only while owned returns
// nil: every write to a broker connection (and every dial) calls it first,
// and writes nothing when it fails. What was handed to the producer and
// not yet written when owned starts failing is never written (it fails,
// after its retries, unless AbortBuffered fails it first). The pipeline
// passes its checkpoint store's Owned at least once.
func (p *Producer) GateWrites(owned func() error) {
	if p == nil || p.gate == nil {
		return
	}
	if owned == nil {
		p.gate.check.Store(nil)
		return
	}
	p.gate.check.Store(&owned)
}
