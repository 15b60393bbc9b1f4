package mongodb_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/source/mongodb"
)

// A snapshot chunk keeps no document after those kept reach
// snapshot.ChunkBytes, whatever rows it was asked for, as the engine
// requires of every source: a chunk sized on small documents that meets
// large ones holds a bounded size, and the next chunk reads on after its
// last document.
func TestSnapshotChunkStopsAtChunkBytes(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	ctx := context.Background()
	const docs, size = 12, 1 << 20
	var all []any
	for i := range docs {
		all = append(all, bson.D{{Key: "_id", Value: int32(i)}, {Key: "pad", Value: strings.Repeat("x", size)}})
	}
	if _, err := db.Collection("big").InsertMany(ctx, all); err != nil {
		t.Fatal(err)
	}
	ns := db.Name() + ".big"
	sess := snapshotSession(t, ns)
	first, err := sess.ReadChunk(ctx, ns, nil, nil, docs)
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, r := range first {
		held += snapshot.RowBytes(r.Event)
	}
	if len(first) == 0 || len(first) >= docs || held < snapshot.ChunkBytes || held-snapshot.RowBytes(first[len(first)-1].Event) >= snapshot.ChunkBytes {
		t.Fatalf("a chunk of %d documents of %d bytes asked for all %d kept %d of them, %d bytes: want it to stop at the first to reach %d bytes",
			docs, size, docs, len(first), held, snapshot.ChunkBytes)
	}
	rest, err := sess.ReadChunk(ctx, ns, first[len(first)-1].Key, nil, docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(first)+len(rest) != docs {
		t.Fatalf("read %d documents, then %d after the last kept; want %d in all", len(first), len(rest), docs)
	}
}

// The snapshot session tells a collection's row size from the server's
// statistics (snapshot.Sizer, collStats) before reading it, so that the
// engine reads the first chunk at full size: what it says is within a
// fifth of what a read row holds (snapshot.RowBytes), and 0, no error,
// for a collection that does not exist.
func TestSnapshotRowBytesFromStatistics(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	ctx := context.Background()
	var all []any
	for i := range 200 {
		all = append(all, bson.D{{Key: "_id", Value: int64(i)}, {Key: "pad", Value: strings.Repeat("y", 900+i)}})
	}
	if _, err := db.Collection("sized").InsertMany(ctx, all); err != nil {
		t.Fatal(err)
	}
	ns := db.Name() + ".sized"
	sess := snapshotSession(t, ns)
	sizer, ok := sess.(snapshot.Sizer)
	if !ok {
		t.Fatal("the MongoDB snapshot session is no snapshot.Sizer")
	}
	said, err := sizer.RowBytes(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := sess.ReadChunk(ctx, ns, nil, nil, len(all))
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, r := range rows {
		held += snapshot.RowBytes(r.Event)
	}
	avg := held / len(rows)
	if said < avg*4/5 || said > avg*6/5 {
		t.Errorf("RowBytes says %d bytes a row; the %d rows read hold %d each", said, len(rows), avg)
	}
	if n, err := sizer.RowBytes(ctx, db.Name()+".absent"); n != 0 || err != nil {
		t.Errorf("RowBytes of a collection that does not exist = %d, %v; want 0, nil", n, err)
	}
}

// snapshotSession is a snapshot session of a MongoDB source capturing ns,
// closed with the test.
func snapshotSession(t *testing.T, ns string) snapshot.Session {
	return snapshotSessionLog(t, ns, nil)
}

// snapshotSessionLog is snapshotSession logging to log.
func snapshotSessionLog(t *testing.T, ns string, log *slog.Logger) snapshot.Session {
	t.Helper()
	ctx := context.Background()
	src, err := mongodb.New(ctx, source.Options{TopicPrefix: "t", Logger: log,
		Config: config.Source{Type: "mongodb", URL: uri(), Tables: []string{regexpQuote(ns)}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	sdb, _ := src.Snapshots()
	sess, err := sdb.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// At the end of a bracket of _ids (numbers, strings, ObjectIds, …) the
// snapshot looks for later brackets only when the greatest _id is in one:
// for every pair of brackets, a collection holding _ids of both is read
// whole, each document once, in chunks of one and of many. The server's
// order across brackets decides the greatest _id: a server that orders
// two brackets otherwise than MongoDB loses the later one here.
func TestSnapshotReadsEveryLaterBracket(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	ctx := context.Background()
	ids := []any{bson.MinKey{}, bson.Null{}, int32(7), "s", bson.D{{Key: "k", Value: int32(1)}},
		bson.Binary{Data: []byte{1}}, bson.NewObjectID(), false, bson.DateTime(5),
		bson.Timestamp{T: 9, I: 1}, bson.MaxKey{}}
	for i, lo := range ids {
		for _, hi := range ids[i+1:] {
			name := fmt.Sprintf("b%d_%T", i, hi)
			coll := db.Collection(name)
			// Two of the earlier bracket (a chunk ends inside it), one of
			// the later.
			docs := []any{bson.D{{Key: "_id", Value: lo}}, bson.D{{Key: "_id", Value: hi}}}
			if second := sameBracketAfter(lo); second != nil {
				docs = append(docs, bson.D{{Key: "_id", Value: second}})
			}
			if _, err := coll.InsertMany(ctx, docs); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			ns := db.Name() + "." + name
			sess := snapshotSession(t, ns)
			for _, limit := range []int{1, 2, 10} {
				var after snapshot.Key
				seen := map[string]int{}
				for {
					rows, err := sess.ReadChunk(ctx, ns, after, nil, limit)
					if err != nil {
						t.Fatalf("%s, chunks of %d: %v", name, limit, err)
					}
					for _, r := range rows {
						seen[string(r.Key[0])]++
					}
					if len(rows) < limit {
						break
					}
					after = rows[len(rows)-1].Key
				}
				if len(seen) != len(docs) {
					t.Errorf("%s (_ids %v and %v), chunks of %d: read %d distinct _ids, want %d", name, lo, hi, limit, len(seen), len(docs))
				}
				for k, n := range seen {
					if n != 1 {
						t.Errorf("%s, chunks of %d: _id %x read %d times", name, limit, k, n)
					}
				}
			}
		}
	}
}

// A collection whose _ids are all of one bracket ends without reading the
// later brackets ($type), which a server without a range index on _id
// answers over every document. What shows the read here is
// mongo-java-server's answer to it: it refuses the deprecated types in
// $type, and the source logs that once. With a document of a later
// bracket, the read is made and the refusal logged.
func TestSnapshotOneBracketEndsWithoutTypeRead(t *testing.T) {
	if realServer() {
		t.Skip("a real server knows every type in $type: nothing shows the read")
	}
	c := client(t)
	db := newDB(t, c)
	ctx := context.Background()
	coll := db.Collection("ints")
	var docs []any
	for i := range 25 {
		docs = append(docs, bson.D{{Key: "_id", Value: int64(i)}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	ns := db.Name() + ".ints"
	var log bytes.Buffer
	sess := snapshotSessionLog(t, ns, slog.New(slog.NewTextHandler(&log, nil)))
	readAll := func() int {
		var after snapshot.Key
		n := 0
		for {
			rows, err := sess.ReadChunk(ctx, ns, after, nil, 10)
			if err != nil {
				t.Fatal(err)
			}
			n += len(rows)
			if len(rows) < 10 {
				return n
			}
			after = rows[len(rows)-1].Key
		}
	}
	const refused = "knows no symbol"
	if n := readAll(); n != 25 || strings.Contains(log.String(), refused) {
		t.Fatalf("read %d of 25 int64 _ids; log:\n%s\nwant all, and no $type read (no %q)", n, log.String(), refused)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "later"}}); err != nil {
		t.Fatal(err)
	}
	if n := readAll(); n != 26 || !strings.Contains(log.String(), refused) {
		t.Fatalf("read %d of 26 _ids, one a string; log:\n%s\nwant all, through the $type read (%q)", n, log.String(), refused)
	}
}

// sameBracketAfter is an _id of id's bracket that sorts after it; nil for
// the brackets of one value.
func sameBracketAfter(id any) any {
	switch v := id.(type) {
	case int32:
		return float64(v) + 0.5
	case string:
		return v + "t"
	case bson.D:
		return bson.D{{Key: "k", Value: int32(2)}}
	case bson.Binary:
		return bson.Binary{Data: []byte{2}}
	case bson.ObjectID:
		return bson.NewObjectID()
	case bool:
		return true
	case bson.DateTime:
		return v + 1
	case bson.Timestamp:
		return bson.Timestamp{T: v.T, I: v.I + 1}
	}
	return nil
}
