package mongodb_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/source/mongodb"
)

// record is one record of the topic, read read_committed: key and value
// as written (a nil value is a tombstone).
type record struct{ key, value []byte }

func readRecords(t *testing.T, topic string) []record {
	t.Helper()
	var out []record
	itest.EachRawRecordWithin(t, topic, 60*time.Second, []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()},
		func(r *kgo.Record) {
			if r.Attrs.IsControl() {
				return
			}
			out = append(out, record{key: r.Key, value: r.Value})
		})
	return out
}

// want is one message the topic must hold: the message writer's own
// output for the same event (message.go, checked against Debezium's
// classes), or a tombstone of key.
type want struct {
	key, value []byte
}

func wantChange(t *testing.T, name string, ev mongodb.Event) want {
	t.Helper()
	m, err := mongodb.EncodeChange(ev, mongodb.MessageOptions{Name: name, Version: mongodb.DefaultVersion}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return want{key: m.Key, value: m.Value}
}

func wantRead(t *testing.T, name, db, coll string, doc bson.D) want {
	t.Helper()
	raw, _ := bson.Marshal(doc)
	m, err := mongodb.EncodeRead(db, coll, raw, bson.Timestamp{}, "true", mongodb.MessageOptions{Name: name, Version: mongodb.DefaultVersion}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return want{key: m.Key, value: m.Value}
}

func tombstone(w want) want { return want{key: w.key} }

// sameMessage compares a record with what the writer gives for its event:
// the key byte for byte, the value field by field with what only the
// server and the clock know (source.ts_*, ord, wallTime, the envelope's
// ts_ms, the snapshot marker of a read) taken from the record.
func sameMessage(t *testing.T, i int, got record, w want) {
	t.Helper()
	if string(got.key) != string(w.key) {
		t.Errorf("record %d: key %s, want %s", i, got.key, w.key)
	}
	if w.value == nil || got.value == nil {
		if (w.value == nil) != (got.value == nil) {
			t.Errorf("record %d: value %s, want %s", i, got.value, w.value)
		}
		return
	}
	var g, e map[string]any
	if err := json.Unmarshal(got.value, &g); err != nil {
		t.Fatalf("record %d: %v: %s", i, err, got.value)
	}
	if err := json.Unmarshal(w.value, &e); err != nil {
		t.Fatal(err)
	}
	gs, es := g["source"].(map[string]any), e["source"].(map[string]any)
	for _, f := range []string{"ts_ms", "ts_us", "ts_ns", "ord", "wallTime"} {
		es[f] = gs[f]
	}
	if e["op"] == "r" {
		es["snapshot"] = gs["snapshot"]
		if s, _ := gs["snapshot"].(string); s == "false" || s == "" {
			t.Errorf("record %d: a read with source.snapshot %q", i, s)
		}
	}
	e["ts_ms"] = g["ts_ms"]
	if !reflect.DeepEqual(g, e) {
		t.Errorf("record %d:\n got %s\nwant %s", i, got.value, w.value)
	}
}

func cli(t *testing.T, e *itest.Env, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(itest.Binary, args...)
	cmd.Dir = e.Dir
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}

// The real CLI on a collection: documents there before the start are
// snapshotted (op r) while the stream starts, inserts, an update and a
// delete while streaming are published in order, and after SIGTERM the
// changes made while it was down are published on restart, exactly once,
// each message the message writer's for the same event, with Debezium's
// tombstone after each delete.
func TestCLIRunSnapshotStreamRestart(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	coll := db.Collection("orders")
	ctx := context.Background()
	docs := []bson.D{
		{{Key: "_id", Value: int32(1)}, {Key: "item", Value: "apple"}, {Key: "qty", Value: int64(5)}},
		{{Key: "_id", Value: int32(2)}, {Key: "item", Value: "pear"}, {Key: "tags", Value: bson.A{"a", "b"}}},
		{{Key: "_id", Value: int32(3)}, {Key: "item", Value: "fig"}, {Key: "at", Value: bson.NewDateTimeFromTime(time.UnixMilli(1700000000123))}},
	}
	for _, d := range docs {
		if _, err := coll.InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
	}

	e := itest.BareEnv(t, "mongocli")
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: uri(),
		Source:      "  tables: ['" + regexpQuote(db.Name()+".orders") + "']\n  capture_mode: change_streams_update_full\n",
		Destination: "  delete_mode: record_and_tombstone\n"})
	itest.AppendConfig(t, cfg, itest.ExactlyOnceLines+"format:\n  schemas: false\n")
	topic := e.Prefix + "." + db.Name() + ".orders"

	code, out := cli(t, e, "tables", "--config", cfg)
	if code != 0 || !strings.Contains(out, db.Name()+".orders") || !strings.Contains(out, topic) || !strings.Contains(out, "1 tables would be captured") {
		t.Fatalf("tables: exit %d\n%s", code, out)
	}
	t.Logf("tributary tables:\n%s", out)
	code, out = itest.TestConnection(t, e, cfg)
	t.Logf("tributary test-connection (exit %d):\n%s", code, out)
	// mongo-java-server is a standalone server: the deployment line
	// fails (with the conversion to a replica set as its fix), though the
	// server opens change streams on a collection, which run uses.
	for _, line := range []string{"ok   source connection", "FAIL deployment", "fix: convert it to a one-node replica set", "rs.initiate()",
		"ok   collections", "ok   privileges", "ok   change streams", "ok   oplog window"} {
		if !strings.Contains(out, line) {
			t.Errorf("test-connection lacks %q (exit %d):\n%s", line, code, out)
		}
	}
	if code != 1 {
		t.Errorf("test-connection exit %d with a failed deployment line, want 1", code)
	}

	p := e.Start("run", "--config", cfg)
	// Records, not offsets: under exactly once each transaction's commit
	// marker takes an offset too, so an end offset of n may hold fewer
	// than n records, and a wait on it stops the pipeline too soon.
	committed := func() int { return len(readRecords(t, topic)) }
	p.WaitFor(t, 60*time.Second, "the snapshot's 3 reads", func() bool { return committed() >= 3 })
	// run asks the server to split events over 16 MB; mongo-java-server
	// does not know the stage, and the stream opens without it.
	if !realServer() && !strings.Contains(p.Out.String(), "does not split change events over 16 MB") {
		t.Errorf("run did not ask for $changeStreamSplitLargeEvent (or did not say the server refused it):\n%s", p.Out)
	}

	var ws []want
	for _, d := range docs {
		ws = append(ws, wantRead(t, e.Prefix, db.Name(), "orders", d))
	}
	raw := func(d bson.D) bson.Raw { b, _ := bson.Marshal(d); return b }
	id := func(i int32) bson.RawValue { return bson.RawValue{Type: bson.TypeInt32, Value: bsoncoreInt32(i)} }
	ev := func(op mongodb.Op, i int32, after bson.D) mongodb.Event {
		e := mongodb.Event{Op: op, DB: db.Name(), Collection: "orders", Key: id(i)}
		if after != nil {
			e.After = raw(after)
		}
		return e
	}
	step := func(n int64, what string, do func() error) {
		t.Helper()
		if err := do(); err != nil {
			t.Fatal(err)
		}
		p.WaitFor(t, 60*time.Second, what, func() bool { return int64(committed()) >= n })
	}

	d4 := bson.D{{Key: "_id", Value: int32(4)}, {Key: "item", Value: "kiwi"}, {Key: "price", Value: 1.5}}
	ws = append(ws, wantChange(t, e.Prefix, ev(mongodb.OpInsert, 4, d4)))
	step(4, "the insert", func() error { _, err := coll.InsertOne(ctx, d4); return err })

	d1 := bson.D{{Key: "_id", Value: int32(1)}, {Key: "item", Value: "apple"}, {Key: "qty", Value: int64(6)}}
	// mongo-java-server's update event has the looked-up document but no
	// updateDescription; a real server sends one.
	upd := ev(mongodb.OpUpdate, 1, d1)
	if realServer() {
		upd.Update = &mongodb.UpdateDescription{UpdatedFields: raw(bson.D{{Key: "qty", Value: int64(6)}})}
	}
	ws = append(ws, wantChange(t, e.Prefix, upd))
	step(5, "the update", func() error {
		_, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}, bson.D{{Key: "$set", Value: bson.D{{Key: "qty", Value: int64(6)}}}})
		return err
	})

	del3 := wantChange(t, e.Prefix, ev(mongodb.OpDelete, 3, nil))
	ws = append(ws, del3, tombstone(del3))
	step(7, "the delete and its tombstone", func() error {
		_, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: int32(3)}})
		return err
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, p.Out)
	}

	// While it is down.
	d5 := bson.D{{Key: "_id", Value: "five"}, {Key: "item", Value: "lime"}}
	if _, err := coll.InsertOne(ctx, d5); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: int32(4)}}); err != nil {
		t.Fatal(err)
	}
	e5 := ev(mongodb.OpInsert, 0, d5)
	e5.Key = raw(d5).Lookup("_id")
	del4 := wantChange(t, e.Prefix, ev(mongodb.OpDelete, 4, nil))
	ws = append(ws, wantChange(t, e.Prefix, e5), del4, tombstone(del4))

	p = e.Start("run", "--config", cfg)
	p.WaitFor(t, 60*time.Second, "the changes made while down", func() bool { return committed() >= 10 })
	time.Sleep(2 * time.Second) // a duplicate would come now
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, p.Out)
	}

	got := readRecords(t, topic)
	if len(got) != len(ws) {
		for i, r := range got {
			t.Logf("%d: %s %s", i, r.key, r.value)
		}
		t.Fatalf("%d records, want %d (exactly once across the restart)", len(got), len(ws))
	}
	// Kafka orders a key's messages (one partition each), not the
	// topic's: compare key by key.
	byKey := map[string][]record{}
	for _, r := range got {
		byKey[string(r.key)] = append(byKey[string(r.key)], r)
	}
	for i, w := range ws {
		rs := byKey[string(w.key)]
		if len(rs) == 0 {
			t.Errorf("message %d (key %s) missing", i, w.key)
			continue
		}
		sameMessage(t, i, rs[0], w)
		byKey[string(w.key)] = rs[1:]
	}
	if t.Failed() {
		t.Logf("output:\n%s", p.Out)
	}
}

