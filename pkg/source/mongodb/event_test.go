package mongodb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// ext parses canonical-or-relaxed Extended JSON into a document.
func ext(t testing.TB, s string) bson.Raw {
	t.Helper()
	var raw bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), false, &raw); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return raw
}

// Event shapes as the MongoDB specifications' change-stream tests record a
// real server's output (our own data in those shapes): every data event
// decodes with its key, images and update description; events that carry
// no document (drop, rename, invalidate, an operation type from a future
// server) decode without error.
func TestDecodeEventShapes(t *testing.T) {
	tok := `"_id": {"_data": "8263A1B2C3000000012B022C0100296E5A1004"}`
	ct := `"clusterTime": {"$timestamp": {"t": 1700000000, "i": 2}}`
	cases := []struct {
		name, doc string
		check     func(t *testing.T, ev Event)
	}{
		{"insert", `{` + tok + `, "operationType": "insert", ` + ct + `, "wallTime": {"$date": "2023-11-14T22:13:20.5Z"},
			"ns": {"db": "db0", "coll": "c0"}, "documentKey": {"_id": 1}, "fullDocument": {"_id": 1, "a": 1}}`,
			func(t *testing.T, ev Event) {
				if ev.Op != OpInsert || ev.Namespace() != "db0.c0" || ev.Key.Int32() != 1 || ev.After == nil ||
					ev.WallTimeMS != 1700000000500 || ev.ClusterTime.I != 2 {
					t.Errorf("%+v", ev)
				}
			}},
		{"update with truncated arrays and disambiguated paths", `{` + tok + `, "operationType": "update", ` + ct + `,
			"ns": {"db": "db0", "coll": "c0"}, "documentKey": {"_id": {"$oid": "65a1b2c3d4e5f60718293a4b"}},
			"updateDescription": {"updatedFields": {}, "removedFields": [], "truncatedArrays": [{"field": "array", "newSize": 2}],
			"disambiguatedPaths": {}}}`,
			func(t *testing.T, ev Event) {
				if ev.Op != OpUpdate || ev.Update == nil || len(ev.Update.TruncatedArrays) != 1 ||
					ev.Update.TruncatedArrays[0] != (TruncatedArray{"array", 2}) || ev.After != nil || ev.Key.Type != bson.TypeObjectID {
					t.Errorf("%+v", ev)
				}
			}},
		{"update, fullDocument whenAvailable but disabled", `{` + tok + `, "operationType": "update", ` + ct + `,
			"ns": {"db": "db0", "coll": "c0"}, "documentKey": {"_id": 1}, "updateDescription": {"updatedFields": {"x": 2}, "removedFields": ["y"]},
			"fullDocument": null}`,
			func(t *testing.T, ev Event) {
				if ev.After != nil || ev.Update.RemovedFields[0] != "y" || ev.Update.UpdatedFields.Lookup("x").Int32() != 2 {
					t.Errorf("%+v", ev)
				}
			}},
		{"update with pre- and post-image in a transaction", `{` + tok + `, "operationType": "update", ` + ct + `,
			"ns": {"db": "db0", "coll": "c0"}, "documentKey": {"_id": 1}, "updateDescription": {"updatedFields": {"x": 2}, "removedFields": []},
			"fullDocument": {"_id": 1, "x": 2}, "fullDocumentBeforeChange": {"_id": 1, "x": 1},
			"lsid": {"id": {"$binary": {"base64": "4ISrTVwVRyeuv4doh67VDg==", "subType": "04"}}}, "txnNumber": {"$numberLong": "3"}}`,
			func(t *testing.T, ev Event) {
				if ev.Before == nil || ev.After == nil || ev.LSID == nil || ev.TxnNumber == nil || *ev.TxnNumber != 3 {
					t.Errorf("%+v", ev)
				}
			}},
		{"replace", `{` + tok + `, "operationType": "replace", ` + ct + `, "ns": {"db": "db0", "coll": "c0"},
			"documentKey": {"_id": "k", "shard": 4}, "fullDocument": {"_id": "k", "z": 3}}`,
			func(t *testing.T, ev Event) {
				if ev.Op != OpReplace || ev.Key.StringValue() != "k" || ev.DocumentKey.Lookup("shard").Int32() != 4 {
					t.Errorf("%+v", ev)
				}
			}},
		{"delete", `{` + tok + `, "operationType": "delete", ` + ct + `, "ns": {"db": "db0", "coll": "c0"}, "documentKey": {"_id": 1}}`,
			func(t *testing.T, ev Event) {
				if ev.Op != OpDelete || ev.After != nil || ev.Before != nil {
					t.Errorf("%+v", ev)
				}
			}},
		{"rename", `{` + tok + `, "operationType": "rename", ` + ct + `, "ns": {"db": "db0", "coll": "c0"}, "to": {"db": "db0", "coll": "c1"}}`,
			func(t *testing.T, ev Event) {
				if ev.Op != OpRename || ev.IsData() {
					t.Errorf("%+v", ev)
				}
			}},
		{"drop", `{` + tok + `, "operationType": "drop", ` + ct + `, "ns": {"db": "db0", "coll": "c0"}}`,
			func(t *testing.T, ev Event) {
				if ev.Op != OpDrop {
					t.Errorf("%+v", ev)
				}
			}},
		{"invalidate", `{` + tok + `, "operationType": "invalidate", ` + ct + `}`,
			func(t *testing.T, ev Event) {
				if ev.Op != OpInvalidate {
					t.Errorf("%+v", ev)
				}
			}},
		{"an operation type from a future server", `{` + tok + `, "operationType": "addedInFutureMongoDBVersion", "ns": {"db": "db0", "coll": "c0"}, "newField": "v"}`,
			func(t *testing.T, ev Event) {
				if ev.IsData() {
					t.Errorf("%+v", ev)
				}
			}},
		{"view namespace", `{` + tok + `, "operationType": "insert", "ns": {"db": "db0", "coll": "c0", "viewOn": "db0.base"}, "documentKey": {"_id": 1}, "fullDocument": {"_id": 1}}`,
			func(t *testing.T, ev Event) {
				if ev.Namespace() != "db0.c0" {
					t.Errorf("%+v", ev)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, err := decodeEvent(ext(t, c.doc), "", "")
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, ev)
		})
	}
}

