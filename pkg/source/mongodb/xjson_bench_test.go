package mongodb

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// benchDoc is a typical document: a dozen fields of the common types, a
// nested document and an array.
func benchDoc(b *testing.B) bson.Raw {
	b.Helper()
	raw, err := bson.Marshal(bson.D{
		{Key: "_id", Value: bson.NewObjectID()},
		{Key: "name", Value: "Widget, large"},
		{Key: "sku", Value: "W-10442-L"},
		{Key: "qty", Value: int32(17)},
		{Key: "price", Value: 12.5},
		{Key: "total", Value: int64(212)},
		{Key: "active", Value: true},
		{Key: "createdAt", Value: bson.DateTime(1700000000123)},
		{Key: "note", Value: nil},
		{Key: "address", Value: bson.D{{Key: "street", Value: "1 Main St"}, {Key: "city", Value: "Springfield"}, {Key: "zip", Value: "12345"}}},
		{Key: "tags", Value: bson.A{"a", "b", "c"}},
		{Key: "lines", Value: bson.A{bson.D{{Key: "sku", Value: "A"}, {Key: "n", Value: int32(1)}}, bson.D{{Key: "sku", Value: "B"}, {Key: "n", Value: int32(2)}}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// wideDoc is a document of n scalar fields.
func wideDoc(b *testing.B, n int) bson.Raw {
	b.Helper()
	d := bson.D{}
	for i := range n {
		d = append(d, bson.E{Key: fmt.Sprintf("field_%d", i), Value: int32(i)})
	}
	raw, err := bson.Marshal(d)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

func benchmarkAppendDocument(b *testing.B, doc bson.Raw) {
	buf := make([]byte, 0, 64<<10)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = docWriter.appendDocument(buf[:0], doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendDocument(b *testing.B)        { benchmarkAppendDocument(b, benchDoc(b)) }
func BenchmarkAppendDocumentWide100(b *testing.B) { benchmarkAppendDocument(b, wideDoc(b, 100)) }
func BenchmarkAppendDocumentWide1000(b *testing.B) {
	benchmarkAppendDocument(b, wideDoc(b, 1000))
}

func BenchmarkEncodeRead(b *testing.B) {
	doc := benchDoc(b)
	opt := MessageOptions{Name: "p", Version: DefaultVersion, Schemas: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeRead("shop", "orders", doc, bson.Timestamp{}, "true", opt, 0); err != nil {
			b.Fatal(err)
		}
	}
}
