package mongodb_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// mixedID is the i-th _id of a collection of every pageable BSON type:
// numbers of four types that interleave in MongoDB's order, strings,
// documents, ObjectIds, dates and timestamps.
func mixedID(i int) any {
	switch i % 8 {
	case 0:
		return int32(i)
	case 1:
		return int64(i)
	case 2:
		return float64(i) + 0.5
	case 3:
		d, _ := bson.ParseDecimal128(fmt.Sprintf("%d.25", i))
		return d
	case 4:
		return fmt.Sprintf("s%06d", i)
	case 5:
		return bson.D{{Key: "k", Value: int32(i)}}
	case 6:
		return bson.NewDateTimeFromTime(time.UnixMilli(1700000000000 + int64(i)))
	}
	return bson.Timestamp{T: 1700000000, I: uint32(i + 1)}
}

// Small chunks over _ids of mixed types, writers inserting, updating and
// deleting across every bracket, and kill -9 three times during the
// snapshot: under exactly once every untouched document is read once and
// each key's last message is its final state; under at least once none is
// lost.
func TestCLIKillMixedIDsSmallChunks(t *testing.T) {
	for _, mode := range []string{"exactly_once", "at_least_once"} {
		t.Run(mode, func(t *testing.T) { killMixedIDs(t, mode) })
	}
}

func killMixedIDs(t *testing.T, mode string) {
	c := client(t)
	db := newDB(t, c)
	coll := db.Collection("mixed")
	ctx := context.Background()
	const n = 1600
	e := itest.BareEnv(t, "rvmixkill")
	keyOf := map[string]string{} // _id's extended JSON -> record key
	idText := func(id any) string {
		b, _ := bson.MarshalExtJSON(bson.D{{Key: "_id", Value: id}}, true, false)
		return string(b)
	}
	remember := func(id any) string {
		s := idText(id)
		if _, ok := keyOf[s]; !ok {
			keyOf[s] = string(wantRead(t, e.Prefix, db.Name(), "mixed", bson.D{{Key: "_id", Value: id}}).key)
		}
		return keyOf[s]
	}
	var docs []any
	for i := range n {
		remember(mixedID(i))
		docs = append(docs, bson.D{{Key: "_id", Value: mixedID(i)}, {Key: "v", Value: int32(0)}})
	}
	// No null _id: with one in the collection mongo-java-server's change
	// stream fails under these writers (a NullPointerException in the
	// server), which ends the run.
	for _, id := range []any{bson.MinKey{}, bson.MaxKey{}, true, false} {
		remember(id)
		docs = append(docs, bson.D{{Key: "_id", Value: id}, {Key: "v", Value: int32(0)}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	ns := db.Name() + ".mixed"
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: uri(),
		Source: "  tables: ['" + regexpQuote(ns) + "']\n", Destination: "  delete_mode: record_and_tombstone\n"})
	itest.AppendConfig(t, cfg, "delivery: "+mode+"\nformat:\n  schemas: false\n")
	topic := e.Prefix + "." + ns

	var mu sync.Mutex
	touched := map[string]bool{}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		next := n
		for w := 1; ; w++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			id := mixedID(rand.IntN(next))
			var err error
			switch w % 10 {
			case 0:
				_, err = coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
			case 1:
				id = mixedID(next)
				next++
				_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "v", Value: int32(w)}})
			default:
				_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: int32(w)}}}})
			}
			if err != nil {
				done <- err
				return
			}
			mu.Lock()
			touched[idText(id)] = true
			mu.Unlock()
			time.Sleep(3 * time.Millisecond)
		}
	}()
	env := []string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=7"}
	killThriceThenDrain(t, e, env, cfg, topic, 40, 300, 300*time.Second, stop, done)
	final := map[string]int{}
	cur, err := coll.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	for cur.Next(ctx) {
		id := cur.Current.Lookup("_id")
		s := idText(id)
		if _, ok := keyOf[s]; !ok {
			keyOf[s] = string(wantRead(t, e.Prefix, db.Name(), "mixed", bson.D{{Key: "_id", Value: id}}).key)
		}
		final[keyOf[s]] = int(cur.Current.Lookup("v").Int32())
	}
	state, reads, recs := topicState(t, topic, stateUnknown)
	bad := 0
	for k, v := range final {
		if got, ok := state[k]; !ok || got != v {
			if bad++; bad <= 10 {
				t.Errorf("key %s: topic ends with %d (present %v), collection has %d", k, got, ok, v)
			}
		}
	}
	for k := range state {
		if _, ok := final[k]; !ok {
			if bad++; bad <= 20 {
				t.Errorf("key %s on the topic, not in the collection", k)
			}
		}
	}
	twice, missing := 0, 0
	for s, k := range keyOf {
		if touched[s] {
			continue
		}
		if r := reads[k]; r == 0 || r > 1 && mode == "exactly_once" {
			if missing++; missing <= 10 {
				t.Errorf("untouched key %s read %d times", k, r)
			}
		}
	}
	for _, r := range reads {
		if r > 1 {
			twice++
		}
	}
	t.Logf("%d records, %d keys, %d wrong, %d read more than once, %d untouched not read right", recs, len(final), bad, twice, missing)
}
