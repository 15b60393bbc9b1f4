package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
)

// MaxEventBytes bounds an encoded row.skipped event: SQS's message limit.
const MaxEventBytes = 256 << 10

var pipelineName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// DecodeRowSkipped reads a row.skipped event from bytes that came from
// outside (an SQS message body). Unknown keys and trailing data are
// errors; so is an event without its type, ID or a valid pipeline name.
// Errors describe what is wrong, never the bytes.
func DecodeRowSkipped(data []byte) (RowSkipped, error) {
	var ev RowSkipped
	if len(data) > MaxEventBytes {
		return ev, fmt.Errorf("row.skipped event: larger than %d bytes", MaxEventBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber() // primary keys keep their exact digits
	if err := dec.Decode(&ev); err != nil {
		return RowSkipped{}, fmt.Errorf("row.skipped event: not a valid event document: %s", describeJSONError(err))
	}
	if dec.More() {
		return RowSkipped{}, errors.New("row.skipped event: data after the JSON document")
	}
	switch {
	case ev.Type != EventType:
		return RowSkipped{}, fmt.Errorf("row.skipped event: type must be %q", EventType)
	case ev.EventID == "" || len(ev.EventID) > 256:
		return RowSkipped{}, errors.New("row.skipped event: event_id must be 1 to 256 characters")
	case !pipelineName.MatchString(ev.Pipeline):
		return RowSkipped{}, errors.New("row.skipped event: pipeline must match [a-z0-9_-]{1,64}")
	}
	return ev, nil
}

// describeJSONError keeps the kind and position of a JSON error but not
// the offending text.
func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %s must be %s", typ.Field, typ.Type)
	case errors.Is(err, io.EOF):
		return "empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated"
	}
	return "malformed JSON or an unknown key"
}
