package postgres

import (
	"bytes"
	"context"
	"testing"

	"github.com/jackc/pglogrepl"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source/sourcetest"
)

// TestStreamedEventAllocations holds the streamed hot path to its budget
// (docs/hot-path.md): a pgoutput Insert or Update of a 10-column
// row becomes an event in at most 2 allocations (pglogrepl's Parse alone
// made about 24: the message, the tuple, a struct and a copy per column).
func TestStreamedEventAllocations(t *testing.T) {
	for _, op := range []byte{'I', 'U'} {
		s := benchSource()
		var got *change.Event
		emit := func(_ context.Context, ev *change.Event) error { got = ev; return nil }
		ctx := context.Background()
		tx := txState{finalLSN: 0x16B3748, xid: 4242, commitMicros: 1_709_287_200_123_456}
		xld := pglogrepl.XLogData{WALStart: 0x16B3700, WALData: benchMessage(op)}
		var err error
		allocs := testing.AllocsPerRun(2000, func() {
			xld.WALStart += 0x100
			if err == nil {
				err = s.handle(ctx, &tx, xld, sourcetest.FuncStream(emit))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || got.After == nil {
			t.Fatalf("%c: no event emitted", op)
		}
		if allocs > 2 {
			t.Errorf("%c: %v allocations per streamed event, want at most 2", op, allocs)
		}
	}
}

// TestStreamedValuesOutliveTheMessage: pgconn reuses the buffer a
// replication message arrives in for the next one (pgproto3's Receive),
// while an event's rows live on (pkg/snapshot keeps After images while a
// window is open). The values of an event must not change when that
// buffer is overwritten, and decoding must not write into it (a bytea is
// decoded in place, over the source's own copy).
func TestStreamedValuesOutliveTheMessage(t *testing.T) {
	s := benchSource()
	var evs []*change.Event
	emit := func(_ context.Context, ev *change.Event) error {
		// The struct is the source's to refill after the call (pkg/change):
		// keep a copy of it, and its rows, which are never reused.
		c := *ev
		evs = append(evs, &c)
		return nil
	}
	ctx := context.Background()
	tx := txState{finalLSN: 0x16B3748, xid: 4242}
	buf := benchMessage('I')
	sent := bytes.Clone(buf)
	if err := s.handle(ctx, &tx, pglogrepl.XLogData{WALStart: 0x16B3700, WALData: buf}, sourcetest.FuncStream(emit)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, sent) {
		t.Fatal("decoding wrote into the replication message's buffer")
	}
	want := make([]string, len(evs[0].After))
	for i, v := range evs[0].After {
		want[i] = v.String()
	}
	// The next message arrives in the same buffer.
	for i := range buf {
		buf[i] = 0xff
	}
	for i, v := range evs[0].After {
		if v.String() != want[i] {
			t.Errorf("column %s: %s after the buffer was reused, %s before", benchColumns[i].name, v, want[i])
		}
	}
}

// TestStreamedEmptyTextIsNotNull: an empty string is a value, not a NULL,
// once its bytes are a sub-slice of the message (a zero-length one).
func TestStreamedEmptyTextIsNotNull(t *testing.T) {
	s := benchSource()
	var got change.Row
	emit := func(_ context.Context, ev *change.Event) error { got = ev.After; return nil }
	texts := []string{}
	for _, c := range benchColumns {
		texts = append(texts, c.text)
	}
	texts[2], texts[7] = "", "" // note text, status varchar
	tx := txState{finalLSN: 0x16B3748}
	if err := s.handle(context.Background(), &tx, pglogrepl.XLogData{WALStart: 0x16B3700, WALData: insertMessage(16384, texts...)}, sourcetest.FuncStream(emit)); err != nil {
		t.Fatal(err)
	}
	for _, j := range []int{2, 7} {
		if v := got[j]; v.Kind != change.Text || v.Bytes == nil || len(v.Bytes) != 0 {
			t.Errorf("column %s: %v (bytes %#v), want an empty text", benchColumns[j].name, v, v.Bytes)
		}
	}
}

func TestAppendSequence(t *testing.T) {
	for _, c := range []struct {
		commit, lsn uint64
		want        string
	}{
		{0, 24023160, `[null,"24023160"]`},
		{24023128, 24023160, `["24023128","24023160"]`},
		{1 << 63, 1<<64 - 1, `["9223372036854775808","18446744073709551615"]`},
	} {
		if got := string(appendSequence(nil, c.commit, c.lsn)); got != c.want {
			t.Errorf("appendSequence(%d, %d) = %s, want %s", c.commit, c.lsn, got, c.want)
		}
	}
}