func bsoncoreInt32(i int32) []byte {
	return []byte{byte(i), byte(i >> 8), byte(i >> 16), byte(i >> 24)}
}

// The snapshot interleaved with a writer: while tributary reads a
// collection of 2,000 documents in _id chunks, a writer updates, inserts
// and deletes; when all is published, the last message of every key is
// the collection's final state (deleted keys end with a delete and its
// tombstone), so the watermarks placed by operation time kept each
// chunk's copies from overwriting newer changes.
func TestCLISnapshotInterleavedWithWriter(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	coll := db.Collection("items")
	ctx := context.Background()
	const n = 2000
	var docs []any
	for i := range n {
		docs = append(docs, bson.D{{Key: "_id", Value: int32(i)}, {Key: "v", Value: int32(0)}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	e := itest.BareEnv(t, "mongoint")
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: uri(),
		Source:      "  tables: ['" + regexpQuote(db.Name()+".items") + "']\n",
		Destination: "  delete_mode: record_and_tombstone\n"})
	itest.AppendConfig(t, cfg, "format:\n  schemas: false\n")
	topic := e.Prefix + "." + db.Name() + ".items"
	p := e.Start("run", "--config", cfg)

	// Write while the snapshot reads: every key's value goes up, some
	// keys are deleted, new ones inserted.
	deadline := time.Now().Add(4 * time.Second)
	for w := 1; time.Now().Before(deadline); w++ {
		id := int32((w * 7919) % n)
		var err error
		switch w % 10 {
		case 0:
			_, err = coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
		case 1:
			_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(n + w)}, {Key: "v", Value: int32(w)}})
		default:
			_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: int32(w)}}}})
		}
		if err != nil {
			t.Fatal(err)
		}
		if p.Exited() {
			t.Fatalf("tributary exited:\n%s", p.Out)
		}
	}
	// The final state, and the topic settled.
	final := collState(t, coll)
	settle(t, p, topic, 300*time.Second)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, p.Out)
	}

	state, keyReads, _ := topicState(t, topic, failAtOnce)
	// Each key is read at most once; documents the writer inserts while the
	// snapshot runs may be read too, so there may be more reads than n.
	reads := 0
	for k, r := range keyReads {
		reads += r
		if r > 1 {
			t.Errorf("key %s read %d times", k, r)
		}
	}
	if reads == 0 {
		t.Errorf("no reads of %d documents", n)
	}
	if len(state) != len(final) {
		t.Errorf("%d keys on the topic, %d in the collection", len(state), len(final))
	}
	bad := 0
	for k, v := range final {
		if got, ok := state[k]; !ok || got != v {
			if bad++; bad <= 10 {
				t.Errorf("key %s: topic ends with %d (present %v), collection has %d", k, got, ok, v)
			}
		}
	}
	t.Logf("%d reads, %d keys, %d wrong", reads, len(final), bad)
}