// Broken events are errors naming the field; mongo-java-server's update
// events (operators in documentKey, no ns) take the key from the looked-up
// document and the namespace from the watched collection.
func TestDecodeEventErrors(t *testing.T) {
	for doc, want := range map[string]string{
		`{"operationType": "insert"}`: "_id (the resume token)",
		`{"_id": {"_data": "1"}}`:     "operationType",
		`{"_id": {"_data": "1"}, "operationType": "insert", "ns": {"db": "d", "coll": "c"}, "fullDocument": {"a": 1}}`:                                                              "without documentKey._id",
		`{"_id": {"_data": "1"}, "operationType": "insert", "documentKey": {"_id": 1}}`:                                                                                             "without ns.db",
		`{"_id": {"_data": "1"}, "operationType": "update", "ns": "d.c", "documentKey": {"_id": 1}}`:                                                                                "ns is string",
		`{"_id": {"_data": "1"}, "operationType": "update", "ns": {"db": "d", "coll": "c"}, "documentKey": {"_id": 1}, "clusterTime": 5}`:                                           "clusterTime",
		`{"_id": {"_data": "1"}, "operationType": "update", "ns": {"db": "d", "coll": "c"}, "documentKey": {"_id": 1}, "updateDescription": {"removedFields": [1]}}`:                "removedFields",
		`{"_id": {"_data": "1"}, "operationType": "update", "ns": {"db": "d", "coll": "c"}, "documentKey": {"_id": 1}, "updateDescription": {"truncatedArrays": [{"field": "a"}]}}`: "truncatedArrays",
	} {
		_, err := decodeEvent(ext(t, doc), "", "")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to say %q", doc, err, want)
		}
	}
	ev, err := decodeEvent(ext(t, `{"_id": {"_data": "6b1"}, "operationType": "update", "fullDocument": {"_id": 7, "b": 2},
		"documentKey": {"$set": {"b": 2}}, "clusterTime": {"$timestamp": {"t": 1, "i": 2}}}`), "d", "c")
	if err != nil || ev.Key.Int32() != 7 || ev.Namespace() != "d.c" {
		t.Errorf("mongo-java-server update: %+v, %v", ev, err)
	}
}

