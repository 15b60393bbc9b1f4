package mongodb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Cursor is where the stream resumes: the resume token of the last event
// handled (or the postBatchResumeToken of an idle stream), else the
// operation time everything up to and including which is already read.
// It is the driver's part of the checkpoint, stored as its own JSON.
type Cursor struct {
	// Token is the server's resume token, opaque ({"_data": "<hex>"} on
	// MongoDB 4.2+), kept as canonical Extended JSON.
	Token bson.Raw
	// OperationTime is the cluster time the stream starts after when
	// there is no token yet (a fresh start, before the first event).
	OperationTime bson.Timestamp
	// StartAfter says Token is an invalidate event's: a stream is opened
	// after it with startAfter, as resumeAfter refuses such a token.
	StartAfter bool
}

// IsZero reports a cursor with neither token nor time.
func (c Cursor) IsZero() bool { return c.Token == nil && c.OperationTime.IsZero() }

type cursorJSON struct {
	Token         json.RawMessage `json:"resume_token,omitempty"`
	OperationTime *opTimeJSON     `json:"operation_time,omitempty"`
	StartAfter    bool            `json:"start_after,omitempty"`
}

type opTimeJSON struct {
	T uint32 `json:"t"`
	I uint32 `json:"i"`
}

// MarshalJSON writes {"resume_token": {…}, "operation_time": {"t","i"},
// "start_after": true}, each present when set.
func (c Cursor) MarshalJSON() ([]byte, error) {
	var out cursorJSON
	if c.Token != nil {
		tok, err := bson.MarshalExtJSON(c.Token, true, false)
		if err != nil {
			return nil, fmt.Errorf("mongodb cursor: resume token: %w", err)
		}
		out.Token = tok
	}
	if !c.OperationTime.IsZero() {
		out.OperationTime = &opTimeJSON{T: c.OperationTime.T, I: c.OperationTime.I}
	}
	out.StartAfter = c.StartAfter && c.Token != nil
	return json.Marshal(out)
}

// maxTokenBytes bounds a stored resume token: real ones are a few hundred
// bytes; a larger one is a damaged checkpoint.
const maxTokenBytes = 64 << 10

// UnmarshalJSON reads what MarshalJSON writes; anything else (unknown
// fields, a token that is not a document) is an error naming the field.
func (c *Cursor) UnmarshalJSON(data []byte) error {
	if !utf8.Valid(data) {
		return errors.New("mongodb cursor: not UTF-8")
	}
	var in cursorJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return fmt.Errorf("mongodb cursor: %w", err)
	}
	if dec.More() {
		return errors.New("mongodb cursor: data after the object")
	}
	*c = Cursor{}
	if len(in.Token) > 0 && !bytes.Equal(in.Token, []byte("null")) {
		if len(in.Token) > maxTokenBytes {
			return fmt.Errorf("mongodb cursor: resume_token of %d bytes, over %d", len(in.Token), maxTokenBytes)
		}
		var tok bson.Raw
		if err := bson.UnmarshalExtJSON(in.Token, true, &tok); err != nil {
			return fmt.Errorf("mongodb cursor: resume_token: %w", err)
		}
		if err := tok.Validate(); err != nil {
			return fmt.Errorf("mongodb cursor: resume_token: %w", err)
		}
		c.Token = tok
		c.StartAfter = in.StartAfter
	}
	if in.OperationTime != nil {
		c.OperationTime = bson.Timestamp{T: in.OperationTime.T, I: in.OperationTime.I}
	}
	return nil
}

// DecodeCursor parses a stored cursor.
func DecodeCursor(data []byte) (Cursor, error) {
	var c Cursor
	err := c.UnmarshalJSON(data)
	return c, err
}
