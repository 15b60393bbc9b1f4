package mongodb

import (
	"bufio"
	"bytes"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
)

// The pipeline's encoder, given the change.Events this driver hands the
// loop (document tables), writes byte for byte what Debezium's MongoDB
// connector writes for the oracle inputs (testdata/oracle-events.*, the
// output of its own classes): the same bytes as the message writer alone,
// so nothing is lost between the change stream and the topic.
func TestEncoderWritesDebeziumForDocumentTables(t *testing.T) {
	ins := oracleInputs(t, "testdata/oracle-events.jsonl")
	f, err := os.Open("testdata/oracle-events.debezium")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: "p", Version: DefaultVersion})
	tables := map[string]*change.Table{}
	table := func(db, coll string) *change.Table {
		if tables[db+"."+coll] == nil {
			tables[db+"."+coll] = newTable(db, coll)
		}
		return tables[db+"."+coll]
	}
	for i, in := range ins {
		var ev *change.Event
		if evDoc, ok := in.Lookup("event").DocumentOK(); ok {
			e, err := decodeEvent(evDoc, "", "")
			if err != nil {
				t.Fatal(err)
			}
			ev = new(change.Event)
			changeEvent(ev, table(e.DB, e.Collection), e, "")
		} else {
			read := in.Lookup("read").Document()
			db, coll, _ := strings.Cut(read.Lookup("ns").StringValue(), ".")
			if ev, _, err = readEvent(table(db, coll), read.Lookup("doc").Document(), bson.Timestamp{}, ""); err != nil {
				t.Fatal(err)
			}
			ev.Source.Snapshot = "true"
		}
		if topic := enc.Topic(ev.Table); topic != "p."+ev.Table.ID.DB+"."+ev.Table.ID.Name {
			t.Errorf("input %d: topic %s", i+1, topic)
		}
		key, ok, err := enc.AppendKey(nil, ev)
		if err != nil || !ok {
			t.Fatalf("input %d: key: %v %v", i+1, ok, err)
		}
		value, err := enc.AppendValue(nil, ev, 0)
		if err != nil {
			t.Fatalf("input %d: value: %v", i+1, err)
		}
		for _, got := range [][]byte{key, value} {
			if !sc.Scan() {
				t.Fatalf("oracle output ends before input %d", i+1)
			}
			if want := sc.Bytes(); !bytes.Equal(got, want) {
				t.Errorf("input %d:\n got %s\nwant %s", i+1, got, want)
			}
		}
	}
}
