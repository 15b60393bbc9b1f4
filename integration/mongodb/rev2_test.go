package mongodb_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-cdc/tributary/pkg/source/mongodb"
)

// A chunk that starts after the MinKey _id (a first chunk of one document,
// or one cut at snapshot.ChunkBytes, then resumed with a larger chunk)
// reads every later document once: $gt MinKey matches every type, so the
// later brackets' $type read must not follow it.
func TestChunkAfterMinKeyReadsEachOnce(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	coll := db.Collection("minkey")
	ctx := context.Background()
	for _, id := range []any{bson.MinKey{}, nil, int32(1), "a", bson.NewObjectID(), true, bson.MaxKey{}} {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
			t.Fatal(err)
		}
	}
	d, err := mongodb.NewDriver(mongodb.Config{Connection: mongodb.Connection{URI: uri()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	first, err := d.Snapshots().ReadChunk(ctx, db.Name()+".minkey", bson.RawValue{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if first.Last.Type != bson.TypeMinKey {
		t.Fatalf("first chunk ends at %v, want MinKey", first.Last)
	}
	ch, err := d.Snapshots().ReadChunk(ctx, db.Name()+".minkey", first.Last, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, doc := range ch.Docs {
		got = append(got, doc.Lookup("_id").String())
	}
	if len(got) != 6 || !ch.Done {
		t.Fatalf("the chunk after MinKey read %d documents (done %v), want the other 6 once: %v", len(got), ch.Done, got)
	}
}
