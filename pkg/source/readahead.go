package source

import (
	"context"
	"math"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Read-ahead of a replication connection. A stream that decodes and
// publishes each event before it reads the next leaves the socket unread
// meanwhile: the server's sender fills the socket's buffer, sleeps, and is
// woken only when the stream reads again, after which the stream waits for
// it to be scheduled (docs/hot-path.md). ReadAhead's connection reads in a
// goroutine of its own, as soon as bytes arrive, into a bounded queue of
// chunks, so the sender rarely sleeps and the stream rarely waits.
const (
	readAheadChunk  = 64 << 10 // bytes of one read
	readAheadChunks = 16       // chunks read and not yet consumed, at most
)

// ReadAhead wraps dial: its connections read ahead (above). Read deadlines
// apply to the caller's reads, as on any connection: a read that finds no
// byte queued waits for one until the deadline, then fails with
// os.ErrDeadlineExceeded. Bytes and the read error that ended the
// connection come to the caller in the order they were read.
func ReadAhead(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return newReadAheadConn(c), nil
	}
}

// Deadlines are kept as durations since clockBase, so that waiting for
// one reads the monotonic clock as a socket's does (a step of the wall
// clock moves neither), without an allocation per deadline set (go-mysql
// sets one for every packet).
var clockBase = time.Now()

const noDeadline = math.MaxInt64

type chunk struct {
	b   []byte // what one read returned, in a buffer of free's
	buf []byte // that whole buffer, to give back
	err error
}

type readAheadConn struct {
	net.Conn
	full     chan chunk
	free     chan []byte
	closed   chan struct{}
	close    sync.Once
	deadline atomic.Int64  // the read deadline as time since clockBase; noDeadline: none
	moved    chan struct{} // the deadline moved: a waiting read looks again
	cur      chunk         // the chunk being consumed
	err      error         // the error that ended reading, once consumed
}

func newReadAheadConn(c net.Conn) *readAheadConn {
	r := &readAheadConn{
		Conn:   c,
		full:   make(chan chunk, readAheadChunks),
		free:   make(chan []byte, readAheadChunks),
		closed: make(chan struct{}),
		moved:  make(chan struct{}, 1),
	}
	r.deadline.Store(noDeadline)
	for range readAheadChunks {
		r.free <- make([]byte, readAheadChunk)
	}
	go r.fill()
	return r
}

// fill reads while there is a free buffer, until a read fails.
func (r *readAheadConn) fill() {
	for {
		var buf []byte
		select {
		case buf = <-r.free:
		case <-r.closed:
			return
		}
		n, err := r.Conn.Read(buf)
		select {
		case r.full <- chunk{b: buf[:n], buf: buf, err: err}:
		case <-r.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

func (r *readAheadConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(r.cur.b) == 0 {
		if r.cur.buf != nil {
			r.free <- r.cur.buf // never blocks: free holds every buffer not queued
			r.cur = chunk{}
		}
		if r.err != nil {
			return 0, r.err
		}
		c, err := r.next()
		if err != nil {
			return 0, err
		}
		r.cur, r.err = c, c.err
	}
	n := copy(p, r.cur.b)
	r.cur.b = r.cur.b[n:]
	return n, nil
}

// next waits for the next chunk until the read deadline, which may move
// while it waits (a deadline applies to pending reads too: a net.Conn's
// user may interrupt a read by setting one in the past).
func (r *readAheadConn) next() (chunk, error) {
	for {
		select {
		case c := <-r.full:
			return c, nil
		case <-r.closed:
			return chunk{}, net.ErrClosed
		default:
		}
		var expired <-chan time.Time
		var t *time.Timer
		if d := r.deadline.Load(); d != noDeadline {
			wait := time.Duration(d) - time.Since(clockBase)
			if wait <= 0 {
				return chunk{}, os.ErrDeadlineExceeded
			}
			t = time.NewTimer(wait)
			expired = t.C
		}
		var c chunk
		var err error
		select {
		case c = <-r.full:
		case <-r.closed:
			err = net.ErrClosed
		case <-expired:
			err = os.ErrDeadlineExceeded
		case <-r.moved:
			if t != nil {
				t.Stop()
			}
			continue
		}
		if t != nil {
			t.Stop()
		}
		return c, err
	}
}

func (r *readAheadConn) SetReadDeadline(t time.Time) error {
	d := int64(noDeadline)
	if !t.IsZero() {
		d = int64(t.Sub(clockBase))
	}
	r.deadline.Store(d)
	select {
	case r.moved <- struct{}{}:
	default: // a waiting read has yet to see the last move; it sees this one too
	}
	return nil
}

func (r *readAheadConn) SetDeadline(t time.Time) error {
	r.SetReadDeadline(t)
	return r.Conn.SetWriteDeadline(t)
}

func (r *readAheadConn) Close() error {
	r.close.Do(func() { close(r.closed) })
	return r.Conn.Close()
}
