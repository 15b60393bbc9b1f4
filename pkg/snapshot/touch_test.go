package snapshot

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// docTable is s.t(k int primary key, title text, body text), body TOASTed.
var docTable = &change.Table{ID: change.TableID{Schema: "s", Name: "t"}, Key: []int{0},
	Columns: []change.Column{{Name: "k"}, {Name: "title"}, {Name: "body"}}}

// docDB serves docTable's rows, k → title, body = "body<k>".
type docDB struct {
	memDB
	titles map[int64]string
}

func (d *docDB) Session(context.Context) (Session, error) { return d, nil }

func (d *docDB) ReadChunk(_ context.Context, _ string, after, until Key, limit int) ([]Row, error) {
	var out []Row
	for k := int64(1); k <= 100 && len(out) < limit; k++ {
		if title, ok := d.titles[k]; ok {
			out = append(out, Row{Key: Key{[]byte(strconv.FormatInt(k, 10))}, Event: &change.Event{Table: docTable, Op: change.OpRead,
				After: change.Row{change.IntValue(k), change.TextValue(title), change.TextValue("body" + strconv.FormatInt(k, 10))}}})
		}
	}
	return out, nil
}

func doc(k int64, title, body string) change.Row {
	r := change.Row{change.IntValue(k), change.TextValue(title), change.TextValue(body)}
	if body == "" {
		r[2] = change.Value{Kind: change.Unavailable}
	}
	return r
}

// TestWindowKeepsUnavailableValues: after the chunk is read, the stream
// changes its rows in the window with images that lack the unchanged TOASTed body (""
// below). The chunk's row is then the only copy of the body: in its place
// comes an r row of the stream's newest image, the body from the chunk —
// after the stream's changes, and never with an older title. A row whose
// body a change of the window carried, a deleted row and an untouched row
// are as before: nothing, nothing, the chunk's row; so is a key change of
// a row whose body a change of the window carried (the chunk's is older).
func TestWindowKeepsUnavailableValues(t *testing.T) {
	db := &docDB{memDB: memDB{marks: make(chan string, 16)},
		titles: map[int64]string{1: "a", 2: "a", 3: "a", 4: "a", 5: "a", 6: "a", 7: "a"}}
	e := New(db, Config{Parallelism: 1, ChunkRows: 10, IDPrefix: "t", TableName: memName})
	var stream []*change.Event
	emit := func(_ context.Context, ev *change.Event) error { stream = append(stream, ev); return nil }
	apply := func(op change.Op, before, after change.Row) {
		ev := &change.Event{Table: docTable, Op: op, Before: before, After: after}
		if err := e.Observe(context.Background(), ev, emit); err != nil {
			t.Error(err)
		}
		stream = append(stream, ev)
	}
	db.beforeHigh = func() {
		if db.beforeHigh == nil {
			return
		}
		db.beforeHigh = nil
		apply('u', nil, doc(1, "b", ""))     // title only: the chunk has the body
		apply('u', nil, doc(1, "c", ""))     // and again: the newest title wins
		apply('u', nil, doc(2, "b", "new2")) // the body sent...
		apply('u', nil, doc(2, "c", ""))     // ...then unchanged: the stream has it
		apply('d', doc(3, "", ""), nil)      // a primary key change 3 → 30,
		apply('c', nil, doc(30, "b", ""))    // lacking the body
		apply('d', doc(4, "", ""), nil)      // deleted
		apply('u', nil, doc(5, "b", ""))     // updated,
		apply('d', doc(5, "", ""), nil)      // then deleted
		apply('u', nil, doc(7, "b", "new7")) // the body sent (the chunk's is older),
		apply('d', doc(7, "", ""), nil)      // then a key change 7 → 70:
		apply('c', nil, doc(70, "b", ""))    // not the chunk's stale body
	}
	snapshotTable(t, e, db.marks, emit, 10*time.Second)

	var got []string
	for _, ev := range stream[12:] {
		var parts []string
		for _, v := range ev.After {
			parts = append(parts, v.String())
		}
		got = append(got, ev.Op.String()+"("+strings.Join(parts, ",")+")")
	}
	want := []string{`r(1,"c","body1")`, `r(30,"b","body3")`, `r(6,"a","body6")`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after the stream's changes:\n%v\nwant\n%v", got, want)
	}
	if len(stream) > 12 && !strings.HasSuffix(stream[12].ID, ":1") {
		t.Errorf("merged row's ID %q does not name its key", stream[12].ID)
	}
}
