package pipeline

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

func TestTrackerWaitsForContiguousPrefix(t *testing.T) {
	var tr tracker
	a := tr.add()
	b := tr.add()
	tr.mark(change.Position("p1"))
	c := tr.add()
	tr.mark(change.Position("p2"))

	tr.ack(b) // later ack first: nothing passes a
	if pos, _ := tr.position(); pos != nil {
		t.Fatalf("position %s before the first record was acked", pos)
	}
	tr.ack(c)
	if pos, _ := tr.position(); pos != nil {
		t.Fatalf("position %s before the first record was acked", pos)
	}
	tr.ack(a)
	pos, pending := tr.position()
	if string(pos) != "p2" || pending != 0 {
		t.Fatalf("got %q with %d pending, want p2 with 0", pos, pending)
	}
}

func TestTrackerMarkWithNothingInFlight(t *testing.T) {
	var tr tracker
	tr.mark(change.Position("p0"))
	if pos, _ := tr.position(); string(pos) != "p0" {
		t.Fatalf("got %q", pos)
	}
}

// TestTrackerRandomAckOrder checks against a model: after each ack the
// committable position is the last marker whose predecessors are all acked.
func TestTrackerRandomAckOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 50; round++ {
		var tr tracker
		type item struct {
			seq    uint64
			marker string
		}
		var items []item
		var seqs []uint64
		for i := 0; i < 3000; i++ {
			if rng.IntN(4) == 0 {
				m := "m" + strconv.Itoa(i)
				tr.mark(change.Position(m))
				items = append(items, item{marker: m})
			} else {
				s := tr.add()
				items = append(items, item{seq: s})
				seqs = append(seqs, s)
			}
		}
		acked := map[uint64]bool{}
		rng.Shuffle(len(seqs), func(i, j int) { seqs[i], seqs[j] = seqs[j], seqs[i] })
		for _, s := range seqs {
			tr.ack(s)
			acked[s] = true
			want := ""
			for _, it := range items {
				if it.marker == "" && !acked[it.seq] {
					break
				}
				if it.marker != "" {
					want = it.marker
				}
			}
			got, _ := tr.position()
			if string(got) != want {
				t.Fatalf("round %d: after acking %d got %q, want %q", round, s, got, want)
			}
		}
	}
}

// A backfill request is cleared only once a position marked after its
// hand-over is checkpointable: committed says which mark a position is.
func TestTrackerCommittedMark(t *testing.T) {
	var tr tracker
	a := tr.add()
	tr.mark(change.Position("p1")) // mark 1, behind a
	handedAt := tr.marked()        // a request handed over now
	b := tr.add()
	tr.mark(change.Position("p2")) // mark 2: carries the request
	tr.ack(a)
	if pos, mark := tr.committed(); string(pos) != "p1" || mark > handedAt {
		t.Fatalf("committed %q mark %d; want p1, a mark not after the hand-over (%d)", pos, mark, handedAt)
	}
	tr.ack(b)
	if pos, mark := tr.committed(); string(pos) != "p2" || mark <= handedAt {
		t.Fatalf("committed %q mark %d; want p2 after the hand-over (%d)", pos, mark, handedAt)
	}
	tr.mark(change.Position("p3")) // nothing in flight
	if pos, mark := tr.committed(); string(pos) != "p3" || mark != 3 {
		t.Fatalf("committed %q mark %d; want p3, 3", pos, mark)
	}
}
