package mysql

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
)

// TestEventBlockKeepsEveryPacket: packets read into eventBlocks, in
// chunks as go-mysql's copyN writes them, come out whole and stay as they
// were while later packets are read (the published rows alias them); a
// packet larger than a block is copied out of the block it grew (up to
// twice its size), which the next packets are not read into.
func TestEventBlockKeepsEveryPacket(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	var b eventBlock
	var got, want [][]byte
	for i := range 2000 {
		n := r.IntN(9000)
		if i%97 == 0 {
			n = eventBlockSize + r.IntN(3*eventBlockSize) // larger than a block
		}
		p := make([]byte, n)
		for j := range p {
			p[j] = byte(r.Uint32())
		}
		b.begin()
		for rest := p; len(rest) > 0; {
			c := min(len(rest), 1+r.IntN(16<<10))
			if _, err := b.Write(rest[:c]); err != nil {
				t.Fatal(err)
			}
			rest = rest[c:]
		}
		pkt := b.packet()
		if cap(b.buf) > eventBlockSize {
			t.Fatalf("after packet %d of %d bytes the next is read into its block of %d", i, n, cap(b.buf))
		}
		got, want = append(got, pkt), append(want, p)
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("packet %d (%d bytes) changed after later packets were read", i, len(want[i]))
		}
	}
}

// TestKillDumpGivesUpOnASilentServer: the KILL of a closed stream's dump
// thread (binlogConn.close) gives up on an address that accepts and never
// answers (a proxy in front of a hung server) instead of waiting out the
// binlog read timeout, 15 s, which held up every stop and reconnect.
func TestKillDumpGivesUpOnASilentServer(t *testing.T) {
	port := silentServer(t).Port
	cfg := replication.BinlogSyncerConfig{Host: "127.0.0.1", Port: uint16(port), User: "u", Password: "p", ReadTimeout: binlogReadTimeout, Dialer: (&net.Dialer{}).DialContext}
	start := time.Now()
	killDump(cfg, 42, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000})
	if d := time.Since(start); d > binlogReadTimeout/2 {
		t.Errorf("killDump waited %v on a silent server, want it to give up after about %v", d.Round(time.Millisecond), killWait)
	}
}

// TestKillDumpOnlyItsOwnThread: the KILL of a closed stream's dump thread
// is sent only where the thread of that id is a binlog dump from the
// stream's own port: behind a failover address or a proxy the second
// connection may reach a server where the id is another session. Against
// the test services' MariaDB (make services-up).
func TestKillDumpOnlyItsOwnThread(t *testing.T) {
	cfg := replication.BinlogSyncerConfig{ServerID: 4_100_000 + uint32(time.Now().UnixNano()%100_000), Host: "127.0.0.1", Port: 3306, User: "root", Password: "root",
		Charset: "utf8mb4", HeartbeatPeriod: heartbeatPeriod, ReadTimeout: binlogReadTimeout, Dialer: (&net.Dialer{}).DialContext, Localhost: "killdump test"}
	ctx := t.Context()
	probe, err := connect(ctx, cfg)
	if err != nil {
		t.Skipf("no MariaDB at 127.0.0.1:3306 (make services-up): %v", err)
	}
	defer probe.Close()
	r, err := probe.Execute("SHOW MASTER STATUS")
	if err != nil || r.RowNumber() == 0 {
		t.Fatalf("SHOW MASTER STATUS: %v", err)
	}
	file, _ := r.GetString(0, 0)
	pos, _ := r.GetUint(0, 1)
	b, err := dialBinlog(ctx, cfg, flavorMariaDB, position{File: file, Pos: uint32(pos)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.c.Close()
	id, local := b.c.GetConnectionID(), b.c.Conn.Conn.LocalAddr().(*net.TCPAddr)
	dumping := func() bool {
		r, err := probe.Execute(fmt.Sprintf("SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = %d AND COMMAND LIKE 'Binlog Dump%%'", id))
		if err != nil {
			t.Fatal(err)
		}
		return r.RowNumber() == 1
	}
	waitFor := func(want bool) bool {
		for range 50 {
			if dumping() == want {
				return true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false
	}
	if !waitFor(true) {
		t.Fatalf("no binlog dump thread %d", id)
	}
	killDump(cfg, id, &net.TCPAddr{IP: local.IP, Port: local.Port + 1})
	if !dumping() {
		t.Fatal("a dump thread from another port was killed")
	}
	killDump(cfg, id, local)
	if !waitFor(false) {
		t.Error("the stream's own dump thread was not killed")
	}
}

// silentServer listens on loopback, accepts every connection and never
// sends a byte (a proxy in front of a hung server), until the test ends.
func silentServer(t *testing.T) *net.TCPAddr {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent
		}
	}()
	return ln.Addr().(*net.TCPAddr)
}
