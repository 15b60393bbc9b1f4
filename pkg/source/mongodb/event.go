package mongodb

import (
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Op is a change event's operationType as the server names it.
type Op string

// The operation types the reader turns into row changes or acts on.
const (
	OpInsert       Op = "insert"
	OpUpdate       Op = "update"
	OpReplace      Op = "replace"
	OpDelete       Op = "delete"
	OpDrop         Op = "drop"
	OpRename       Op = "rename"
	OpDropDatabase Op = "dropDatabase"
	OpInvalidate   Op = "invalidate"
)

// Event is one change-stream event, decoded into what the message and the
// capture loop need, independent of the driver's types. Documents stay in
// BSON so that every type (Decimal128, binary subtypes, dates before 1970)
// reaches the message unchanged.
type Event struct {
	Op         Op
	DB         string
	Collection string
	// Key is documentKey._id; DocumentKey the whole documentKey (on a
	// sharded collection it also holds the shard key).
	Key         bson.RawValue
	DocumentKey bson.Raw
	// After is fullDocument (on updates, the post-image the server looked
	// up); Before is fullDocumentBeforeChange (pre-images enabled). Nil when
	// absent or null.
	After  bson.Raw
	Before bson.Raw
	// Update is updateDescription (update events only).
	Update *UpdateDescription
	// ClusterTime orders events; WallTimeMS is the server's wall clock in
	// milliseconds (MongoDB 6.0+), 0 when absent.
	ClusterTime bson.Timestamp
	WallTimeMS  int64
	// LSID and TxnNumber name the transaction of a multi-document
	// transaction's events; nil outside one.
	LSID      bson.Raw
	TxnNumber *int64
	// Token is the event's resume token (its _id).
	Token bson.Raw
	// ToDB and ToCollection name where a rename event moved the
	// collection (its "to").
	ToDB, ToCollection string
	// nsMissing: the event named no namespace (DB and Collection are the
	// watched collection's).
	nsMissing bool
	// Split is set on a fragment of an event the server split
	// ($changeStreamSplitLargeEvent); the reader joins the fragments
	// before decoding, so a decoded event never has it.
	Split *Split
}

// UpdateDescription is an update event's description of the change.
type UpdateDescription struct {
	UpdatedFields   bson.Raw
	RemovedFields   []string
	TruncatedArrays []TruncatedArray
}

// TruncatedArray is an array the update shortened to NewSize elements.
type TruncatedArray struct {
	Field   string
	NewSize int32
}

// Split names one fragment of a split event.
type Split struct{ Fragment, Of int32 }

// Namespace is "db.collection".
func (e Event) Namespace() string { return e.DB + "." + e.Collection }

// IsData reports whether the event changes a document.
func (e Event) IsData() bool {
	switch e.Op {
	case OpInsert, OpUpdate, OpReplace, OpDelete:
		return true
	}
	return false
}

// decodeEvent decodes one change-stream event. db and coll name the
// collection watched when the event carries no ns (mongo-java-server
// leaves it out of collection streams); a data event without a
// documentKey._id, or with fields of the wrong BSON type, is an error
// naming the field.
func decodeEvent(raw bson.Raw, db, coll string) (Event, error) {
	if err := raw.Validate(); err != nil {
		return Event{}, fmt.Errorf("change event: %w", err)
	}
	var ev Event
	op, ok := raw.Lookup("operationType").StringValueOK()
	if !ok {
		return Event{}, errors.New("change event: operationType missing or not a string")
	}
	ev.Op = Op(op)
	if tok, ok := raw.Lookup("_id").DocumentOK(); ok {
		ev.Token = tok
	} else {
		return Event{}, errors.New("change event: _id (the resume token) missing or not a document")
	}
	ev.DB, ev.Collection = db, coll
	ev.nsMissing = raw.Lookup("ns").Type == 0
	if ns := raw.Lookup("ns"); ns.Type != 0 {
		nsDoc, ok := ns.DocumentOK()
		if !ok {
			return Event{}, fmt.Errorf("change event: ns is %s, want a document", ns.Type)
		}
		if d, ok := nsDoc.Lookup("db").StringValueOK(); ok {
			ev.DB = d
		}
		if c, ok := nsDoc.Lookup("coll").StringValueOK(); ok {
			ev.Collection = c
		}
	}
	if to := raw.Lookup("to"); to.Type != 0 && to.Type != bson.TypeNull {
		toDoc, ok := to.DocumentOK()
		if !ok {
			return Event{}, fmt.Errorf("change event: to is %s, want a document", to.Type)
		}
		ev.ToDB, _ = toDoc.Lookup("db").StringValueOK()
		ev.ToCollection, _ = toDoc.Lookup("coll").StringValueOK()
	}
	if ct := raw.Lookup("clusterTime"); ct.Type != 0 {
		t, i, ok := ct.TimestampOK()
		if !ok {
			return Event{}, fmt.Errorf("change event: clusterTime is %s, want a timestamp", ct.Type)
		}
		ev.ClusterTime = bson.Timestamp{T: t, I: i}
	}
	if wt := raw.Lookup("wallTime"); wt.Type != 0 {
		ms, ok := wt.DateTimeOK()
		if !ok {
			return Event{}, fmt.Errorf("change event: wallTime is %s, want a date", wt.Type)
		}
		ev.WallTimeMS = ms
	}
	var err error
	if ev.After, err = optionalDocument(raw, "fullDocument"); err != nil {
		return Event{}, err
	}
	if ev.Before, err = optionalDocument(raw, "fullDocumentBeforeChange"); err != nil {
		return Event{}, err
	}
	if ev.LSID, err = optionalDocument(raw, "lsid"); err != nil {
		return Event{}, err
	}
	if tn := raw.Lookup("txnNumber"); tn.Type != 0 {
		n, ok := tn.AsInt64OK()
		if !ok {
			return Event{}, fmt.Errorf("change event: txnNumber is %s, want a number", tn.Type)
		}
		ev.TxnNumber = &n
	}
	if ud := raw.Lookup("updateDescription"); ud.Type != 0 && ud.Type != bson.TypeNull {
		doc, ok := ud.DocumentOK()
		if !ok {
			return Event{}, fmt.Errorf("change event: updateDescription is %s, want a document", ud.Type)
		}
		if ev.Update, err = decodeUpdateDescription(doc); err != nil {
			return Event{}, err
		}
	}
	if sp := raw.Lookup("splitEvent"); sp.Type != 0 {
		doc, ok := sp.DocumentOK()
		if !ok {
			return Event{}, fmt.Errorf("change event: splitEvent is %s, want a document", sp.Type)
		}
		f, ok1 := doc.Lookup("fragment").AsInt64OK()
		o, ok2 := doc.Lookup("of").AsInt64OK()
		if !ok1 || !ok2 || f < 1 || o < f || o > 1<<20 {
			return Event{}, errors.New("change event: splitEvent wants fragment and of, 1 <= fragment <= of")
		}
		ev.Split = &Split{Fragment: int32(f), Of: int32(o)}
	}
	if !ev.IsData() {
		return ev, nil
	}
	if ev.DB == "" || ev.Collection == "" {
		return Event{}, fmt.Errorf("change event: %s without ns.db and ns.coll", ev.Op)
	}
	if dk, err := optionalDocument(raw, "documentKey"); err != nil {
		return Event{}, err
	} else if dk != nil {
		ev.DocumentKey = dk
		if id, err := dk.LookupErr("_id"); err == nil {
			ev.Key = id
		}
	}
	if ev.Key.Type == 0 && ev.After != nil {
		// mongo-java-server puts the update's operators in documentKey;
		// the looked-up document still names the _id.
		if id, err := ev.After.LookupErr("_id"); err == nil {
			ev.Key = id
		}
	}
	if ev.Key.Type == 0 && ev.Op == OpUpdate && ev.DocumentKey != nil && ev.After != nil {
		// mongo-java-server again, when the document was gone by the
		// lookup: fullDocument is the $set delta, without _id, so the key
		// is unknown. Handed on without a key (KeyLost): the reader skips
		// it, as the delete that removed the document follows.
		return ev, nil
	}
	if ev.Key.Type == 0 {
		return Event{}, fmt.Errorf("change event: %s on %s without documentKey._id", ev.Op, ev.Namespace())
	}
	return ev, nil
}

// KeyLost reports an update whose document's _id the event does not
// carry (mongo-java-server's, for a document deleted before the lookup).
func (e Event) KeyLost() bool { return e.Op == OpUpdate && e.Key.Type == 0 }

// optionalDocument returns raw[name] when it is a document, nil when it is
// absent or null, and an error naming the field otherwise.
func optionalDocument(raw bson.Raw, name string) (bson.Raw, error) {
	v := raw.Lookup(name)
	switch v.Type {
	case 0, bson.TypeNull:
		return nil, nil
	case bson.TypeEmbeddedDocument:
		return v.Document(), nil
	}
	return nil, fmt.Errorf("change event: %s is %s, want a document", name, v.Type)
}

func decodeUpdateDescription(doc bson.Raw) (*UpdateDescription, error) {
	var u UpdateDescription
	var err error
	if u.UpdatedFields, err = optionalDocument(doc, "updatedFields"); err != nil {
		return nil, fmt.Errorf("updateDescription.%w", err)
	}
	if rf := doc.Lookup("removedFields"); rf.Type != 0 && rf.Type != bson.TypeNull {
		arr, ok := rf.ArrayOK()
		if !ok {
			return nil, fmt.Errorf("change event: updateDescription.removedFields is %s, want an array", rf.Type)
		}
		vals, err := arr.Values()
		if err != nil {
			return nil, fmt.Errorf("change event: updateDescription.removedFields: %w", err)
		}
		for _, v := range vals {
			s, ok := v.StringValueOK()
			if !ok {
				return nil, errors.New("change event: updateDescription.removedFields holds a non-string")
			}
			u.RemovedFields = append(u.RemovedFields, s)
		}
	}
	if ta := doc.Lookup("truncatedArrays"); ta.Type != 0 && ta.Type != bson.TypeNull {
		arr, ok := ta.ArrayOK()
		if !ok {
			return nil, fmt.Errorf("change event: updateDescription.truncatedArrays is %s, want an array", ta.Type)
		}
		vals, err := arr.Values()
		if err != nil {
			return nil, fmt.Errorf("change event: updateDescription.truncatedArrays: %w", err)
		}
		for _, v := range vals {
			d, ok := v.DocumentOK()
			if !ok {
				return nil, errors.New("change event: updateDescription.truncatedArrays holds a non-document")
			}
			f, ok1 := d.Lookup("field").StringValueOK()
			n, ok2 := d.Lookup("newSize").AsInt64OK()
			if !ok1 || !ok2 || n < 0 || n > 1<<31-1 {
				return nil, errors.New("change event: updateDescription.truncatedArrays wants {field: string, newSize: int}")
			}
			u.TruncatedArrays = append(u.TruncatedArrays, TruncatedArray{Field: f, NewSize: int32(n)})
		}
	}
	return &u, nil
}
