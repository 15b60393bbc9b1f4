package mongodb

import (
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// splitInfo returns the splitEvent of a raw event, ok false when it has
// none.
func splitInfo(raw bson.Raw) (Split, bool, error) {
	v := raw.Lookup("splitEvent")
	if v.Type == 0 {
		return Split{}, false, nil
	}
	doc, ok := v.DocumentOK()
	if !ok {
		return Split{}, true, fmt.Errorf("change event: splitEvent is %s, want a document", v.Type)
	}
	f, ok1 := doc.Lookup("fragment").AsInt64OK()
	o, ok2 := doc.Lookup("of").AsInt64OK()
	if !ok1 || !ok2 || f < 1 || o < f || o > 1<<20 {
		return Split{}, true, errors.New("change event: splitEvent wants fragment and of, 1 <= fragment <= of")
	}
	return Split{Fragment: int32(f), Of: int32(o)}, true, nil
}

// joiner reassembles an event the server split into fragments
// ($changeStreamSplitLargeEvent, MongoDB 7.0+): each fragment holds some
// of the event's top-level fields, its own resume token and splitEvent.
// The whole event takes the last fragment's token, so resuming after it
// does not replay the fragments.
type joiner struct {
	parts []bson.Raw
}

// add takes one raw event; it returns the whole event once the last
// fragment arrives (or at once when raw is not a fragment), nil while
// fragments are pending.
func (j *joiner) add(raw bson.Raw) (bson.Raw, error) {
	sp, isSplit, err := splitInfo(raw)
	if err != nil {
		return nil, err
	}
	if !isSplit {
		if len(j.parts) > 0 {
			return nil, fmt.Errorf("change event: fragment %d of %d missing before a whole event", len(j.parts)+1, len(j.parts)+1)
		}
		return raw, nil
	}
	if int(sp.Fragment) != len(j.parts)+1 {
		j.parts = nil
		return nil, fmt.Errorf("change event: fragment %d of %d out of order", sp.Fragment, sp.Of)
	}
	j.parts = append(j.parts, raw)
	if sp.Fragment < sp.Of {
		return nil, nil
	}
	var whole bson.D
	seen := map[string]bool{}
	for _, part := range j.parts {
		elems, err := part.Elements()
		if err != nil {
			j.parts = nil
			return nil, fmt.Errorf("change event fragment: %w", err)
		}
		for _, e := range elems {
			k := e.Key()
			if k == "_id" || k == "splitEvent" || seen[k] {
				continue
			}
			seen[k] = true
			whole = append(whole, bson.E{Key: k, Value: e.Value()})
		}
	}
	whole = append(bson.D{{Key: "_id", Value: raw.Lookup("_id")}}, whole...)
	j.parts = nil
	out, err := bson.Marshal(whole)
	if err != nil {
		return nil, fmt.Errorf("change event: joining fragments: %w", err)
	}
	return out, nil
}
