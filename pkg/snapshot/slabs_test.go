package snapshot

import (
	"bytes"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// What Slabs hands out stays as it was handed out: a kept value does not
// follow the driver's buffer it came from, growing one does not overwrite
// the next, and rows, keys and events are never shared.
func TestSlabsHandOutIndependentPieces(t *testing.T) {
	var s Slabs
	buf := []byte("first")
	a := s.Keep(buf)
	copy(buf, "XXXXX")
	b := s.Keep([]byte("second"))
	_ = append(a, "!!!"...)
	if string(a) != "first" || string(b) != "second" {
		t.Fatalf("kept %q and %q, want first and second", a, b)
	}
	big := bytes.Repeat([]byte{'z'}, blockBytes+1)
	if got := s.Keep(big); !bytes.Equal(got, big) {
		t.Fatal("a value larger than a block was not kept whole")
	}
	seen := map[*change.Event]bool{}
	var rows []change.Row
	var keys []Key
	for i := range 3 * slabRows {
		ev := s.Event()
		if seen[ev] || ev.Op != 0 || ev.Table != nil {
			t.Fatalf("event %d handed out twice or not zero", i)
		}
		seen[ev] = true
		r, k := s.Row(3), s.Key(2)
		if len(r) != 3 || cap(r) != 3 || len(k) != 2 || cap(k) != 2 {
			t.Fatalf("row %d: len/cap %d/%d, key %d/%d", i, len(r), cap(r), len(k), cap(k))
		}
		r[0], k[1] = change.IntValue(int64(i)), []byte{byte(i)}
		rows, keys = append(rows, r), append(keys, k)
	}
	for i := range rows {
		if rows[i][0].Int != int64(i) || rows[i][1].Kind != change.Null || keys[i][1][0] != byte(i) || keys[i][0] != nil {
			t.Fatalf("row %d was overwritten: %+v %v", i, rows[i], keys[i])
		}
	}
}

// An empty value is not NULL: Keep of zero bytes (nil or not) is an empty
// slice that is not nil, as the sources' decoders read nil as NULL.
func TestKeepEmptyIsNotNull(t *testing.T) {
	var s Slabs
	for _, b := range [][]byte{nil, {}, []byte("x")[:0]} {
		if got := s.Keep(b); got == nil || len(got) != 0 {
			t.Fatalf("Keep(%#v) = %#v, want an empty slice that is not nil", b, got)
		}
	}
	if got := s.Keep([]byte("ab")); string(got) != "ab" {
		t.Fatalf("Keep(ab) = %q", got)
	}
}

// TestSlabsRelease: after Release the next event, row and value bytes come
// from new slabs, so nothing cut afterwards keeps the released slabs (and
// what their events point to) in memory.
func TestSlabsRelease(t *testing.T) {
	var s Slabs
	ev, row, b := s.Event(), s.Row(3), s.Keep([]byte("large"))
	s.Event()
	s.Release()
	ev2, _, _ := s.Event(), s.Row(3), s.Keep([]byte("next"))
	if len(s.events) != slabRows-1 || len(s.values) != slabRows*3-3 || len(s.block) != len("next") {
		t.Errorf("after Release the cuts do not come from new slabs: %d events, %d values, %d bytes left of the slabs",
			len(s.events), len(s.values), len(s.block))
	}
	ev.ID, row[0].Int, ev2.ID = "kept", 1, "new"
	if ev.ID != "kept" || row[0].Int != 1 || string(b) != "large" {
		t.Error("what was cut before Release changed")
	}
}
