package itest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// CutProxy forwards TCP connections from a loopback port to target until
// cut: then it closes every connection and refuses new ones (the port is
// closed) until mend. It stands for the network path to the checkpoint
// store, so that the store's outage harms only this test's pipeline and
// not the shared emulator other tests use.
type CutProxy struct {
	t      *testing.T
	target string
	Addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

func NewCutProxy(t *testing.T, target string) *CutProxy {
	p := &CutProxy{t: t, target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.Addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.Cut)
	return p
}

func (p *CutProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
}

// Cut closes the port and every connection through it.
func (p *CutProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Mend opens the port again.
func (p *CutProxy) Mend() {
	ln, err := net.Listen("tcp", p.Addr)
	if err != nil {
		p.t.Fatalf("reopen %s: %v", p.Addr, err)
	}
	p.serve(ln)
}
