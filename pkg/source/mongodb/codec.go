package mongodb

import (
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// A collection is a document table (change.Table.Document): its rows hold
// the document's _id, the document and an update's description, all as
// BSON, and the message is written by this package (message.go) when the
// pipeline encodes the event. The encoder still owns the topic, the
// format's options and the delete records.

// Columns of a collection's rows.
const (
	colID       = iota // the _id: its BSON type byte, then its value's bytes
	colDocument        // the document (fullDocument, a pre-image on before), or null
	colUpdate          // updateDescription, on an update's after row, or null
	nCols
)

// Slots of a collection's change.Source.
const (
	intOrd    = 0 // the clusterTime's increment
	intTxn    = 1 // txnNumber
	intWall   = 2 // wallTime, ms; 0: none
	intHasTxn = 3 // 1: txnNumber is set
	strLSID   = 0 // lsid, as BSON bytes
)

// sourceBlock is Debezium's MongoDB source block, declared for the loop
// and the pipeline; the message itself is written by appendPayload.
var sourceBlockDecl = &change.SourceBlock{
	Connector:  "mongodb",
	SchemaName: "io.debezium.connector.mongo.Source",
	Fields: []change.SourceField{
		{Name: "collection", Type: change.SourceString, From: change.FromTable},
		{Name: "ord", Type: change.SourceInt32, Slot: intOrd},
		{Name: "lsid", Type: change.SourceString, Optional: true, Slot: strLSID},
		{Name: "txnNumber", Type: change.SourceInt64, Optional: true, Slot: intTxn},
		{Name: "wallTime", Type: change.SourceInt64, Optional: true, Slot: intWall},
	},
}

// codec is every collection's change.DocumentCodec.
type codec struct{}

var docCodec change.DocumentCodec = codec{}

// newTable is the document table of db.coll.
func newTable(db, coll string) *change.Table {
	return &change.Table{
		ID: change.TableID{DB: db, Name: coll},
		Columns: []change.Column{
			{Name: "_id", Type: change.Type{Kind: change.KindBytes, Name: "bson"}},
			{Name: "document", Type: change.Type{Kind: change.KindBytes, Name: "bson"}, Optional: true},
			{Name: "updateDescription", Type: change.Type{Kind: change.KindBytes, Name: "bson"}, Optional: true},
		},
		Key:      []int{colID},
		Version:  1,
		Document: docCodec,
	}
}

// idValue is the row value of an _id.
func idValue(id bson.RawValue) change.Value {
	b := make([]byte, 0, 1+len(id.Value))
	b = append(b, byte(id.Type))
	return change.BinaryValue(append(b, id.Value...))
}

func docValue(doc bson.Raw) change.Value {
	if doc == nil {
		return change.Value{}
	}
	return change.BinaryValue(doc)
}

// rowID reads an _id back from a row.
func rowID(row change.Row) (bson.RawValue, error) {
	if len(row) != nCols || row[colID].Kind != change.Binary || len(row[colID].Bytes) < 1 {
		return bson.RawValue{}, errors.New("a collection's row without its _id")
	}
	b := row[colID].Bytes
	return bson.RawValue{Type: bson.Type(b[0]), Value: b[1:]}, nil
}

func rowDoc(row change.Row, col int) bson.Raw {
	if len(row) != nCols || row[col].Kind != change.Binary {
		return nil
	}
	return bson.Raw(row[col].Bytes)
}

func (codec) AppendDocumentKey(dst []byte, ev *change.Event, f change.DocumentFormat) ([]byte, error) {
	row := ev.After
	if row == nil {
		row = ev.Before
	}
	id, err := rowID(row)
	if err != nil {
		return dst, err
	}
	if f.Unwrap {
		return appendUnwrapKey(dst, id, f.Schemas)
	}
	return appendKey(dst, topicOf(ev, f), id, f.Schemas)
}

func topicOf(ev *change.Event, f change.DocumentFormat) string {
	name := ev.Source.Name
	if name == "" {
		name = f.Prefix
	}
	return Topic(name, ev.Table.ID.DB, ev.Table.ID.Name)
}

func (codec) AppendDocumentValue(dst []byte, ev *change.Event, f change.DocumentFormat, nowMicros int64) ([]byte, error) {
	p := payload{op: byte(ev.Op)}
	if ev.Before != nil {
		p.before = rowDoc(ev.Before, colDocument)
	}
	if ev.After != nil {
		p.after = rowDoc(ev.After, colDocument)
		if ud := rowDoc(ev.After, colUpdate); ud != nil {
			u, err := decodeUpdateDescription(ud)
			if err != nil {
				return dst, err
			}
			p.update = u
		}
	}
	s := &ev.Source
	name := s.Name
	if name == "" {
		name = f.Prefix
	}
	snap := s.Snapshot
	if snap == "" {
		snap = "false"
	}
	p.src = sourceBlock{name: name, version: f.Version, tsMS: s.CommitMicros / 1000, snapshot: snap,
		db: ev.Table.ID.DB, coll: ev.Table.ID.Name, ord: int32(s.Ints[intOrd]), wallMS: s.Ints[intWall]}
	if s.Strings[strLSID] != "" {
		p.src.lsid = bson.Raw(s.Strings[strLSID])
	}
	if s.Ints[intHasTxn] == 1 {
		txn := s.Ints[intTxn]
		p.src.txn = &txn
	}
	if f.Unwrap {
		id, err := rowID(ev.After)
		if ev.After == nil {
			id, err = rowID(ev.Before)
		}
		if err != nil {
			return dst, err
		}
		out, ok, err := appendUnwrapValue(dst, topicOf(ev, f), id, p, &UnwrapOptions{DeleteHandling: f.DeleteHandling, AddFields: f.AddFields}, f.Schemas)
		if err != nil {
			return dst, fmt.Errorf("%s.%s: %w", ev.Table.ID.DB, ev.Table.ID.Name, err)
		}
		if !ok {
			// The pipeline asks for no value record where the transform
			// writes none (debezium.Encoder.DeleteRecords).
			return dst, fmt.Errorf("%s.%s: format.unwrap writes no value for this %s", ev.Table.ID.DB, ev.Table.ID.Name, ev.Op)
		}
		return out, nil
	}
	out, err := appendValue(dst, topicOf(ev, f), p, f.Schemas, nowMicros/1000)
	if err != nil {
		return dst, fmt.Errorf("%s.%s: %w", ev.Table.ID.DB, ev.Table.ID.Name, err)
	}
	return out, nil
}

// changeEvent fills ev with the change of a data event of table t.
func changeEvent(ev *change.Event, t *change.Table, e Event, name string) {
	*ev = change.Event{Table: t}
	id := idValue(e.Key)
	switch e.Op {
	case OpInsert:
		ev.Op = change.OpCreate
	case OpUpdate, OpReplace:
		ev.Op = change.OpUpdate
	case OpDelete:
		ev.Op = change.OpDelete
	}
	if ev.Op != change.OpCreate && (e.Before != nil || ev.Op == change.OpDelete) {
		ev.Before = change.Row{id, docValue(e.Before), {}}
	}
	if ev.Op != change.OpDelete {
		ev.After = change.Row{id, docValue(e.After), {}}
		if e.Update != nil {
			ev.After[colUpdate] = change.BinaryValue(updateBSON(e.Update))
		}
	}
	ts := e.WallTimeMS
	if ts == 0 {
		ts = int64(e.ClusterTime.T) * 1000
	}
	ev.Source = change.Source{Block: sourceBlockDecl, Name: name, DB: e.DB, Table: e.Collection, CommitMicros: ts * 1000}
	ev.Source.Ints[intOrd] = int64(e.ClusterTime.I)
	ev.Source.Ints[intWall] = e.WallTimeMS
	if e.TxnNumber != nil {
		ev.Source.Ints[intTxn], ev.Source.Ints[intHasTxn] = *e.TxnNumber, 1
	}
	if e.LSID != nil {
		ev.Source.Strings[strLSID] = string(e.LSID)
	}
	ev.ID = "mg:" + e.Token.String()
}

// updateBSON writes an update description back as the server sends it,
// for decodeUpdateDescription to read in the codec.
func updateBSON(u *UpdateDescription) bson.Raw {
	var d bson.D
	if u.UpdatedFields != nil {
		d = append(d, bson.E{Key: "updatedFields", Value: u.UpdatedFields})
	}
	rf := bson.A{}
	for _, f := range u.RemovedFields {
		rf = append(rf, f)
	}
	d = append(d, bson.E{Key: "removedFields", Value: rf})
	ta := bson.A{}
	for _, t := range u.TruncatedArrays {
		ta = append(ta, bson.D{{Key: "field", Value: t.Field}, {Key: "newSize", Value: t.NewSize}})
	}
	d = append(d, bson.E{Key: "truncatedArrays", Value: ta})
	b, err := bson.Marshal(d)
	if err != nil {
		return nil
	}
	return b
}

// readEvent is the snapshot read (op r) of doc in t, read at the
// operation time at.
func readEvent(t *change.Table, doc bson.Raw, at bson.Timestamp, name string) (*change.Event, bson.RawValue, error) {
	id, err := doc.LookupErr("_id")
	if err != nil {
		return nil, id, fmt.Errorf("mongodb: a document of %s.%s without _id", t.ID.DB, t.ID.Name)
	}
	ev := &change.Event{Table: t, Op: change.OpRead, After: change.Row{idValue(id), docValue(doc), {}}}
	ev.Source = change.Source{Block: sourceBlockDecl, Name: name, DB: t.ID.DB, Table: t.ID.Name, CommitMicros: int64(at.T) * 1000000}
	ev.Source.Ints[intOrd] = int64(at.I)
	return ev, id, nil
}
