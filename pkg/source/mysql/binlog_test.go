package mysql

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
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