// snapshot_mode no_data publishes no existing document; `tributary
// backfill --table db.collection` re-publishes them on request (op r),
// while the stream goes on (an insert after it is op c).
func TestCLIBackfillOnRequest(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	coll := db.Collection("items")
	ctx := context.Background()
	for i := range 5 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(i)}, {Key: "v", Value: "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	ns := db.Name() + ".items"
	e, cfg, topic := pipelineOf(t, "mongobf", ns, "  snapshot_mode: no_data\n")
	p := e.Start("run", "--config", cfg)
	itest.ModeDB{E: e}.AwaitStarted(t, p)
	if code, out := itest.BackfillCLI(t, e, "--config", cfg, "--table", ns); code != 0 {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	p.WaitFor(t, 60*time.Second, "the requested backfill", func() bool { return itest.TopicEnd(topic) >= 5 })
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(9)}}); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, 60*time.Second, "the insert", func() bool { return itest.TopicEnd(topic) >= 6 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, p.Out)
	}
	ops := map[string]int{}
	for _, r := range readRecords(t, topic) {
		var v struct{ Op string }
		if err := json.Unmarshal(r.value, &v); err != nil {
			t.Fatal(err)
		}
		ops[v.Op]++
	}
	if ops["r"] != 5 || ops["c"] != 1 || len(ops) != 2 {
		t.Fatalf("ops %v, want 5 r and 1 c", ops)
	}
}

