package mongodb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Snapshots reads collections in _id order, chunk by chunk, and writes the
// watermarks that place a chunk in the stream.
type Snapshots struct{ d *Driver }

// Snapshots returns the driver's snapshot reader.
func (d *Driver) Snapshots() *Snapshots { return &Snapshots{d: d} }

// Chunk is one read of a collection.
type Chunk struct {
	Docs []bson.Raw
	// Last is the _id of the last document, where the next chunk starts
	// (exclusive); its zero value when Docs is empty.
	Last bson.RawValue
	// Done is true when no document follows Last.
	Done bool
}

// idBrackets lists BSON types in MongoDB's sort order, grouped into the
// brackets whose members compare with each other ($gt on a number finds
// every later number, whatever its type, but nothing of another bracket).
// Arrays, undefined and regexes cannot be an _id and are left out.
var idBrackets = [][]bson.Type{
	{bson.TypeMinKey},
	{bson.TypeNull},
	{bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128},
	{bson.TypeSymbol, bson.TypeString},
	{bson.TypeEmbeddedDocument},
	{bson.TypeBinary},
	{bson.TypeObjectID},
	{bson.TypeBoolean},
	{bson.TypeDateTime},
	{bson.TypeTimestamp},
	{bson.TypeDBPointer},
	{bson.TypeJavaScript},
	{bson.TypeCodeWithScope},
	{bson.TypeMaxKey},
}

// deprecatedTypes are _id types a server may not know in $type
// (mongo-java-server knows neither symbol, dbPointer, JavaScript code nor
// code with scope).
var deprecatedTypes = []bson.Type{bson.TypeSymbol, bson.TypeDBPointer, bson.TypeJavaScript, bson.TypeCodeWithScope}

// laterTypes are the $type numbers of every bracket after t's (numbers,
// not aliases: mongo-java-server knows no alias for the deprecated types).
func laterTypes(t bson.Type) (bson.A, error) { return laterTypesOf(t, false) }

func laterTypesOf(t bson.Type, modernOnly bool) (bson.A, error) {
	i, ok := bracketOf(t)
	if !ok {
		return nil, fmt.Errorf("an _id of BSON type %s cannot be paged", t)
	}
	var out bson.A
	for _, later := range idBrackets[i+1:] {
		for _, lt := range later {
			if !modernOnly || !slices.Contains(deprecatedTypes, lt) {
				out = append(out, int32(lt))
			}
		}
	}
	return out, nil
}

// chunkFilters are the two reads of a chunk after the _id after, in
// MongoDB's order: same selects the later _ids of its own bracket ($gt),
// later (nil when no bracket follows) those of every later bracket
// ($type), read only when same runs out before the chunk is full (same
// is nil after MinKey, which has no bracket of its own to read on). Two
// plain queries, not one $or of both: a server that answers a range on
// _id without an index (mongo-java-server scans and sorts the whole
// collection for every chunk) matches a $or document by document at
// several times the cost of a $gt, and a real server answers each from
// the _id index. The zero after selects every document (same).
func chunkFilters(after bson.RawValue, modernOnly bool) (same, later bson.D, err error) {
	if after.Type == 0 {
		return bson.D{}, nil, nil
	}
	types, err := laterTypesOf(after.Type, modernOnly)
	if err != nil {
		return nil, nil, err
	}
	if len(types) > 0 {
		later = bson.D{{Key: "_id", Value: bson.D{{Key: "$type", Value: types}}}}
	}
	if after.Type == bson.TypeMinKey {
		// $gt MinKey is no bracket's range: it matches every other _id,
		// which the later read would then hand over again. Nothing of
		// MinKey's own bracket follows it: no same read (nil).
		return nil, later, nil
	}
	same = bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: after}}}}
	return same, later, nil
}

// ReadChunk reads up to limit documents of ns ("db.collection") whose _id
// follows after (the zero value: from the start), in _id order.
func (s *Snapshots) ReadChunk(ctx context.Context, ns string, after bson.RawValue, limit int) (Chunk, error) {
	var ch Chunk
	n, err := s.EachInChunk(ctx, ns, after, limit, func(doc bson.Raw) (bool, error) {
		ch.Docs = append(ch.Docs, slices.Clone(doc))
		return true, nil
	})
	if err != nil {
		return Chunk{}, err
	}
	if n > 0 {
		ch.Last = ch.Docs[n-1].Lookup("_id")
	}
	ch.Done = n < limit
	return ch, nil
}

