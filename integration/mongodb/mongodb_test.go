// Package mongodb_test runs the MongoDB driver's layers (pkg/source/mongodb)
// against a real server: mongo-java-server on 127.0.0.1:27017 by default
// (integration/services/mongo.sh), or any deployment given as
// MONGODB_URI (with MONGODB_SCOPE=cluster for a replica set).
//
// mongo-java-server has no replica set and streams one collection at a
// time, so the tests watch one collection (source.scope collection). Its
// update events are wrong (operators in documentKey, no
// updateDescription, the looked-up document as of the read rather than of
// the change): the tests say where they rely on that, and the update
// message shape is checked against Debezium's own classes in the unit
// tests instead.
package mongodb_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/source/mongodb"
)

func uri() string {
	if u := os.Getenv("MONGODB_URI"); u != "" {
		return u
	}
	return "mongodb://127.0.0.1:27017/?directConnection=true"
}

// realServer says the tests run against a deployment given as
// MONGODB_URI rather than the local mongo-java-server: each test then
// works only in the database it creates (newDB) and drops it at its end.
func realServer() bool { return os.Getenv("MONGODB_URI") != "" }

// shownURI is uri() as a message may show it: without its password.
func shownURI() string { return mongodb.Connection{URI: uri()}.Redacted() }

func scope() string {
	if s := os.Getenv("MONGODB_SCOPE"); s != "" {
		return s
	}
	return mongodb.ScopeCollection
}

var startServer sync.Once

