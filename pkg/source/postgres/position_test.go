package postgres

import (
	"reflect"
	"testing"
)

// TestPositionKeyBytes: a key that is not UTF-8 (a SQL_ASCII database)
// survives the position's JSON byte for byte; a position written before
// Key existed still resumes from After.
func TestPositionKeyBytes(t *testing.T) {
	key := [][]byte{[]byte("k\xe9"), {0xff, 0x00, 'a'}}
	p := position{Slot: "s", LSN: "0/1", Backfill: &backfillProgress{Table: "public.t", After: []string{"k\xe9", "\xff\x00a"}, Key: key, Rows: 1}}
	got, _, err := decodePosition(p.encode())
	if err != nil || !reflect.DeepEqual(got.Backfill.resumeKey(), key) {
		t.Fatalf("round trip: %q %v", got.Backfill.resumeKey(), err)
	}
	old, _, err := decodePosition([]byte(`{"slot":"s","lsn":"0/1","backfill":{"table":"public.t","after":["42","x"],"rows":1}}`))
	if err != nil || !reflect.DeepEqual(old.Backfill.resumeKey(), [][]byte{[]byte("42"), []byte("x")}) {
		t.Fatalf("old position: %+v %v", old.Backfill, err)
	}
}

func TestPositionBackfillProgress(t *testing.T) {
	p := position{Slot: "s", LSN: "0/16B3748", Backfill: &backfillProgress{
		Done: []string{"public.a"}, Table: "public.b", After: []string{"42", "x,y"}, Rows: 1042,
	}}
	got, lsn, err := decodePosition(p.encode())
	if err != nil || lsn != 0x16B3748 || !reflect.DeepEqual(got, p) {
		t.Fatalf("round trip: %+v %x %v", got, lsn, err)
	}
	for _, bad := range []string{
		`{"slot":"s","lsn":"0/1","backfill":{"after":["1"],"rows":1}}`,         // a key without its table
		`{"slot":"s","lsn":"0/1","backfill":{"table":"public.t","rows":-1}}`,   // negative count
		`{"slot":"s","lsn":"0/1","backfill":{"table":"public.t","after":[1]}}`, // key values are text
		`{"slot":"s","lsn":"0/1","backfill":{"table":"public.t","done":"a"}}`,  // done is a list
	} {
		if _, _, err := decodePosition([]byte(bad)); err == nil {
			t.Errorf("decoded %s", bad)
		}
	}
}

// FuzzDecodePositionProgress: a checkpointed position with backfill
// progress decodes to something that encodes back to itself.
func FuzzDecodePositionProgress(f *testing.F) {
	f.Add([]byte(`{"slot":"s","lsn":"0/16B3748","backfilled":false,"backfill":{"done":["public.a"],"table":"public.b","after":["42"],"rows":1000}}`))
	f.Add([]byte(`{"slot":"s","lsn":"0/0","backfill":{}}`))
	f.Add([]byte(`{"slot":"s","lsn":"0/1","backfilled":true,"tables":{"public.a":16384, "public.b" : 16390}}`))
	f.Add([]byte(`{"slot":"s","lsn":"0/1","backfill":{"table":"public.t","after":["k�"],"key":["a+k="],"rows":1000}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, lsn, err := decodePosition(b)
		if err != nil {
			return
		}
		if p.Backfill != nil && p.Backfill.Rows < 0 {
			t.Fatalf("inconsistent progress accepted: %s", b)
		}
		again, lsn2, err := decodePosition(p.encode())
		if err != nil || string(again.encode()) != string(p.encode()) || lsn2 != lsn {
			t.Fatalf("round trip of %q: %+v %d %v", b, again, lsn2, err)
		}
	})
}

// TestPositionDroppedAndFullKeys: the dropped tables and the keys of the
// tables under REPLICA IDENTITY FULL survive the position's JSON (a
// keyless table's key stays recorded, as no key).
func TestPositionDroppedAndFullKeys(t *testing.T) {
	p := position{Slot: "s", LSN: "0/1",
		Dropped: map[uint32]string{16: "public.t"}, FullKeys: map[uint32][]string{16: {"k", "r"}, 18: nil}}
	got, _, err := decodePosition(p.encode())
	if err != nil || !reflect.DeepEqual(got.Dropped, p.Dropped) || !reflect.DeepEqual(got.FullKeys, p.FullKeys) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	if _, ok := got.FullKeys[18]; !ok {
		t.Fatalf("the keyless table's entry was lost: %v", got.FullKeys)
	}
}
