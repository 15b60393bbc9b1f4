package mongodb

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// fakeStream hands a sequence of raw events to Stream, as the server's
// change stream would, then ends the test's stream by cancelling it.
type fakeStream struct {
	events []bson.Raw
	i      int
	end    context.CancelFunc
	closed bool
}

func (f *fakeStream) TryNext(context.Context) bool {
	if f.i < len(f.events) {
		f.i++
		return true
	}
	f.end()
	return false
}
func (f *fakeStream) Err() error                  { return nil }
func (f *fakeStream) ID() int64                   { return 1 }
func (f *fakeStream) ResumeToken() bson.Raw       { return nil }
func (f *fakeStream) RemainingBatchLength() int   { return len(f.events) - f.i }
func (f *fakeStream) Close(context.Context) error { f.closed = true; return nil }
func (f *fakeStream) current() bson.Raw           { return f.events[f.i-1] }

// recStream is the loop's side as a list of what it was told, in order.
type recStream struct{ got []string }

func (r *recStream) Change(_ context.Context, ev *change.Event) error {
	r.got = append(r.got, fmt.Sprintf("change %s.%s %s", ev.Table.ID.DB, ev.Table.ID.Name, ev.Op))
	return nil
}
func (r *recStream) Commit(_ context.Context, cur change.Position, _ int64) error {
	c, err := DecodeCursor(cur)
	if err != nil {
		return err
	}
	s := "commit " + c.Token.Lookup("_data").StringValue()
	if c.StartAfter {
		s += " start_after"
	}
	r.got = append(r.got, s)
	return nil
}
func (r *recStream) Heartbeat(context.Context, change.Position) error { return nil }
func (r *recStream) Watermark(context.Context, string) error          { return nil }
func (r *recStream) Captured(record json.RawMessage, _ []string) {
	r.got = append(r.got, "captured "+string(record))
}
func (r *recStream) Added(names []string) { r.got = append(r.got, "added "+strings.Join(names, ",")) }
func (r *recStream) Gone(name string)     { r.got = append(r.got, "gone "+name) }
func (r *recStream) Again(name string)    { r.got = append(r.got, "again "+name) }

var _ source.Stream = (*recStream)(nil)

