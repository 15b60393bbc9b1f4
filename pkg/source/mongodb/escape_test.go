package mongodb

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A name with invalid UTF-8 in the update description is written as
// Jackson writes the Java String Debezium decodes it to: U+FFFD in place
// of each bad byte, raw, never the escape \ufffd that Jackson does not
// write; as the relational encoder writes such bytes.
func TestMessageInvalidUTF8AsJackson(t *testing.T) {
	ev := Event{Op: OpUpdate, DB: "d", Collection: "c", Key: bson.RawValue{Type: bson.TypeInt32, Value: []byte{7, 0, 0, 0}},
		Update:      &UpdateDescription{RemovedFields: []string{"a\xffb"}, TruncatedArrays: []TruncatedArray{{Field: "t\xfe", NewSize: 1}}},
		ClusterTime: bson.Timestamp{T: 10, I: 2}}
	m, err := EncodeChange(ev, MessageOptions{Name: "pre", Version: DefaultVersion}, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"removedFields":["a` + "\uFFFD" + `b"]`, `{"field":"t` + "\uFFFD" + `","size":1}`} {
		if !strings.Contains(string(m.Value), want) {
			t.Errorf("value has no %s:\n%s", want, m.Value)
		}
	}
	if strings.Contains(string(m.Value), `\ufffd`) {
		t.Errorf("value has the escape \\ufffd, which Jackson does not write:\n%s", m.Value)
	}
}
