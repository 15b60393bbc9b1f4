package mongodb

import (
	"encoding/json"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
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
	f.Add(malformedCodeWithScope(false))
	f.Add(malformedCodeWithScope(true))
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

// malformedCodeWithScope is {_id: 1, c: <code with scope>} whose value's
// total length (8) passes a value's validation but holds no code string;
// cut, a string element after it claims 64 bytes and holds 2.
func malformedCodeWithScope(cut bool) []byte {
	idx, d := bsoncore.AppendDocumentStart(nil)
	d = bsoncore.AppendInt32Element(d, "_id", 1)
	d = append(d, byte(bson.TypeCodeWithScope), 'c', 0, 8, 0, 0, 0, 0, 0, 0, 0)
	if cut {
		d = append(d, byte(bson.TypeString), 's', 0, 64, 0, 0, 0, 'x', 0)
	}
	d, _ = bsoncore.AppendDocumentEnd(d, idx)
	return d
}

// A document whose nested value's bytes do not hold its type is an
// error, never a panic: written alone, and as the full document of an
// insert event that decodes (a reviewer found both panicking; the second
// did before the element walk changed too).
func TestMalformedValueIsAnError(t *testing.T) {
	for _, cut := range []bool{false, true} {
		doc := malformedCodeWithScope(cut)
		if _, err := appendDocString(nil, docWriter, doc); err == nil {
			t.Errorf("cut %v: %x written without an error", cut, doc)
		}
		idx, ev := bsoncore.AppendDocumentStart(nil)
		ev = bsoncore.AppendDocumentElement(ev, "_id", bsoncore.NewDocumentBuilder().AppendString("_data", "1").Build())
		ev = bsoncore.AppendStringElement(ev, "operationType", "insert")
		ev = bsoncore.AppendDocumentElement(ev, "ns", bsoncore.NewDocumentBuilder().AppendString("db", "d").AppendString("coll", "c").Build())
		ev = bsoncore.AppendDocumentElement(ev, "documentKey", bsoncore.NewDocumentBuilder().AppendInt32("_id", 1).Build())
		ev = bsoncore.AppendDocumentElement(ev, "fullDocument", doc)
		ev, _ = bsoncore.AppendDocumentEnd(ev, idx)
		e, err := decodeEvent(bson.Raw(ev), "d", "c")
		if err != nil {
			continue
		}
		if _, err := EncodeChange(e, MessageOptions{Name: "p", Version: DefaultVersion, Schemas: true}, 1); err == nil {
			t.Errorf("cut %v: the event of %x encoded without an error", cut, doc)
		}
	}
}