// A split event's fragments join into the whole event, with the last
// fragment's resume token.
func TestJoinSplitEvent(t *testing.T) {
	var j joiner
	f1 := ext(t, `{"_id": {"_data": "A1"}, "splitEvent": {"fragment": 1, "of": 3}, "operationType": "update",
		"ns": {"db": "d", "coll": "c"}, "documentKey": {"_id": 1}, "clusterTime": {"$timestamp": {"t": 9, "i": 1}}}`)
	f2 := ext(t, `{"_id": {"_data": "A2"}, "splitEvent": {"fragment": 2, "of": 3}, "fullDocumentBeforeChange": {"_id": 1, "big": "x"}}`)
	f3 := ext(t, `{"_id": {"_data": "A3"}, "splitEvent": {"fragment": 3, "of": 3}, "fullDocument": {"_id": 1, "big": "y"}}`)
	for _, f := range []bson.Raw{f1, f2} {
		if whole, err := j.add(f); err != nil || whole != nil {
			t.Fatalf("fragment: %v %v", whole, err)
		}
	}
	whole, err := j.add(f3)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := decodeEvent(whole, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Token.Lookup("_data").StringValue() != "A3" || ev.Before.Lookup("big").StringValue() != "x" ||
		ev.After.Lookup("big").StringValue() != "y" || ev.Key.Int32() != 1 {
		t.Errorf("joined: %s", whole)
	}
	if _, err := j.add(f2); err == nil {
		t.Error("a fragment 2 without 1: no error")
	}
}

func TestFilter(t *testing.T) {
	f, err := NewFilter([]string{`shop\..*`, `crm\.people`}, []string{`shop\.tmp_.*`})
	if err != nil {
		t.Fatal(err)
	}
	for ns, want := range map[string]bool{
		"shop.orders": true, "SHOP.Orders": true, "crm.people": true, "crm.people2": false,
		"shop.tmp_x": false, "other.orders": false, "shop.system.views": false, "admin.shop": false,
	} {
		db, coll, _ := strings.Cut(ns, ".")
		if got := f.Match(db, coll); got != want {
			t.Errorf("Match(%s) = %v, want %v", ns, got, want)
		}
	}
	all, _ := NewFilter(nil, nil)
	if !all.Match("a", "b") || all.Match("local", "oplog.rs") || all.Match("config", "x") {
		t.Error("empty include list: every user collection, no system one")
	}
	if _, err := NewFilter([]string{"(", ""}, []string{"[z-a]"}); err == nil ||
		!strings.Contains(err.Error(), "source.collections[0]") || !strings.Contains(err.Error(), "source.collections[1]") ||
		!strings.Contains(err.Error(), "source.exclude_collections[0]") {
		t.Errorf("bad patterns: %v", err)
	}
}

// The cursor's JSON round-trips, and what is not a cursor is refused.
func TestCursorJSON(t *testing.T) {
	c := Cursor{Token: ext(t, `{"_data": "82657B"}`), OperationTime: bson.Timestamp{T: 1700000000, I: 7}}
	b, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"resume_token":{"_data":"82657B"},"operation_time":{"t":1700000000,"i":7}}`; string(b) != want {
		t.Fatalf("got %s want %s", b, want)
	}
	back, err := DecodeCursor(b)
	if err != nil || string(back.Token) != string(c.Token) || back.OperationTime != c.OperationTime {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if b, _ := (Cursor{OperationTime: bson.Timestamp{T: 1, I: 1}}).MarshalJSON(); string(b) != `{"operation_time":{"t":1,"i":1}}` {
		t.Errorf("time only: %s", b)
	}
	for _, bad := range []string{`{"resume_token": 5}`, `{"x": 1}`, `[]`, `{"operation_time": {"t": -1}}`, `{} {}`} {
		if _, err := DecodeCursor([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// A stored _id round-trips for every type an _id can have; the chunk
// filter pages across type brackets.
func TestIDRoundTripAndChunkFilter(t *testing.T) {
	doc := ext(t, `{"a": 1, "b": {"$numberLong": "2"}, "c": "s", "d": {"x": 1}, "e": {"$oid": "65a1b2c3d4e5f60718293a4b"},
		"f": {"$date": {"$numberLong": "-1"}}, "g": {"$numberDecimal": "1.5"}, "h": {"$binary": {"base64": "AQ==", "subType": "04"}},
		"i": true, "j": null, "k": {"$minKey": 1}, "l": {"$maxKey": 1}, "m": {"$timestamp": {"t": 1, "i": 2}}}`)
	elems, _ := doc.Elements()
	for _, e := range elems {
		s, err := EncodeID(e.Value())
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeID(s)
		if err != nil || !back.Equal(e.Value()) {
			t.Errorf("%s: %v %v", s, back, err)
		}
	}
	if _, err := DecodeID(`{"_id": [1]}`); err == nil {
		t.Error("an array _id: no error")
	}
	same, later, err := chunkFilters(doc.Lookup("l"), false)
	if err != nil || len(same) != 1 || same[0].Key != "_id" || later != nil {
		t.Errorf("after MaxKey: %v %v %v", same, later, err)
	}
	same, later, _ = chunkFilters(doc.Lookup("a"), false)
	if len(same) != 1 || len(later) != 1 || later[0].Key != "_id" {
		t.Errorf("after a number: %v then %v", same, later)
	}
}

// Reopening the stream is worth trying after network errors, timeouts and
// errors the server labels resumable; never after a lost resume point.
func TestRetriable(t *testing.T) {
	d := &Driver{}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{mongo.CommandError{Code: 286, Name: "ChangeStreamHistoryLost", Labels: []string{"ResumableChangeStreamError"}}, false},
		{mongo.CommandError{Code: 136, Name: "CappedPositionLost"}, false},
		{mongo.CommandError{Code: 280, Name: "ChangeStreamFatalError"}, false},
		{mongo.CommandError{Code: 91, Name: "ShutdownInProgress", Labels: []string{"ResumableChangeStreamError"}}, true},
		{mongo.CommandError{Code: 10107, Name: "NotWritablePrimary", Labels: []string{"RetryableError"}}, true},
		{mongo.CommandError{Code: 13, Name: "Unauthorized"}, false},
		{&scrubbed{msg: "x", err: mongo.CommandError{Code: 91, Labels: []string{"ResumableChangeStreamError"}}}, true},
		{fmt.Errorf("wrapped: %w", ErrHistoryLost), false},
		{context.DeadlineExceeded, true},
		{errors.New("decode"), false},
	} {
		if got := d.Retriable(c.err); got != c.want {
			t.Errorf("Retriable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// mongo-java-server's update of a document deleted before the lookup
// carries no _id anywhere (documentKey the operators, fullDocument the
// $set delta): decoded with its key lost, for the reader to skip, rather
// than an error that stops the pipeline at the same event on every start.
func TestDecodeUpdateWithoutID(t *testing.T) {
	ev, err := decodeEvent(ext(t, `{"_id": {"_data": "6b2"}, "operationType": "update", "fullDocument": {"v": 5},
		"documentKey": {"$set": {"v": 5}}, "clusterTime": {"$timestamp": {"t": 1, "i": 3}}}`), "d", "c")
	if err != nil || !ev.KeyLost() {
		t.Fatalf("update without _id: %+v, %v", ev, err)
	}
	if _, err := decodeEvent(ext(t, `{"_id": {"_data": "6b3"}, "operationType": "delete", "documentKey": {"$set": {"v": 5}}}`), "d", "c"); err == nil {
		t.Error("a delete without _id decoded")
	}
}
