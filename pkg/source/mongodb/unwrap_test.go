package mongodb

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
)

// unwrapOracles are the transform configurations whose output
// (testdata/oracle-unwrap-<name>.debezium) MongoHarness wrote with these
// arguments after the prefix "p".
var unwrapOracles = []struct {
	name, args string
	opt        MessageOptions
}{
	{"default", "unwrap", MessageOptions{Schemas: true, Unwrap: &UnwrapOptions{}}},
	{"rewrite-noschemas", "schemas.enable=false unwrap unwrap.delete.tombstone.handling.mode=rewrite unwrap.add.fields=op,source.ts_ms",
		MessageOptions{Unwrap: &UnwrapOptions{DeleteHandling: "rewrite", AddFields: []string{"op", "source.ts_ms"}}}},
	{"rewrite-with-tombstone", "unwrap unwrap.delete.tombstone.handling.mode=rewrite-with-tombstone unwrap.add.fields=source.ts_ms,op",
		MessageOptions{Schemas: true, Unwrap: &UnwrapOptions{DeleteHandling: "rewrite-with-tombstone", AddFields: []string{"source.ts_ms", "op"}}}},
	{"drop", "unwrap unwrap.delete.tombstone.handling.mode=drop", MessageOptions{Schemas: true, Unwrap: &UnwrapOptions{DeleteHandling: "drop"}}},
}

// encodeOracle encodes one oracle input as MongoHarness does (topic
// prefix "p", envelope ts_ms 0) with opt's converter and transform.
func encodeOracle(in bson.Raw, opt MessageOptions) (Message, error) {
	opt.Name, opt.Version = "p", DefaultVersion
	if evDoc, ok := in.Lookup("event").DocumentOK(); ok {
		ev, err := decodeEvent(evDoc, "", "")
		if err != nil {
			return Message{}, err
		}
		return EncodeChange(ev, opt, 0)
	}
	read := in.Lookup("read").Document()
	db, coll, _ := strings.Cut(read.Lookup("ns").StringValue(), ".")
	return EncodeRead(db, coll, read.Lookup("doc").Document(), bson.Timestamp{}, "true", opt, 0)
}

// unwrapCompare compares our record for an input with the harness's two
// lines: equal bytes, both failing, or (notBuilt) ours refused as not
// built while Debezium writes it.
func unwrapCompare(m Message, err error, key, value string) (notBuilt bool, ok bool) {
	if errors.Is(err, ErrUnwrapNotBuilt) {
		return true, true
	}
	if strings.HasPrefix(key, "<error>") {
		return false, err != nil
	}
	if err != nil {
		return false, false
	}
	if key == "<dropped>" {
		return false, m.Dropped
	}
	if !bytes.Equal(m.Key, []byte(key)) {
		return false, false
	}
	if value == "<tombstone>" {
		return false, m.Tombstone
	}
	return false, !m.Tombstone && !m.Dropped && string(m.Value) == value
}

