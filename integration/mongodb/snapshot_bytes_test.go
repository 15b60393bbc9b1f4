package mongodb_test

import (
	"context"
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
	t.Helper()
	ctx := context.Background()
	src, err := mongodb.New(ctx, source.Options{TopicPrefix: "t",
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