// A backfill asked for while the pipeline streams an idle collection
// (no event after it, so the resume token stands still) is cleared from
// the store once its rows are saved: a restart does not read the
// collection again. Before, the request stayed, every start re-published
// the collection, and status kept saying it was waiting.
func TestCLIBackfillOnIdleCollectionIsCleared(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	insertIDs(t, db.Collection("idle"), 0, 1, 2, 3, 4)
	ns := db.Name() + ".idle"
	e, cfg, topic := pipelineOf(t, "mongobfidle", ns, "  snapshot_mode: no_data\n")
	request := filepath.Join(e.Dir, "checkpoints", e.Name+".backfill.json")
	p := e.Start("run", "--config", cfg)
	itest.ModeDB{E: e}.AwaitStarted(t, p)
	if code, out := itest.BackfillCLI(t, e, "--config", cfg, "--table", ns); code != 0 {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	p.WaitFor(t, 60*time.Second, "the requested backfill", func() bool { return itest.TopicEnd(topic) >= 5 })
	p.WaitFor(t, 30*time.Second, "the request cleared from the store", func() bool {
		_, err := os.Stat(request)
		return os.IsNotExist(err)
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, p.Out)
	}
	p = e.Start("run", "--config", cfg)
	itest.ModeDB{E: e}.AwaitStarted(t, p)
	time.Sleep(3 * time.Second)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, p.Out)
	}
	if n := len(readRecords(t, topic)); n != 5 {
		t.Fatalf("%d records after the restart, want the backfill's 5 once: the request was served again", n)
	}
}

// SIGKILL in the middle of a stream of inserts, exactly_once: after the
// restart every insert is on the topic once, none lost, none twice
// (read_committed; what the killed task had not committed is aborted).
func TestCLIKillExactlyOnce(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	coll := db.Collection("events")
	ctx := context.Background()
	e := itest.BareEnv(t, "mongokill")
	ns := db.Name() + ".events"
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(0)}}); err != nil {
		t.Fatal(err)
	}
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: uri(), Source: "  tables: ['" + regexpQuote(ns) + "']\n"})
	itest.AppendConfig(t, cfg, itest.ExactlyOnceLines+"format:\n  schemas: false\n")
	topic := e.Prefix + "." + ns
	p := e.Start("run", "--config", cfg)
	p.WaitFor(t, 60*time.Second, "the snapshot", func() bool { return itest.TopicEnd(topic) >= 1 })

	const n = 600
	done := make(chan error, 1)
	go func() {
		for i := 1; i <= n; i++ {
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(i)}}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	p.KillAtTopicEnd(t, 60*time.Second, topic, 150, nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	p = e.Start("run", "--config", cfg)
	defer func() {
		if t.Failed() {
			t.Logf("output:\n%s", p.Out)
		}
	}()
	seen := func() map[string]int {
		m := map[string]int{}
		for _, r := range readRecords(t, topic) {
			m[string(r.key)]++
		}
		return m
	}
	// The killed task's open transaction holds read_committed readers
	// back until the new task's producer fences it, at its start.
	p.WaitFor(t, 60*time.Second, "the restart", func() bool { return strings.Contains(p.Out.String(), `"msg":"resuming from`) })
	p.WaitFor(t, 90*time.Second, "every insert", func() bool { return itest.TopicEnd(topic) >= n+1 && len(seen()) >= n+1 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, p.Out)
	}
	m := seen()
	for i := 0; i <= n; i++ {
		if k := intKey(i); m[k] != 1 {
			t.Errorf("key %s on the topic %d times", k, m[k])
		}
	}
	if len(m) != n+1 {
		t.Errorf("%d keys, want %d", len(m), n+1)
	}
}

