package mongodb

import (
	"encoding/json"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A stored cursor is outside bytes: whatever they are, decoding returns a
// cursor or an error, and a decoded cursor encodes back to the same
// cursor.
func FuzzDecodeCursor(f *testing.F) {
	f.Add([]byte(`{"resume_token":{"_data":"82657B"},"operation_time":{"t":1700000000,"i":7}}`))
	f.Add([]byte(`{"operation_time":{"t":1,"i":1}}`))
	f.Add([]byte(`{"resume_token":{"_data":{"$binary":{"base64":"AQ==","subType":"00"}}}}`))
	f.Add([]byte(`{"resume_token":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeCursor(data)
		if err != nil {
			return
		}
		b, err := c.MarshalJSON()
		if err != nil {
			t.Fatalf("decoded %q but cannot encode it: %v", data, err)
		}
		back, err := DecodeCursor(b)
		if err != nil || string(back.Token) != string(c.Token) || back.OperationTime != c.OperationTime {
			t.Fatalf("%q -> %s -> %+v %v", data, b, back, err)
		}
	})
}

// A stored snapshot position (an _id in Extended JSON) is outside bytes.
func FuzzDecodeID(f *testing.F) {
	for _, s := range []string{`{"_id":{"$oid":"65a1b2c3d4e5f60718293a4b"}}`, `{"_id":{"$numberInt":"1"}}`,
		`{"_id":"s"}`, `{"_id":{"a":{"$date":{"$numberLong":"-1"}}}}`, `{"_id":{"$maxKey":1}}`, `{"_id":[1]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := DecodeID(s)
		if err != nil {
			return
		}
		enc, err := EncodeID(v)
		if err != nil {
			t.Fatalf("decoded %q but cannot encode it: %v", s, err)
		}
		back, err := DecodeID(enc)
		if err != nil || !back.Equal(v) {
			t.Fatalf("%q -> %s -> %v %v", s, enc, back, err)
		}
		if _, _, err := chunkFilters(v, false); err != nil {
			t.Fatalf("decoded _id %s has no chunk filter: %v", enc, err)
		}
	})
}

// A change event is outside bytes (the server's, or a proxy's): decoding
// never panics, and a decoded data event always encodes to a message
// whose key and value are valid JSON.
func FuzzDecodeEvent(f *testing.F) {
	for _, s := range []string{
		`{"_id":{"_data":"1"},"operationType":"insert","ns":{"db":"d","coll":"c"},"documentKey":{"_id":1},"fullDocument":{"_id":1,"a":[1,{"b":{"$numberDecimal":"1.5"}}]}}`,
		`{"_id":{"_data":"1"},"operationType":"update","ns":{"db":"d","coll":"c"},"documentKey":{"_id":"k"},"updateDescription":{"updatedFields":{"a.b":{"$date":{"$numberLong":"5"}}},"removedFields":["x"],"truncatedArrays":[{"field":"t","newSize":1}]},"lsid":{"id":{"$binary":{"base64":"AQ==","subType":"04"}}},"txnNumber":{"$numberLong":"2"},"wallTime":{"$date":{"$numberLong":"7"}},"clusterTime":{"$timestamp":{"t":1,"i":2}}}`,
		`{"_id":{"_data":"1"},"operationType":"delete","ns":{"db":"d","coll":"c"},"documentKey":{"_id":{"$minKey":1}},"fullDocumentBeforeChange":{"s":"\u0000\ud83d\ude00"}}`,
	} {
		var raw bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(s), false, &raw); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := decodeEvent(bson.Raw(data), "d", "c")
		if err != nil || !ev.IsData() {
			return
		}
		m, err := EncodeChange(ev, MessageOptions{Name: "p", Version: DefaultVersion, Schemas: true}, 1)
		if err != nil {
			return // e.g. a value of a type no JSON form exists for
		}
		if !json.Valid(m.Key) {
			t.Fatalf("key not JSON: %s", m.Key)
		}
		// Strict mode writes NaN and Infinity bare inside the after string,
		// which is still a valid JSON string in the value.
		if !json.Valid(m.Value) {
			t.Fatalf("value not JSON: %s", m.Value)
		}
	})
}
