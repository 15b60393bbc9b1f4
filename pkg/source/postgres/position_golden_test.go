package postgres

import (
	"reflect"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/source/sourcetest"
)

// The cursor this driver hands the capture loop at a commit, byte for
// byte: the loop seals it into the checkpoint (pkg/capture's golden
// tests), and checkpoints of every release since must read back.
const goldenCursor = `{"slot":"tributary_shop","lsn":"0/1A2B3C8","commit":"0/1A2B300","dropped":{"16401":"public.old"},"full_keys":{"16390":["id"]}}`

// goldenSealed is goldenCursor as the loop sealed it, goldenLegacy an
// unfinished backfill of a release that backfilled before streaming.
const (
	goldenSealed = `{"slot":"tributary_shop","lsn":"0/1A2B3C8","commit":"0/1A2B300","dropped":{"16401":"public.old"},"full_keys":{"16390":["id"]},` +
		`"backfilled":true,"tables":{"public.orders":16390},"snapshot":{"tables":[{"table":"public.orders","key":["AAAB"],"rows":1024,"initial":true}]}}`
	goldenLegacy = `{"slot":"s","lsn":"0/16B3748","backfilled":false,"backfill":{"done":["public.a"],"table":"public.b","key":["AAE="],"rows":7}}`
)

func TestPositionGolden(t *testing.T) {
	s := &Source{slot: "tributary_shop", lastCommit: 0x1A2B300,
		dropped: map[uint32]string{16401: "public.old"}, fullKeys: map[uint32][]string{16390: {"id"}}}
	if got := string(s.cursor(0x1A2B3C8)); got != goldenCursor {
		t.Fatalf("cursor\n %s\nwant\n %s", got, goldenCursor)
	}
	for _, doc := range []string{goldenCursor, sourcetest.Cursor(t, goldenSealed)} {
		p, lsn, err := decodePosition([]byte(doc))
		if err != nil || lsn != 0x1A2B3C8 || p.Slot != "tributary_shop" || p.Commit != "0/1A2B300" ||
			!reflect.DeepEqual(p.Dropped, map[uint32]string{16401: "public.old"}) || !reflect.DeepEqual(p.FullKeys, map[uint32][]string{16390: {"id"}}) {
			t.Fatalf("decode %s: %+v %x %v", doc, p, lsn, err)
		}
	}
	p, lsn, err := decodePosition([]byte(sourcetest.Cursor(t, goldenLegacy)))
	if err != nil || lsn != 0x16B3748 || p.Backfill == nil {
		t.Fatalf("legacy: %+v %v", p, err)
	}
	st := legacyState(p.Backfill, []*relation{{schema: "public", name: "a"}, {schema: "public", name: "b"}, {schema: "public", name: "c"}})
	if !reflect.DeepEqual(st.Done, []string{"public.a"}) || len(st.Tables) != 2 || st.Tables[0].Table != "public.b" ||
		len(st.Tables[0].Key) != 1 || string(st.Tables[0].Key[0]) != "\x00\x01" || st.Tables[0].Rows != 7 || len(st.Tables[1].Key) != 0 {
		t.Fatalf("legacy state: %+v", st)
	}
}