// A document whose message is over destination.max_message_bytes is not
// published and is recorded as row.skipped (by key, never its contents),
// as for the other sources: one read by the snapshot and one inserted
// while streaming; the documents around them, and the delete of the big
// one (a small record) with its tombstone, are published.
func TestCLIMaxMessageBytesSkips(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	coll := db.Collection("docs")
	ctx := context.Background()
	big := strings.Repeat("x", 40<<10)
	for _, d := range []bson.D{
		{{Key: "_id", Value: int32(1)}, {Key: "v", Value: "small"}},
		{{Key: "_id", Value: int32(2)}, {Key: "v", Value: big}},
	} {
		if _, err := coll.InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	e := itest.BareEnv(t, "mongoskip")
	ns := db.Name() + ".docs"
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: uri(),
		Source:      "  tables: ['" + regexpQuote(ns) + "']\n",
		Destination: "  delete_mode: record_and_tombstone\n  max_message_bytes: 20000\n"})
	itest.AppendConfig(t, cfg, "format:\n  schemas: false\n")
	topic := e.Prefix + "." + ns
	p := e.Start("run", "--config", cfg)
	defer func() {
		if t.Failed() {
			t.Logf("output:\n%s", p.Out)
		}
	}()
	p.WaitFor(t, 60*time.Second, "the snapshot's small read and the big one skipped", func() bool {
		return itest.TopicEnd(topic) >= 1 && len(e.SkippedLines(t)) >= 1
	})
	for _, d := range []bson.D{
		{{Key: "_id", Value: int32(3)}, {Key: "v", Value: big}},
		{{Key: "_id", Value: int32(4)}, {Key: "v", Value: "small"}},
	} {
		if _, err := coll.InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: int32(2)}}); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, 60*time.Second, "the small insert, the delete and its tombstone", func() bool { return itest.TopicEnd(topic) >= 4 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d", code)
	}

	var got []string
	for _, r := range readRecords(t, topic) {
		op := "tombstone"
		if r.value != nil {
			var v struct{ Op string }
			if err := json.Unmarshal(r.value, &v); err != nil {
				t.Fatal(err)
			}
			op = v.Op
		}
		got = append(got, string(r.key)+" "+op)
	}
	slices.Sort(got)
	if want := []string{`{"id":"1"} r`, `{"id":"2"} d`, `{"id":"2"} tombstone`, `{"id":"4"} c`}; !slices.Equal(got, want) {
		t.Errorf("topic holds %v, want %v", got, want)
	}
	skipped := e.SkippedLines(t)
	ops := map[string]string{}
	for _, s := range skipped {
		op, _ := s.Extra["op"].(string)
		id, _ := s.PrimaryKey["id"].(string)
		ops[id] = op
		if s.Topic != topic || s.Table != ns || s.LimitBytes != 20000 || s.SizeBytes <= 20000 ||
			!strings.Contains(s.Reason, "max_message_bytes") {
			t.Errorf("row.skipped %+v", s)
		}
	}
	if len(skipped) != 2 || ops["2"] != "r" || ops["3"] != "c" {
		t.Errorf("row.skipped for %v (id: op), want 2: r and 3: c", ops)
	}
	if b, _ := json.Marshal(skipped); strings.Contains(string(b), big[:100]) {
		t.Error("a row.skipped event holds the document")
	}
}

// A captured collection dropped while tributary runs: the pipeline goes
// on (no error, exit 0 at SIGTERM), the collection created anew is
// captured from its first document, and after a restart nothing is
// published again (the checkpoint's captured set holds it: it is not
// snapshotted as a collection selected since).
func TestCLIDropAndRecreate(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	coll := db.Collection("items")
	ctx := context.Background()
	insertIDs(t, coll, 0, 1, 2)
	e := itest.BareEnv(t, "mongodrop")
	ns := db.Name() + ".items"
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: uri(), Source: "  tables: ['" + regexpQuote(ns) + "']\n"})
	itest.AppendConfig(t, cfg, "format:\n  schemas: false\n")
	topic := e.Prefix + "." + ns
	p := e.Start("run", "--config", cfg)
	defer func() {
		if t.Failed() {
			t.Logf("output:\n%s", p.Out)
		}
	}()
	p.WaitFor(t, 60*time.Second, "the snapshot", func() bool { return itest.TopicEnd(topic) >= 3 })
	if err := coll.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, 30*time.Second, "the drop", func() bool {
		return strings.Contains(p.Out.String(), "captured collection dropped or renamed away")
	})
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(10)}}); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, 60*time.Second, "the insert into the collection created anew", func() bool { return itest.TopicEnd(topic) >= 4 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d", code)
	}
	p = e.Start("run", "--config", cfg)
	itest.ModeDB{E: e}.AwaitStarted(t, p)
	time.Sleep(3 * time.Second) // a snapshot of it as new would come now
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d", code)
	}
	if end := itest.TopicEnd(topic); end != 4 {
		t.Errorf("%d records, want 4 (3 reads, the insert after the drop, nothing again after the restart)", end)
	}
}