// streamEvents runs a Source on scope and captured set, reading each of
// streams in turn (a new one after each invalidate), and returns what
// the loop was told and the cursors the streams after the first were
// opened at.
func streamEvents(t *testing.T, scope string, include, captured []string, streams ...[]string) ([]string, []Cursor) {
	t.Helper()
	d, err := NewDriver(Config{Connection: Connection{URI: "mongodb://127.0.0.1:1"}, Include: include, Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var fakes []*fakeStream
	for _, evs := range streams {
		f := &fakeStream{end: cancel}
		for _, e := range evs {
			f.events = append(f.events, ext(t, e))
		}
		fakes = append(fakes, f)
	}
	d.captured = slices.Clone(captured)
	d.cursor = Cursor{OperationTime: bson.Timestamp{T: 1, I: 1}}
	if scope == ScopeCollection {
		d.watchDB, d.watchCol, _ = strings.Cut(captured[0], ".")
	}
	d.stream = fakes[0]
	var opened []Cursor
	d.open = func(_ context.Context, c Cursor) (changeStream, error) {
		opened = append(opened, c)
		if len(opened) >= len(fakes) {
			t.Fatalf("stream %d opened; the test has %d", len(opened)+1, len(fakes))
		}
		return fakes[len(opened)], nil
	}
	s := &Source{d: d, name: "p", tables: map[string]*change.Table{}}
	rec := &recStream{}
	if err := s.Stream(ctx, rec); err != context.Canceled {
		t.Fatalf("stream ended: %v", err)
	}
	for i, f := range fakes[:len(fakes)-1] {
		if !f.closed {
			t.Errorf("stream %d not closed", i+1)
		}
	}
	return rec.got, opened
}

// Events in the shapes of the MongoDB specifications' change-stream tests
// (our own data): _id the resume token, clusterTime, ns, and for a rename
// its "to"; an invalidate has no ns.
func evt(tok, op, rest string) string {
	s := `{"_id": {"_data": "` + tok + `"}, "operationType": "` + op + `", "clusterTime": {"$timestamp": {"t": 1700000000, "i": 1}}`
	if rest != "" {
		s += ", " + rest
	}
	return s + "}"
}

func insertInto(tok, db, coll string, id int) string {
	return evt(tok, "insert", fmt.Sprintf(`"ns": {"db": %q, "coll": %q}, "documentKey": {"_id": %d}, "fullDocument": {"_id": %d}`, db, coll, id, id))
}

func sameLines(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("the loop was told\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// A collection stream whose collection is dropped, as a real server does
// it: drop, then invalidate. The collection leaves the captured set at
// the drop (its snapshot ends: Gone), the invalidate's token is committed
// to be started after, and a new stream opens after it
// (startAfter), which carries the collection created anew: it joins the
// set again, captured from its first document.
func TestCollectionStreamDropInvalidateRecreate(t *testing.T) {
	got, opened := streamEvents(t, ScopeCollection, []string{`db0\.c0`}, []string{"db0.c0"},
		[]string{
			insertInto("A1", "db0", "c0", 1),
			evt("A2", "drop", `"ns": {"db": "db0", "coll": "c0"}`),
			evt("A3", "invalidate", ""),
		},
		[]string{insertInto("B1", "db0", "c0", 2)},
	)
	sameLines(t, got, []string{
		"change db0.c0 c", "commit A1",
		"gone db0.c0", `captured []`, "commit A2",
		"commit A3 start_after",
		`captured ["db0.c0"]`, "change db0.c0 c", "commit B1",
	})
	if len(opened) != 1 || opened[0].Token.Lookup("_data").StringValue() != "A3" || !opened[0].StartAfter {
		t.Errorf("reopened at %+v, want startAfter A3", opened)
	}
}

// mongo-java-server's collection stream: a drop without ns, no
// invalidate, the stream goes on. The collection is the watched one.
func TestCollectionStreamDropWithoutNamespace(t *testing.T) {
	got, opened := streamEvents(t, ScopeCollection, []string{`db0\.c0`}, []string{"db0.c0"},
		[]string{evt("A1", "drop", ""), insertInto("A2", "db0", "c0", 1)},
	)
	sameLines(t, got, []string{"gone db0.c0", `captured []`, "commit A1", `captured ["db0.c0"]`, "change db0.c0 c", "commit A2"})
	if len(opened) != 0 {
		t.Errorf("reopened: %+v", opened)
	}
}

// An invalidate the loop has not seen a drop for (resumed after the drop,
// before the invalidate) still takes the watched collection out.
func TestCollectionStreamInvalidateAlone(t *testing.T) {
	got, opened := streamEvents(t, ScopeCollection, []string{`db0\.c0`}, []string{"db0.c0"},
		[]string{evt("A3", "invalidate", "")}, nil)
	sameLines(t, got, []string{"gone db0.c0", `captured []`, "commit A3 start_after"})
	if len(opened) != 1 || !opened[0].StartAfter {
		t.Errorf("reopened at %+v", opened)
	}
}

// Renames on a cluster stream: away from the selection (gone), into it
// (added: its documents are snapshotted), and onto a captured
// collection's name with dropTarget (the one replaced is gone, its
// snapshot ends, and the name is added again).
func TestClusterStreamRenames(t *testing.T) {
	rename := func(tok, from, to string) string {
		return evt(tok, "rename", fmt.Sprintf(`"ns": {"db": "db0", "coll": %q}, "to": {"db": "db0", "coll": %q}`, from, to))
	}
	got, _ := streamEvents(t, ScopeCluster, []string{`db0\.c.*`}, []string{"db0.c0", "db0.c1", "db0.c2"},
		[]string{
			rename("A1", "c0", "tmp"),
			rename("A2", "tmp", "c9"),
			rename("A3", "c1", "c2"),
			rename("A4", "x", "y"),
			insertInto("A5", "db0", "c9", 1),
		},
	)
	sameLines(t, got, []string{
		"gone db0.c0", `captured ["db0.c1","db0.c2"]`, "commit A1",
		`captured ["db0.c1","db0.c2","db0.c9"]`, "added db0.c9", "commit A2",
		"gone db0.c1", "gone db0.c2", `captured ["db0.c2","db0.c9"]`, "added db0.c2", "commit A3",
		"commit A4",
		"change db0.c9 c", "commit A5",
	})
}

// A dropped database on a cluster stream: the server sends a drop for
// each of its collections, then dropDatabase; every captured collection
// of that database leaves the set, once, and those of others stay. A
// dropDatabase alone (its drops before the checkpoint) does the same.
func TestClusterStreamDropDatabase(t *testing.T) {
	got, _ := streamEvents(t, ScopeCluster, nil, []string{"db0.a", "db0.b", "db01.c"},
		[]string{
			evt("A1", "drop", `"ns": {"db": "db0", "coll": "a"}`),
			evt("A2", "dropDatabase", `"ns": {"db": "db0"}`),
			evt("A3", "dropDatabase", `"ns": {"db": "db0"}`),
			insertInto("A4", "db01", "c", 1),
		},
	)
	sameLines(t, got, []string{
		"gone db0.a", `captured ["db0.b","db01.c"]`, "commit A1",
		"gone db0.b", `captured ["db01.c"]`, "commit A2",
		"commit A3",
		"change db01.c c", "commit A4",
	})
}

// A collection created while streaming joins the captured set with its
// first document: a restart then does not snapshot it as new.
func TestClusterStreamNewCollectionJoins(t *testing.T) {
	got, _ := streamEvents(t, ScopeCluster, []string{`db0\..*`}, nil,
		[]string{insertInto("A1", "db0", "n", 1), insertInto("A2", "db0", "n", 2), insertInto("A3", "other", "n", 3)})
	sameLines(t, got, []string{`captured ["db0.n"]`, "change db0.n c", "commit A1", "change db0.n c", "commit A2", "commit A3"})
}

// The invalidate's token round-trips in the cursor with start_after; a
// cursor without a token never says it.
func TestCursorStartAfterJSON(t *testing.T) {
	c := Cursor{Token: ext(t, `{"_data": "82"}`), StartAfter: true}
	b, err := c.MarshalJSON()
	if err != nil || string(b) != `{"resume_token":{"_data":"82"},"start_after":true}` {
		t.Fatalf("%s %v", b, err)
	}
	back, err := DecodeCursor(b)
	if err != nil || !back.StartAfter {
		t.Fatalf("%+v %v", back, err)
	}
	if b, _ := (Cursor{OperationTime: bson.Timestamp{T: 1, I: 1}, StartAfter: true}).MarshalJSON(); strings.Contains(string(b), "start_after") {
		t.Errorf("time only: %s", b)
	}
}