// EachInChunk hands keep, one by one, up to limit documents of ns whose _id
// follows after, in _id order, until keep says to stop; it returns how
// many it handed. The document is the cursor's: keep copies what it
// holds on to. A stop ends the reads, so a chunk cut short by its bytes
// fetches little past them.
func (s *Snapshots) EachInChunk(ctx context.Context, ns string, after bson.RawValue, limit int, keep func(bson.Raw) (bool, error)) (int, error) {
	db, coll, ok := strings.Cut(ns, ".")
	if !ok {
		return 0, fmt.Errorf("mongodb: collection %q: want database.collection", ns)
	}
	if limit <= 0 {
		return 0, fmt.Errorf("mongodb: chunk size %d: want at least 1", limit)
	}
	same, later, err := chunkFilters(after, s.d.modernTypesOnly.Load())
	if err != nil {
		return 0, fmt.Errorf("mongodb: %s: %w", ns, err)
	}
	c := s.d.client.Database(db).Collection(coll)
	readErr := func(err error) error { return s.d.wrapErr("mongodb: reading "+ns+": ", err) }
	// keep's own error is returned as it is, not as a read's.
	var kept error
	keepOr := func(doc bson.Raw) (bool, error) {
		more, err := keep(doc)
		if err != nil {
			kept = err
			return false, nil
		}
		return more, nil
	}
	n, more := 0, true
	if same != nil {
		n, more, err = s.each(ctx, c, same, limit, keepOr)
	}
	if kept != nil {
		return 0, kept
	}
	if err != nil {
		return 0, readErr(err)
	}
	if more && n < limit && later != nil {
		// The later brackets are read only when the greatest _id is in one
		// of them: a server reads that at the end of the _id index. On a
		// server without a range index (mongo-java-server) both reads go
		// over the whole collection, but the $type one costs more: 0.6 s
		// for 100,000 documents at its first, 0.1 s after, against 0.05
		// to 0.1 s for the greatest _id.
		beyond, err := s.pastBracket(ctx, c, after.Type)
		if err != nil {
			return 0, readErr(err)
		}
		if !beyond {
			return n, nil
		}
		m, _, err := s.each(ctx, c, later, limit-n, keepOr)
		if err != nil && !s.d.modernTypesOnly.Load() && m == 0 && strings.Contains(err.Error(), "Unknown type") {
			// A server that does not know the deprecated types cannot hold
			// an _id of one either: page without them from now on.
			s.d.modernTypesOnly.Store(true)
			s.d.log.Warn("the server knows no symbol, dbPointer or code type in $type; paging without them")
			if _, later, err = chunkFilters(after, true); err == nil && later != nil {
				m, _, err = s.each(ctx, c, later, limit-n, keepOr)
			}
		}
		if kept != nil {
			return 0, kept
		}
		if err != nil {
			return 0, readErr(err)
		}
		n += m
	}
	return n, nil
}

// pastBracket reports whether c's greatest _id is in a bracket after
// t's, or of a type outside idBrackets; false when c is empty.
func (s *Snapshots) pastBracket(ctx context.Context, c *mongo.Collection, t bson.Type) (bool, error) {
	max, err := c.FindOne(ctx, bson.D{}, options.FindOne().
		SetSort(bson.D{{Key: "_id", Value: -1}}).SetProjection(bson.D{{Key: "_id", Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	id, err := max.LookupErr("_id")
	if err != nil {
		return false, fmt.Errorf("the greatest _id: %w", err)
	}
	b, ok := bracketOf(id.Type)
	if !ok {
		return true, nil
	}
	at, ok := bracketOf(t)
	return !ok || b > at, nil
}

// bracketOf is the index in idBrackets of t's bracket.
func bracketOf(t bson.Type) (int, bool) {
	for i, br := range idBrackets {
		if slices.Contains(br, t) {
			return i, true
		}
	}
	return 0, false
}

// each hands keep up to limit documents of c that match filter, in _id
// order; more is false when keep stopped it.
func (s *Snapshots) each(ctx context.Context, c *mongo.Collection, filter bson.D, limit int, keep func(bson.Raw) (bool, error)) (n int, more bool, err error) {
	cur, err := c.Find(ctx, filter,
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(limit)).SetBatchSize(int32(min(limit, 10000))))
	if err != nil {
		return 0, false, err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	for cur.Next(ctx) {
		n++
		more, err := keep(cur.Current)
		if err != nil || !more {
			return n, false, err
		}
	}
	return n, true, cur.Err()
}

// WriteWatermark inserts {_id: id} into the signal collection; the stream
// reads it back as a Watermark at its place among the changes (cluster
// scope only: a collection-scoped stream does not see the signal
// collection).
func (s *Snapshots) WriteWatermark(ctx context.Context, id string) error {
	ns := s.d.cfg.SignalCollection
	if ns == "" {
		return errors.New("mongodb: no source.signal_collection for watermarks")
	}
	db, coll, _ := strings.Cut(ns, ".")
	_, err := s.d.client.Database(db).Collection(coll).InsertOne(ctx,
		bson.D{{Key: "_id", Value: id}, {Key: "at", Value: bson.NewDateTimeFromTime(time.Now())}})
	if err != nil {
		var we mongo.WriteException
		if errors.As(err, &we) && we.HasErrorCode(11000) {
			return fmt.Errorf("mongodb: watermark %q already in %s", id, ns)
		}
		return s.d.wrapErr("mongodb: writing watermark to "+ns+": ", err)
	}
	return nil
}

// EncodeID writes an _id as canonical Extended JSON, the form a snapshot
// position is stored in.
func EncodeID(id bson.RawValue) (string, error) {
	b, err := bson.MarshalExtJSON(bson.D{{Key: "_id", Value: id}}, true, false)
	if err != nil {
		return "", fmt.Errorf("mongodb: _id: %w", err)
	}
	return string(b), nil
}

// DecodeID reads what EncodeID writes.
func DecodeID(s string) (bson.RawValue, error) {
	if len(s) > 16<<20 {
		return bson.RawValue{}, errors.New("mongodb: stored _id over 16 MB")
	}
	if !utf8.ValidString(s) {
		return bson.RawValue{}, errors.New("mongodb: stored _id: not UTF-8")
	}
	var doc bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), true, &doc); err != nil {
		return bson.RawValue{}, fmt.Errorf("mongodb: stored _id: %w", err)
	}
	if err := doc.Validate(); err != nil {
		return bson.RawValue{}, fmt.Errorf("mongodb: stored _id: %w", err)
	}
	elems, err := doc.Elements()
	if err != nil || len(elems) != 1 || elems[0].Key() != "_id" {
		return bson.RawValue{}, errors.New(`mongodb: stored _id: want {"_id": value}`)
	}
	v := elems[0].Value()
	if _, err := laterTypes(v.Type); err != nil {
		return bson.RawValue{}, fmt.Errorf("mongodb: stored _id: %w", err)
	}
	return v, nil
}
