package integration

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/awstest"
)

// cutProxy forwards TCP connections from a loopback port to target until
// cut: then it closes every connection and refuses new ones (the port is
// closed) until mend. It stands for the network path to the checkpoint
// store, so that the store's outage harms only this test's pipeline and
// not the shared emulator other tests use.
type cutProxy struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	p := &cutProxy{t: t, target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *cutProxy) serve(ln net.Listener) {
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

// cut closes the port and every connection through it.
func (p *cutProxy) cut() {
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

// mend opens the port again.
func (p *cutProxy) mend() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("reopen %s: %v", p.addr, err)
	}
	p.serve(ln)
}

// TestCheckpointStoreOutage cuts the pipeline off from its DynamoDB
// checkpoint store (the emulator) for 10 s, less than the 20 s lease,
// while a writer commits changes: the publisher rides it out (the old
// code stopped at the first failed checkpoint save) and, once the store
// is back, checkpoints again; the topic holds every committed change.
func TestCheckpointStoreOutage(t *testing.T) {
	e := newEnv(t, "storefault")
	awstest.Env(t)
	proxy := newCutProxy(t, strings.TrimPrefix(awstest.Endpoint, "http://"))
	t.Setenv("AWS_ENDPOINT_URL", "http://"+proxy.addr)
	t.Setenv("TRIBUTARY_LEASE_DURATION", "20s")
	e.exec(`CREATE TABLE ledger (k int PRIMARY KEY, seq bigint NOT NULL, pad text)`)
	e.exec(`ALTER TABLE ledger REPLICA IDENTITY FULL`)
	e.exec(`INSERT INTO ledger SELECT g, g, 'x' FROM generate_series(1, 50) g`)
	cfg := e.writeDynamoConfig(testTableName("storefault"), "")
	topic := e.prefix + ".public.ledger"
	p := e.start("run", "--config", cfg)
	waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= 50 })

	w := newWriter(50)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.run(context.Background(), t, e.pgURL(), 16*time.Second) }()
	time.Sleep(3 * time.Second)
	proxy.cut()
	cutAt := time.Now()
	time.Sleep(10 * time.Second)
	if p.exited() {
		t.Fatalf("tributary stopped during a 10 s store outage (lease 20 s): %v\n%s", p.err, p.out)
	}
	proxy.mend()
	wg.Wait()
	if w.err != nil {
		t.Fatal(w.err)
	}
	awaitCatchUp(t, topic, int64(50+len(w.committed())))
	waitFor(t, 30*time.Second, "a checkpoint after the outage", func() bool {
		return strings.Contains(p.out.String(), "checkpoint store reachable again") || !strings.Contains(p.out.String(), "checkpoint save failed")
	})
	if p.exited() {
		t.Fatalf("tributary stopped after the store outage: %v\n%s", p.err, p.out)
	}
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	res := verifyOracle(t, topic, w)
	t.Logf("store outage of 10 s (from %s): %d committed changes, %s", cutAt.Format("15:04:05"), len(w.committed()), res)
	if res.gaps > 0 {
		t.Fatalf("%d gaps", res.gaps)
	}
}
