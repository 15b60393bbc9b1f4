package source

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"
)

// pair returns a read-ahead client connection and the server's end, over
// loopback TCP.
func pair(t *testing.T) (*readAheadConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := ReadAhead((&net.Dialer{}).DialContext)(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := <-accepted
	if srv == nil {
		t.Fatal("no connection accepted")
	}
	t.Cleanup(func() { c.Close(); srv.Close() })
	return c.(*readAheadConn), srv
}

// The bytes a server sends in writes of random sizes, more than the
// read-ahead holds, come out of reads of random sizes whole and in order,
// then io.EOF once the server closes.
func TestReadAheadKeepsEveryByteInOrder(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	reads := rand.New(rand.NewPCG(seed, ^seed)) // the reader's: rng is the writer's
	for round := range 5 {
		c, srv := pair(t)
		want := make([]byte, readAheadChunk*readAheadChunks*2+rng.IntN(readAheadChunk))
		for i := range want {
			want[i] = byte(rng.Uint32())
		}
		go func() {
			rest := want
			for len(rest) > 0 {
				n := min(len(rest), 1+rng.IntN(3*readAheadChunk))
				if _, err := srv.Write(rest[:n]); err != nil {
					return
				}
				rest = rest[n:]
			}
			srv.Close()
		}()
		// The reader waits first, so the server fills the read-ahead.
		time.Sleep(20 * time.Millisecond)
		var got []byte
		buf := make([]byte, 3*readAheadChunk)
		for {
			n, err := c.Read(buf[:1+reads.IntN(len(buf))])
			got = append(got, buf[:n]...)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("round %d: read after %d bytes: %v", round, len(got), err)
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d: read %d bytes, not the %d sent in order", round, len(got), len(want))
		}
		if n, err := c.Read(buf); n != 0 || !errors.Is(err, io.EOF) {
			t.Fatalf("round %d: read after the end: %d, %v; want io.EOF again", round, n, err)
		}
	}
}

// A read deadline fails a read that finds nothing to read, as on any
// connection, and the connection reads on once the deadline moves.
func TestReadAheadDeadline(t *testing.T) {
	c, srv := pair(t)
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	start := time.Now()
	_, err := c.Read(make([]byte, 10))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with nothing sent: %v; want os.ErrDeadlineExceeded", err)
	}
	if waited := time.Since(start); waited < 40*time.Millisecond || waited > 5*time.Second {
		t.Fatalf("read failed after %v; the deadline was 50ms", waited)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("deadline error %v is not a net.Error timeout", err)
	}
	if _, err := c.Read(make([]byte, 10)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v; want os.ErrDeadlineExceeded", err)
	}
	srv.Write([]byte("hello"))
	c.SetDeadline(time.Time{})
	buf := make([]byte, 10)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("read after the deadline was cleared: %q, %v", buf[:n], err)
	}
}

// Close ends a read waiting in another goroutine, as interrupting a
// binlog stream needs.
func TestReadAheadCloseEndsAWaitingRead(t *testing.T) {
	c, _ := pair(t)
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("read returned no error after Close")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read still waiting 5 s after Close")
	}
}

// A deadline set while a read waits applies to it, as on a socket (a
// context's end interrupts a read that way in pgconn, for one).
func TestReadAheadDeadlineMovedWhileWaiting(t *testing.T) {
	c, srv := pair(t)
	c.SetReadDeadline(time.Now().Add(time.Hour))
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c.SetReadDeadline(time.Now().Add(-time.Second))
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("interrupted read: %v; want os.ErrDeadlineExceeded", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read still waiting 5 s after its deadline was set in the past")
	}
	// The connection reads on after the interruption.
	c.SetReadDeadline(time.Time{})
	srv.Write([]byte("on"))
	buf := make([]byte, 10)
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "on" {
		t.Fatalf("read after the interruption: %q, %v", buf[:n], err)
	}
}