// With a capture_mode that asks for pre-images, `tributary tables` warns
// about each selected collection that keeps none, and test-connection's
// pre-images line fails, each with the collMod command that turns them on.
// (mongo-java-server accepts changeStreamPreAndPostImages at create but
// does not keep it, so no collection of it has pre-images on.) The mode
// is written as Debezium takes it too, padded and in another case.
func TestCLIPreImageChecks(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	ctx := context.Background()
	for _, coll := range []string{"carts", "orders"} {
		if _, err := db.Collection(coll).InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	e := itest.BareEnv(t, "mongopre")
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: uri(),
		Source: "  tables: ['" + regexpQuote(db.Name()) + "\\..*']\n  capture_mode: ' CHANGE_STREAMS_Update_Full_With_Pre_Image'\n"})
	fix := func(coll string) string {
		return `db.getSiblingDB("` + db.Name() + `").runCommand({collMod: "` + coll + `", changeStreamPreAndPostImages: {enabled: true}})`
	}

	code, out := cli(t, e, "tables", "--config", cfg)
	t.Logf("tributary tables (exit %d):\n%s", code, out)
	if code != 0 || !strings.Contains(out, "2 tables would be captured") {
		t.Errorf("tables: exit %d\n%s", code, out)
	}
	for _, coll := range []string{"carts", "orders"} {
		if want := "warning: " + db.Name() + "." + coll + ": pre-images are off, so capture_mode change_streams_update_full_with_pre_image publishes its updates' and deletes' before as null; fix (MongoDB 6.0+): " + fix(coll); !strings.Contains(out, want) {
			t.Errorf("tables lacks %q", want)
		}
	}
	code, out = itest.TestConnection(t, e, cfg)
	t.Logf("tributary test-connection (exit %d):\n%s", code, out)
	if code != 1 || !strings.Contains(out, "FAIL pre-images") || !strings.Contains(out, "but "+db.Name()+".carts, "+db.Name()+".orders keep none") ||
		!strings.Contains(out, "fix: MongoDB 6.0 or later: "+fix("carts")+"; "+fix("orders")) {
		t.Errorf("test-connection: exit %d\n%s", code, out)
	}
}

