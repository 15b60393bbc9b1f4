package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxEventBytes bounds an encoded row.skipped event: SQS's message limit.
const MaxEventBytes = 256 << 10

var pipelineName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// DecodeRowSkipped reads a row.skipped event from bytes that came from
// outside (an SQS message body). Unknown keys and trailing data are
// errors; so is an event without its type, ID or a valid pipeline name.
// A document that other JSON parsers could read differently is an error
// too (oneReading): the bytes are signed as they are, so the receiver must
// read the event this function checked. Errors describe what is wrong,
// never the bytes.
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
	if err := oneReading(data); err != nil {
		return RowSkipped{}, fmt.Errorf("row.skipped event: %w", err)
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

// eventKeys are RowSkipped's JSON names.
var eventKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeOf(RowSkipped{})
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys[name] = true
	}
	return keys
}()

// oneReading refuses what parsers disagree on: an object that repeats a
// key (encoding/json keeps the last, others the first or refuse it), a
// top-level key that is an event field's name in other letter case
// (encoding/json matches names without regard to case), and text that is
// not UTF-8 (encoding/json replaces bad bytes). data is valid JSON.
func oneReading(data []byte) error {
	if !utf8.Valid(data) {
		return errors.New("not UTF-8")
	}
	type frame struct {
		object, wantKey bool
		keys            map[string]bool
	}
	var stack []frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errors.New("not a valid event document")
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				valueDone()
				continue
			}
			key, _ := tok.(string)
			top := n == 1
			switch {
			case stack[n-1].keys[key] && top && eventKeys[key]:
				return fmt.Errorf("key %q appears twice", key)
			case stack[n-1].keys[key]:
				return errors.New("an object repeats a key")
			case top && !eventKeys[key]:
				return errors.New("a key is not one of the event's (names are lower case)")
			}
			stack[n-1].keys[key] = true
			stack[n-1].wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, wantKey: true, keys: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}
