package snapshot

import (
	"unsafe"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Slabs hands a chunk reader its events, rows, keys and value bytes cut
// from shared blocks: a few allocations per slabRows rows instead of
// several per row, and the database driver's row buffers, which drivers
// reuse for the next row, copied once. What it hands out is never reused;
// a block lives while anything cut from it does. The zero value is ready.
type Slabs struct {
	events []change.Event
	values []change.Value
	keys   [][]byte
	block  []byte
}

// slabRows is how many rows one slab of events, values or keys holds.
const slabRows = 256

// blockBytes is the size of a block of value bytes (larger values get a
// block of their own).
const blockBytes = 64 << 10

// emptyValue is every empty value Keep returns: zero bytes, not nil.
var emptyValue = make([]byte, 0)

// Keep returns a copy of b, a value that is not NULL: an empty b gives an
// empty slice that is not nil, since the decoders read nil as NULL (an
// empty string key read back as NULL stopped the pipeline).
func (s *Slabs) Keep(b []byte) []byte {
	if len(b) == 0 {
		return emptyValue
	}
	if len(b) > cap(s.block)-len(s.block) {
		s.block = make([]byte, 0, max(len(b), blockBytes))
	}
	n := len(s.block)
	s.block = append(s.block, b...)
	return s.block[n:len(s.block):len(s.block)]
}

// String returns a copy of b as a string, cut from a block: Keep's copy is
// never written again, so a string may hold it.
func (s *Slabs) String(b []byte) string {
	id := s.Keep(b)
	return unsafe.String(unsafe.SliceData(id), len(id))
}

// Release drops the slabs it cuts from: what was cut from them lives on,
// and later cuts come from new ones. A source calls it after an event of
// a large message (more than a block): each slab lives while anything cut
// from it does, so the event's slab, its rows and through them the
// message's bytes would otherwise stay in memory while the next events
// cut from the same slabs do, up to slabRows large messages at once.
func (s *Slabs) Release() { *s = Slabs{} }

// Event returns a zero event.
func (s *Slabs) Event() *change.Event {
	if len(s.events) == 0 {
		s.events = make([]change.Event, slabRows)
	}
	ev := &s.events[0]
	s.events = s.events[1:]
	return ev
}

// Row returns a row of n Null values.
func (s *Slabs) Row(n int) change.Row {
	if len(s.values) < n {
		s.values = make([]change.Value, slabRows*n)
	}
	r := s.values[:n:n]
	s.values = s.values[n:]
	return r
}

// Key returns a key of n nil values.
func (s *Slabs) Key(n int) Key {
	if len(s.keys) < n {
		s.keys = make([][]byte, slabRows*n)
	}
	k := s.keys[:n:n]
	s.keys = s.keys[n:]
	return k
}