// The CLI with format.unwrap (schemas off, add_fields op) and field paths
// (source.exclude_columns, source.rename_fields): two documents read by
// the snapshot, an insert and a delete while streaming. Each record is
// byte for byte what the message writer (checked against Debezium's
// ExtractNewDocumentState and FieldSelector) gives, the secret field left
// out and name renamed; the delete is one Kafka tombstone.
func TestCLIUnwrapWithFieldPaths(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	coll := db.Collection("items")
	ctx := context.Background()
	docs := []bson.D{
		{{Key: "_id", Value: int32(1)}, {Key: "name", Value: "apple"}, {Key: "secret", Value: "s1"}, {Key: "qty", Value: int64(5)}},
		{{Key: "_id", Value: int32(2)}, {Key: "name", Value: "pear"}, {Key: "tags", Value: bson.A{"a", "b"}}},
	}
	for _, d := range docs {
		if _, err := coll.InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	e := itest.BareEnv(t, "mongouw")
	ns := db.Name() + ".items"
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: uri(),
		Source: "  tables: ['" + regexpQuote(ns) + "']\n  exclude_columns: ['" + ns + ".secret']\n  rename_fields: ['" + ns + ".name:title']\n"})
	itest.AppendConfig(t, cfg, "format:\n  schemas: false\n  unwrap: true\n  add_fields: [op]\n")
	topic := e.Prefix + "." + ns
	p := e.Start("run", "--config", cfg)
	p.WaitFor(t, 60*time.Second, "the snapshot", func() bool { return itest.TopicEnd(topic) >= 2 })
	inserted := bson.D{{Key: "_id", Value: int32(3)}, {Key: "name", Value: "fig"}, {Key: "secret", Value: "s3"}}
	if _, err := coll.InsertOne(ctx, inserted); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, 60*time.Second, "the insert and the delete", func() bool { return itest.TopicEnd(topic) >= 4 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, p.Out)
	}
	sel, err := mongodb.NewFieldSelector([]string{ns + ".secret"}, []string{ns + ".name:title"})
	if err != nil {
		t.Fatal(err)
	}
	opt := mongodb.MessageOptions{Name: e.Prefix, Version: mongodb.DefaultVersion, Fields: sel, Unwrap: &mongodb.UnwrapOptions{AddFields: []string{"op"}}}
	var wants []mongodb.Message
	for _, d := range docs {
		raw, _ := bson.Marshal(d)
		m, err := mongodb.EncodeRead(db.Name(), "items", raw, bson.Timestamp{}, "true", opt, 0)
		if err != nil {
			t.Fatal(err)
		}
		wants = append(wants, m)
	}
	raw, _ := bson.Marshal(inserted)
	ins, err := mongodb.EncodeChange(mongodb.Event{Op: mongodb.OpInsert, DB: db.Name(), Collection: "items", Key: bson.Raw(raw).Lookup("_id"), After: raw}, opt, 0)
	if err != nil {
		t.Fatal(err)
	}
	wants = append(wants, ins, mongodb.Message{Key: wants[0].Key})
	// Key by key in order (the snapshot's reads and the stream interleave).
	byKey := func(keys, values [][]byte) map[string][]string {
		out := map[string][]string{}
		for i, k := range keys {
			v := "<tombstone>"
			if values[i] != nil {
				v = string(values[i])
			}
			out[string(k)] = append(out[string(k)], v)
		}
		return out
	}
	var gk, gv, wk, wv [][]byte
	for _, r := range readRecords(t, topic) {
		gk, gv = append(gk, r.key), append(gv, r.value)
	}
	for _, w := range wants {
		wk, wv = append(wk, w.Key), append(wv, w.Value)
	}
	if got, want := byKey(gk, gv), byKey(wk, wv); !reflect.DeepEqual(got, want) {
		t.Errorf("records by key:\n got %q\nwant %q", got, want)
	}
}

// Under exactly_once, a snapshot of a collection nobody writes to is
// committed: the last chunk's records are visible to read_committed
// consumers while the change stream stays idle, not only once the next
// change arrives.
func TestCLIExactlyOnceSnapshotCommittedWhileIdle(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	coll := db.Collection("quiet")
	ctx := context.Background()
	const n = 30
	for i := range n {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	e := itest.BareEnv(t, "mongoquiet")
	ns := db.Name() + ".quiet"
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: uri(), Source: "  tables: ['" + regexpQuote(ns) + "']\n"})
	itest.AppendConfig(t, cfg, itest.ExactlyOnceLines+"format:\n  schemas: false\n")
	topic := e.Prefix + "." + ns
	p := e.Start("run", "--config", cfg)
	defer func() {
		if t.Failed() {
			t.Logf("output:\n%s", p.Out)
		}
	}()
	p.WaitFor(t, 60*time.Second, "the snapshot's records written", func() bool { return itest.TopicEnd(topic) >= n })
	p.WaitFor(t, 20*time.Second, "the snapshot's transaction committed with no change after it", func() bool {
		end := itest.TopicEnd(topic)
		return end > n && itest.CommittedEnd(topic) == end
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d", code)
	}
	if got := len(readRecords(t, topic)); got != n {
		t.Errorf("read_committed sees %d records, want %d", got, n)
	}
}