// client is a plain driver client for the test's own writes. Without
// MONGODB_URI it starts the local mongo-java-server when none answers
// (integration/services/mongo.sh up; `make services-up` starts it too).
func client(t *testing.T) *mongo.Client {
	t.Helper()
	itest.SkipShort(t)
	if os.Getenv("MONGODB_URI") == "" {
		startServer.Do(func() {
			if out, err := exec.Command("bash", "services/mongo.sh", "up").CombinedOutput(); err != nil {
				t.Logf("integration/services/mongo.sh up: %v\n%s", err, out)
			}
		})
	}
	c, err := mongo.Connect(options.Client().ApplyURI(uri()))
	if err != nil {
		t.Fatalf("MongoDB at %s: %s", shownURI(), mongodb.Connection{URI: uri()}.Scrub(err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Ping(ctx, nil); err != nil {
		t.Fatalf("no MongoDB at %s (integration/services/mongo.sh up, or MONGODB_URI): %s", shownURI(), mongodb.Connection{URI: uri()}.Scrub(err))
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

// newDB is a database of the test's own, dropped at the end.
func newDB(t *testing.T, c *mongo.Client) *mongo.Database {
	t.Helper()
	db := c.Database(itest.UniqueID("mongo"))
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	return db
}

// pipelineOf writes the config of a pipeline that captures the
// collection ns (format.schemas off; source holds more source lines) and
// returns its env, config file and topic.
func pipelineOf(t *testing.T, label, ns, source string) (*itest.Env, string, string) {
	t.Helper()
	e := itest.BareEnv(t, label)
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: uri(), Source: "  tables: ['" + regexpQuote(ns) + "']\n" + source})
	itest.AppendConfig(t, cfg, "format:\n  schemas: false\n")
	return e, cfg, e.Prefix + "." + ns
}

// insertIDs inserts one document {_id: id} for each id.
func insertIDs(t *testing.T, coll *mongo.Collection, ids ...int32) {
	t.Helper()
	for _, id := range ids {
		if _, err := coll.InsertOne(context.Background(), bson.D{{Key: "_id", Value: id}}); err != nil {
			t.Fatal(err)
		}
	}
}

// item is one call the driver made on the sink.
type item struct {
	kind string // change, commit, watermark, heartbeat, captured
	ev   mongodb.Event
	cur  mongodb.Cursor
	id   string
	// set, added, gone: a change of the captured set.
	set, added, gone []string
}

type chanSink chan item

func (s chanSink) Change(ctx context.Context, ev mongodb.Event) error {
	s <- item{kind: "change", ev: ev}
	return nil
}
func (s chanSink) Commit(ctx context.Context, c mongodb.Cursor) error {
	s <- item{kind: "commit", cur: c}
	return nil
}
func (s chanSink) Watermark(ctx context.Context, id string) error {
	s <- item{kind: "watermark", id: id}
	return nil
}
func (s chanSink) Heartbeat(ctx context.Context, c mongodb.Cursor) error { return nil }
func (s chanSink) Captured(ctx context.Context, set, added, gone []string) error {
	s <- item{kind: "captured", set: set, added: added, gone: gone}
	return nil
}

// running is a driver streaming into a sink until stopped.
type running struct {
	d      *mongodb.Driver
	sink   chanSink
	cancel context.CancelFunc
	done   chan error
}

// startOn makes collection name in a new database, with one document
// (_id 0) so that it exists, and starts a reader on it from now; it
// returns the collection, its namespace and the reader.
func startOn(t *testing.T, name string) (*mongo.Collection, string, *running) {
	t.Helper()
	db := newDB(t, client(t))
	coll := db.Collection(name)
	if _, err := coll.InsertOne(context.Background(), bson.D{{Key: "_id", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	ns := db.Name() + "." + name
	return coll, ns, start(t, ns, mongodb.Cursor{}, "")
}

// start builds a driver on ns, resumes it from cur (Fresh when zero) and
// streams.
func start(t *testing.T, ns string, cur mongodb.Cursor, signal string) *running {
	t.Helper()
	return startIdle(t, ns, cur, signal, 20*time.Millisecond)
}

// startIdle is start with the least time idle between two empty polls.
func startIdle(t *testing.T, ns string, cur mongodb.Cursor, signal string, idle time.Duration) *running {
	t.Helper()
	d, err := mongodb.NewDriver(mongodb.Config{
		Connection: mongodb.Connection{URI: uri()}, Include: []string{regexpQuote(ns)}, Scope: scope(),
		SignalCollection: signal, IdlePause: idle, MaxAwait: 200 * time.Millisecond,
		SplitLargeEvents: true, // as the source sets it
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := d.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if cur.IsZero() {
		if cur, err = d.Fresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Resume(cur, []string{ns}); err != nil {
		t.Fatal(err)
	}
	if err := d.Start(ctx); err != nil {
		t.Fatal(err)
	}
	r := &running{d: d, sink: make(chanSink, 1000), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- d.Stream(ctx, r.sink) }()
	t.Cleanup(r.stop)
	return r
}

func (r *running) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	<-r.done
	_ = r.d.Close(context.Background())
	r.cancel = nil
}

// next waits for the next sink call of kind (skipping the others).
func (r *running) next(t *testing.T, kind string) item {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case it := <-r.sink:
			if it.kind == kind {
				return it
			}
		case err := <-r.done:
			r.done <- err // for stop
			t.Fatalf("stream ended waiting for a %s: %v", kind, err)
		case <-timeout:
			t.Fatalf("no %s within 20s", kind)
		}
	}
}

// quiet asserts no change arrives within d.
func (r *running) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case it := <-r.sink:
			if it.kind == "change" {
				t.Fatalf("unexpected change: %s %s", it.ev.Op, it.ev.Key)
			}
		case <-deadline:
			return
		}
	}
}

func regexpQuote(ns string) string {
	out := ""
	for _, r := range ns {
		if r == '.' || r == '$' || r == '^' {
			out += `\`
		}
		out += string(r)
	}
	return out
}

func message(t *testing.T, ev mongodb.Event) (key, value string) {
	t.Helper()
	m, err := mongodb.EncodeChange(ev, mongodb.MessageOptions{Name: "it", Version: mongodb.DefaultVersion}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return string(m.Key), string(m.Value)
}

// Inserts, an update, a replace and a delete come through the reader in
// order, each followed by a commit at its resume token, and encode to
// the messages a consumer of Debezium's format expects.
func TestStreamInsertUpdateReplaceDelete(t *testing.T) {
	ctx := context.Background()
	coll, ns, r := startOn(t, "orders")

	oid := bson.NewObjectID()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: oid}, {Key: "n", Value: int64(1)}, {Key: "d", Value: dec(t, "1.5")}}); err != nil {
		t.Fatal(err)
	}
	ev := r.next(t, "change").ev
	if ev.Op != mongodb.OpInsert || ev.Namespace() != ns || ev.Key.ObjectID() != oid {
		t.Fatalf("insert: %+v", ev)
	}
	if cm := r.next(t, "commit"); cm.cur.Token == nil || cm.cur.OperationTime != ev.ClusterTime {
		t.Fatalf("commit after insert: %+v", cm.cur)
	}
	key, value := message(t, ev)
	if want := fmt.Sprintf(`{"id":"{\"$oid\": \"%s\"}"}`, oid.Hex()); key != want {
		t.Errorf("key %s, want %s", key, want)
	}
	if want := fmt.Sprintf(`"after":"{\"_id\": {\"$oid\": \"%s\"},\"n\": {\"$numberLong\": \"1\"},\"d\": {\"$numberDecimal\": \"1.5\"}}"`, oid.Hex()); !contains(value, want) {
		t.Errorf("value %s\nwant it to hold %s", value, want)
	}
	if !contains(value, `"op":"c"`) || !contains(value, `"collection":"orders"`) {
		t.Errorf("value %s", value)
	}

	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: oid}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: int64(2)}}}}); err != nil {
		t.Fatal(err)
	}
	ev = r.next(t, "change").ev
	// updateLookup: the whole document after the change (on
	// mongo-java-server, as of the read; nothing changes it meanwhile here).
	if ev.Op != mongodb.OpUpdate || ev.Key.ObjectID() != oid || ev.After.Lookup("n").Int64() != 2 {
		t.Fatalf("update: %+v", ev)
	}
	if _, value = message(t, ev); !contains(value, `"op":"u"`) {
		t.Errorf("update value %s", value)
	}

	if _, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: oid}}, bson.D{{Key: "z", Value: "r"}}); err != nil {
		t.Fatal(err)
	}
	ev = r.next(t, "change").ev
	// A real server says "replace"; mongo-java-server says "update".
	if (ev.Op != mongodb.OpReplace && ev.Op != mongodb.OpUpdate) || ev.Key.ObjectID() != oid || ev.After.Lookup("z").StringValue() != "r" {
		t.Fatalf("replace: %+v", ev)
	}

	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: oid}}); err != nil {
		t.Fatal(err)
	}
	ev = r.next(t, "change").ev
	if ev.Op != mongodb.OpDelete || ev.Key.ObjectID() != oid || ev.After != nil {
		t.Fatalf("delete: %+v", ev)
	}
	if _, value = message(t, ev); !contains(value, `"before":null,"after":null,"updateDescription":null`) || !contains(value, `"op":"d"`) {
		t.Errorf("delete value %s", value)
	}
}

func dec(t *testing.T, s string) bson.Decimal128 {
	d, err := bson.ParseDecimal128(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func contains(s, sub string) bool { return len(sub) == 0 || len(s) >= len(sub) && indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// A cursor taken by Fresh leaves out what was written before it: the
// snapshot that follows reads that.
func TestFreshStartsAfterNow(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	coll := db.Collection("c")
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	r := start(t, db.Name()+".c", mongodb.Cursor{}, "")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 4}}); err != nil {
		t.Fatal(err)
	}
	if ev := r.next(t, "change").ev; ev.Key.Int32() != 4 {
		t.Fatalf("first event is _id %s, want 4 (those before Fresh are left out)", ev.Key)
	}
}

// The stored cursor (through its JSON) resumes a new reader, after a
// stop, exactly after the last committed event: the changes made while it
// was down all arrive, once, in order.
func TestResumeFromStoredCursorLosesNothing(t *testing.T) {
	ctx := context.Background()
	coll, ns, r := startOn(t, "c")
	var stored []byte
	for i := 1; i <= 5; i++ {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
		if ev := r.next(t, "change").ev; ev.Key.Int32() != int32(i) {
			t.Fatalf("event %d: _id %s", i, ev.Key)
		}
		b, err := r.next(t, "commit").cur.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		stored = b
	}
	r.stop()
	for i := 6; i <= 10; i++ {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	cur, err := mongodb.DecodeCursor(stored)
	if err != nil {
		t.Fatal(err)
	}
	r2 := start(t, ns, cur, "")
	for i := 6; i <= 10; i++ {
		if ev := r2.next(t, "change").ev; ev.Key.Int32() != int32(i) {
			t.Fatalf("after resume: _id %s, want %d", ev.Key, i)
		}
	}
	r2.quiet(t, 500*time.Millisecond)
}

// Chunks come in _id order across BSON types (numbers of every type,
// strings, documents, ObjectIds, dates), each read by a new reader from
// the stored last _id, none lost or repeated.
func TestBackfillChunksInIDOrder(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	coll := db.Collection("mixed")
	ctx := context.Background()
	oid1, oid2 := bson.NewObjectID(), bson.NewObjectID()
	ids := []any{
		int32(3), int64(1), 2.5, int32(10), "b", "a", bson.D{{Key: "k", Value: 1}}, oid2, oid1,
		bson.DateTime(5), true, int64(-7), "aa", bson.Null{}, bson.MinKey{}, bson.MaxKey{},
	}
	for i, id := range ids {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "i", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		`{"$minKey":1}`, `null`, `{"$numberLong":"-7"}`, `{"$numberLong":"1"}`, `{"$numberDouble":"2.5"}`, `{"$numberInt":"3"}`,
		`{"$numberInt":"10"}`, `"a"`, `"aa"`, `"b"`, `{"k":{"$numberInt":"1"}}`,
		fmt.Sprintf(`{"$oid":"%s"}`, oid1.Hex()), fmt.Sprintf(`{"$oid":"%s"}`, oid2.Hex()),
		`true`, `{"$date":{"$numberLong":"5"}}`, `{"$maxKey":1}`,
	}
	var got []string
	stored := ""
	for round := 0; round < 20; round++ {
		d, err := mongodb.NewDriver(mongodb.Config{Connection: mongodb.Connection{URI: uri()}})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Connect(ctx); err != nil {
			t.Fatal(err)
		}
		var after bson.RawValue
		if stored != "" {
			if after, err = mongodb.DecodeID(stored); err != nil {
				t.Fatal(err)
			}
		}
		ch, err := d.Snapshots().ReadChunk(ctx, db.Name()+".mixed", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range ch.Docs {
			s, _ := mongodb.EncodeID(doc.Lookup("_id"))
			got = append(got, s[len(`{"_id":`):len(s)-1])
		}
		_ = d.Close(ctx)
		if ch.Done {
			break
		}
		if stored, err = mongodb.EncodeID(ch.Last); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("chunks read\n%v\nwant\n%v", got, want)
	}
}

// A watermark placed by operation time (MarkAt, a snapshot chunk's) while
// the stream idles comes back at a poll the mark starts, not after the
// idle pause: each chunk of a backfill waits for its watermarks.
func TestMarkWakesIdleStream(t *testing.T) {
	db := newDB(t, client(t))
	ctx := context.Background()
	if _, err := db.Collection("idle").InsertOne(ctx, bson.D{{Key: "_id", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	r := startIdle(t, db.Name()+".idle", mongodb.Cursor{}, "", time.Minute)
	time.Sleep(3 * time.Second) // the stream's first polls came back empty: it idles
	t0 := time.Now()
	if err := r.d.MarkAt(ctx, "mark-1"); err != nil {
		t.Fatal(err)
	}
	if got := r.next(t, "watermark").id; got != "mark-1" {
		t.Fatalf("watermark %q, want mark-1", got)
	}
	if took := time.Since(t0); took > 10*time.Second {
		t.Fatalf("the watermark came back after %v, with the stream idle for a minute between polls", took)
	}
}

// A watermark written by Snapshots().WriteWatermark comes back through the
// change stream as a Watermark with its id, not as a change. (Here the
// stream watches the signal collection alone: mongo-java-server has no
// cluster-wide stream that would carry it beside the data.)
func TestWatermarkRoundTrip(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	ctx := context.Background()
	sig := db.Name() + ".tributary_signal"
	if _, err := db.Collection("tributary_signal").InsertOne(ctx, bson.D{{Key: "_id", Value: "init"}}); err != nil {
		t.Fatal(err)
	}
	r := start(t, sig, mongodb.Cursor{}, sig)
	for _, id := range []string{"wm-low-1", "wm-high-1"} {
		if err := r.d.Snapshots().WriteWatermark(ctx, id); err != nil {
			t.Fatal(err)
		}
		if got := r.next(t, "watermark").id; got != id {
			t.Fatalf("watermark %q, want %q", got, id)
		}
	}
	if err := r.d.Snapshots().WriteWatermark(ctx, "wm-low-1"); err == nil {
		t.Error("a repeated watermark id: no error")
	}
}

// After a resume token the server alone decides what follows: events
// whose clusterTime is not after the cursor's time still arrive (the
// events of one transaction share a clusterTime, so a cursor cut inside
// a transaction must not drop the rest of it).
func TestResumeTokenWinsOverTime(t *testing.T) {
	ctx := context.Background()
	coll, ns, r := startOn(t, "c")
	var cursors []mongodb.Cursor
	for i := 1; i <= 4; i++ {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
		r.next(t, "change")
		cursors = append(cursors, r.next(t, "commit").cur)
	}
	r.stop()
	// The token of event 2 with the time of event 4.
	cut := mongodb.Cursor{Token: cursors[1].Token, OperationTime: cursors[3].OperationTime}
	r2 := start(t, ns, cut, "")
	for i := 3; i <= 4; i++ {
		if ev := r2.next(t, "change").ev; ev.Key.Int32() != int32(i) {
			t.Fatalf("after the token: _id %s, want %d", ev.Key, i)
		}
	}
}

// A dropped collection leaves the captured set at its drop event, which
// is not a change, and the stream goes on: the collection created anew
// joins the set with its first document, which is published. (A real
// server invalidates a collection stream after the drop; the reader
// opens a new one after the invalidate. mongo-java-server sends a drop
// without ns and streams on. Both end the same way here.)
func TestDropLeavesCapturedSetAndStreamGoesOn(t *testing.T) {
	ctx := context.Background()
	coll, ns, r := startOn(t, "c")
	if err := coll.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	it := r.next(t, "captured")
	if !slices.Equal(it.gone, []string{ns}) || slices.Contains(it.set, ns) || len(it.added) != 0 {
		t.Fatalf("after the drop: set %v, added %v, gone %v; want %s gone", it.set, it.added, it.gone, ns)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 9}}); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(20 * time.Second)
	joined := false
	for {
		select {
		case it := <-r.sink:
			switch it.kind {
			case "captured":
				joined = slices.Contains(it.set, ns) && len(it.gone) == 0 && len(it.added) == 0
			case "change":
				if it.ev.Op != mongodb.OpInsert || it.ev.Key.Int32() != 9 {
					t.Fatalf("first change after the drop: %s %s", it.ev.Op, it.ev.Key)
				}
				if !joined {
					t.Fatalf("the insert into the collection created anew came before it joined the captured set")
				}
				return
			}
		case err := <-r.done:
			r.done <- err // for stop
			t.Fatalf("stream ended: %v", err)
		case <-timeout:
			t.Fatal("nothing within 20s")
		}
	}
}

// A cursor stored after an invalidate (start_after) opens the stream
// with startAfter its token: the server takes it, and the events after
// that token arrive, once. (mongo-java-server sends no invalidate; any
// token stands in for one here.)
func TestStartAfterCursorResumes(t *testing.T) {
	ctx := context.Background()
	coll, ns, r := startOn(t, "c")
	var first mongodb.Cursor
	for i := 1; i <= 3; i++ {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
		r.next(t, "change")
		if c := r.next(t, "commit").cur; i == 1 {
			first = c
		}
	}
	r.stop()
	first.StartAfter = true
	b, err := first.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	cur, err := mongodb.DecodeCursor(b)
	if err != nil || !cur.StartAfter {
		t.Fatalf("stored cursor %s: %+v, %v", b, cur, err)
	}
	r2 := start(t, ns, cur, "")
	for i := 2; i <= 3; i++ {
		if ev := r2.next(t, "change").ev; ev.Key.Int32() != int32(i) {
			t.Fatalf("after startAfter: _id %s, want %d", ev.Key, i)
		}
	}
	r2.quiet(t, 500*time.Millisecond)
}

// A view matching the include list is not captured (it has no change
// stream: its rows would be snapshotted and its changes never streamed),
// nor is it in `tables`' captured list. mongo-java-server reports a view
// as a collection, so this runs against a real server only (make
// test-mongodb).
func TestViewsAreNotCaptured(t *testing.T) {
	if !realServer() {
		t.Skip("mongo-java-server lists a view as a collection (type \"collection\"); make test-mongodb runs this")
	}
	ctx := context.Background()
	db := newDB(t, client(t))
	if _, err := db.Collection("items").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "items_view", "items", mongo.Pipeline{}); err != nil {
		t.Fatal(err)
	}
	d, err := mongodb.NewDriver(mongodb.Config{Connection: mongodb.Connection{URI: uri()}, Include: []string{regexpQuote(db.Name()) + `\..*`}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	got, err := d.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{db.Name() + ".items"}; !slices.Equal(got, want) {
		t.Errorf("captured %q, want %q", got, want)
	}
}