// With format.unwrap, the key and value of every input in
// testdata/oracle-unwrap.jsonl (and the envelope oracle's inputs, which
// hold every BSON type) are byte for byte what Debezium 3.6.1's
// ExtractNewDocumentState and the JsonConverter write for them, in four
// configurations (schemas on and off, each delete handling, added
// fields); where the transform fails on a document, so do we. The
// inputs hold arrays of documents and arrays of arrays of every shape
// the transform treats apart (fields merged, missing, null, of other
// types, sub-documents, empty elements, nesting), and none is refused
// as not built.
func TestUnwrapMatchesDebeziumOracle(t *testing.T) {
	var ins []bson.Raw
	ins = append(ins, oracleInputs(t, "testdata/oracle-unwrap.jsonl")...)
	ins = append(ins, oracleInputs(t, "testdata/oracle-events.jsonl")...)
	for _, o := range unwrapOracles {
		t.Run(o.name, func(t *testing.T) {
			data, err := os.ReadFile("testdata/oracle-unwrap-" + o.name + ".debezium")
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, 1<<20)
			errs := 0
			for i, in := range ins {
				var lines [2]string
				for j := range lines {
					if !sc.Scan() {
						t.Fatalf("oracle output ends before input %d", i+1)
					}
					lines[j] = sc.Text()
				}
				m, err := encodeOracle(in, o.opt)
				notBuilt, ok := unwrapCompare(m, err, lines[0], lines[1])
				if strings.HasPrefix(lines[0], "<error>") {
					errs++
				}
				if notBuilt {
					t.Errorf("input %d: %v", i+1, err)
				}
				if !ok {
					t.Errorf("input %d:\n got %s\n     %s (err %v)\nwant %s\n     %s", i+1, m.Key, m.Value, err, lines[0], lines[1])
				}
			}
			if errs == 0 {
				t.Error("no input the transform fails on")
			}
		})
	}
}

// The pipeline's encoder, given the events this driver hands the loop,
// writes what the transform does: the same key and value as EncodeChange
// and EncodeRead, and for a delete the records Debezium publishes (with
// delete_mode record_and_tombstone: the connector's delete and tombstone,
// as the transform receives them).
func TestEncoderUnwrapsDocumentTables(t *testing.T) {
	ins := oracleInputs(t, "testdata/oracle-unwrap.jsonl")
	for _, o := range unwrapOracles {
		enc := debezium.NewEncoder(debezium.Options{TopicPrefix: "p", Version: DefaultVersion, Format: debezium.Format{
			NoSchemas: !o.opt.Schemas, Unwrap: true, DeleteHandling: orDefault(o.opt.Unwrap.DeleteHandling, "tombstone"),
			AddFields: o.opt.Unwrap.AddFields, Documents: true}})
		for i, in := range ins {
			want, werr := encodeOracle(in, o.opt)
			var ev *change.Event
			if evDoc, ok := in.Lookup("event").DocumentOK(); ok {
				e, err := decodeEvent(evDoc, "", "")
				if err != nil {
					t.Fatal(err)
				}
				ev = new(change.Event)
				changeEvent(ev, newTable(e.DB, e.Collection), e, "")
			} else {
				read := in.Lookup("read").Document()
				db, coll, _ := strings.Cut(read.Lookup("ns").StringValue(), ".")
				var err error
				if ev, _, err = readEvent(newTable(db, coll), read.Lookup("doc").Document(), bson.Timestamp{}, ""); err != nil {
					t.Fatal(err)
				}
			}
			key, _, kerr := enc.AppendKey(nil, ev)
			if werr != nil {
				if _, verr := enc.AppendValue(nil, ev, 0); kerr == nil && verr == nil {
					t.Errorf("%s input %d: no error; EncodeChange says %v", o.name, i+1, werr)
				}
				continue
			}
			if kerr != nil || !bytes.Equal(key, want.Key) {
				t.Errorf("%s input %d key: %s %v, want %s", o.name, i+1, key, kerr, want.Key)
			}
			sendValue, tombstone := true, false
			if ev.Op == change.OpDelete {
				sendValue, tombstone = enc.DeleteRecords("record_and_tombstone")
				wantTomb := want.Tombstone || o.opt.Unwrap.DeleteHandling == "rewrite-with-tombstone"
				if sendValue == (want.Tombstone || want.Dropped) || tombstone != wantTomb {
					t.Errorf("%s input %d: delete records value %v tombstone %v; want %+v", o.name, i+1, sendValue, tombstone, want)
				}
			}
			if !sendValue {
				continue
			}
			val, verr := enc.AppendValue(nil, ev, 0)
			if verr != nil || !bytes.Equal(val, want.Value) {
				t.Errorf("%s input %d value:\n got %s %v\nwant %s", o.name, i+1, val, verr, want.Value)
			}
		}
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