// source.tables of patterns: an entry that matches one name only
// (`db\.fs\.files`, a GridFS collection) is that name's topic in the
// start-up report of missing topics, split at the first dot as MongoDB
// names it (<prefix>.db.fs.files), and patterns (`db\.f.+`, `db\.f.*`)
// name no topic of their own, so two of them are not refused as sharing
// one. Before, each entry was read as a table name: the report named
// `<prefix>.db_.fs_.files`, two patterns stopped the start as both
// publishing to `<prefix>.db_.f._`, and `db\.fs\.files` in two databases
// as both publishing to `<prefix>.fs.files`. Once the topic exists the
// document is published.
func TestCLIPatternTablesNameTheirTopics(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	other := newDB(t, c) // no collection: its topic is only reported
	if _, err := db.Collection("fs.files").InsertOne(context.Background(), bson.D{{Key: "_id", Value: int32(1)}}); err != nil {
		t.Fatal(err)
	}
	e := itest.BareEnv(t, "mongopat")
	q, qo := regexpQuote(db.Name()), regexpQuote(other.Name())
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: uri(),
		Source: "  tables: ['" + q + `\.fs\.files', '` + q + `\.f.+', '` + q + `\.f.*', '` + qo + `\.fs\.files']` + "\n"})
	itest.EditConfig(t, cfg, "create_missing_topics: true", "create_missing_topics: false")
	topic := e.Prefix + "." + db.Name() + ".fs.files"

	p := e.Start("run", "--config", cfg)
	p.WaitFor(t, 60*time.Second, "the missing-topic report", func() bool { return strings.Contains(p.Out.String(), "topics do not exist") })
	var report struct {
		Missing []string `json:"missing_topics"`
	}
	for _, line := range strings.Split(p.Out.String(), "\n") {
		if strings.Contains(line, "topics do not exist") {
			if err := json.Unmarshal([]byte(line), &report); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
		}
	}
	slices.Sort(report.Missing)
	want := []string{topic, e.Prefix + "." + other.Name() + ".fs.files"}
	slices.Sort(want)
	if !slices.Equal(report.Missing, want) {
		t.Errorf("missing topics reported: %q, want %q", report.Missing, want)
	}
	if _, err := itest.NewAdmin(t).CreateTopic(context.Background(), 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, 60*time.Second, "the document once the topic exists", func() bool { return itest.TopicEnd(topic) >= 1 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, p.Out)
	}
}

// A rename onto a field the document already has stops the pipeline, as
// it stops Debezium's connector; the error names the document's _id, so
// that the user can find it.
func TestCLIRenameOntoExistingFieldNamesTheDocument(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	if _, err := db.Collection("c").InsertOne(context.Background(), bson.D{{Key: "_id", Value: "doc-7"}, {Key: "a", Value: 1}, {Key: "b", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	e := itest.BareEnv(t, "mongoren")
	ns := db.Name() + ".c"
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: uri(),
		Source: "  tables: ['" + regexpQuote(ns) + "']\n  rename_fields: ['" + ns + ".a:b']\n"})
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the pipeline to stop", p.Exited)
	if out := p.Out.String(); !strings.Contains(out, `_id \"doc-7\"`) || !strings.Contains(out, "already has the field") {
		t.Errorf("the error does not name the document's _id:\n%s", out)
	}
	if n := itest.TopicEnd(e.Prefix + "." + ns); n != 0 {
		t.Errorf("%d records published", n)
	}
}

// A backfill asked for while the pipeline is stopped: a collection whose
// name holds a dot (GridFS's fs.files) is accepted by `tributary
// backfill --table` and re-published, and a name the include pattern
// matches but the pipeline does not capture (a typo: no such collection)
// is dropped with an error naming it when the pipeline starts, as a
// running pipeline refuses it; it is neither "read" (0 rows) nor kept in
// the checkpoint as a finished backfill.
func TestCLIBackfillWhileStoppedChecksTheNames(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	coll := db.Collection("fs.files")
	for i := range 3 {
		if _, err := coll.InsertOne(context.Background(), bson.D{{Key: "_id", Value: int32(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	e := itest.BareEnv(t, "mongobfs")
	ns, typo := db.Name()+".fs.files", db.Name()+".itemz"
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: uri(),
		Source: "  tables: ['" + regexpQuote(db.Name()) + `\..*']` + "\n  snapshot_mode: no_data\n"})
	topic := e.Prefix + "." + ns
	p := e.Start("run", "--config", cfg)
	itest.ModeDB{E: e}.AwaitStarted(t, p)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, p.Out)
	}
	if code, out := itest.BackfillCLI(t, e, "--config", cfg, "--table", ns+","+typo); code != 0 {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	p = e.Start("run", "--config", cfg)
	p.WaitFor(t, 60*time.Second, "the 3 documents re-published", func() bool { return itest.TopicEnd(topic) >= 3 })
	p.WaitFor(t, 30*time.Second, "the refusal of "+typo, func() bool {
		return strings.Contains(p.Out.String(), "not captured by this pipeline") && strings.Contains(p.Out.String(), typo)
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, p.Out)
	}
	if strings.Contains(p.Out.String(), `"table":"`+typo+`","resume"`) {
		t.Errorf("%s was read as a snapshot:\n%s", typo, p.Out)
	}
	b, err := os.ReadFile(filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), typo) {
		t.Errorf("the checkpoint keeps %s: %s", typo, b)
	}
}
