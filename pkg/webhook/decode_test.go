package webhook

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestDecodeRowSkipped(t *testing.T) {
	ev := RowSkipped{
		Type: EventType, EventID: "ev-1", Pipeline: "shop", Topic: "shop.public.orders", Table: "public.orders",
		PrimaryKey: map[string]any{"id": json.Number("12345678901234567890")}, SizeBytes: 2 << 20, LimitBytes: 1 << 20,
		Reason: "message larger than max_message_bytes", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	data, _ := json.Marshal(ev)
	got, err := DecodeRowSkipped(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.PrimaryKey["id"] != json.Number("12345678901234567890") || !got.Time.Equal(ev.Time) || got.SizeBytes != ev.SizeBytes {
		t.Fatalf("round trip: %+v", got)
	}
	for _, tc := range []struct{ doc, want string }{
		{``, "empty"},
		{`{"type":"row.skipped","event_id":"e","pipeline":"shop","nope":1}`, "unknown key"},
		{`{"type":"row.skipped","event_id":"e","pipeline":"shop"} {}`, "data after"},
		{`{"type":"other","event_id":"e","pipeline":"shop"}`, "type must be"},
		{`{"type":"row.skipped","pipeline":"shop"}`, "event_id"},
		{`{"type":"row.skipped","event_id":"e","pipeline":"Shop!"}`, "pipeline must match"},
		{`{"type":"row.skipped","event_id":"e","pipeline":"shop","size_bytes":"SECRETVALUE"}`, "size_bytes must be int"},
		{`{"type":"row.skipped","event_id":"e","pipeline":"shop","reason":SECRETVALUE}`, "syntax error"},
		{`{"type":"row.skipped","event_id":"e","pipeline":"shop","reason":"x`, "truncated"},
		// Bytes other parsers would read as another event: signed as
		// they are, they must have one reading.
		{`{"type":"row.skipped","event_id":"e","pipeline":"billing","pipeline":"shop"}`, `key "pipeline" appears twice`},
		{`{"type":"row.skipped","event_id":"e","pipeline":"shop","Pipeline":"shop"}`, "not one of the event's"},
		{`{"type":"row.skipped","event_id":"e","PIPELINE":"shop"}`, "not one of the event's"},
		{`{"type":"row.skipped","event_id":"e","pipeline":"shop","primary_key":{"id":1,"id":2}}`, "an object repeats a key"},
		{`{"type":"row.skipped","event_id":"e","pipeline":"shop","extra":{"a":[{"b":1,"b":2}]}}`, "an object repeats a key"},
		{"{\"type\":\"row.skipped\",\"event_id\":\"e\",\"pipeline\":\"shop\",\"reason\":\"\xff\"}", "not UTF-8"},
	} {
		_, err := DecodeRowSkipped([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want %q, got %v", tc.doc, tc.want, err)
		}
		if err != nil && strings.Contains(err.Error(), "SECRETVALUE") {
			t.Errorf("%s: error echoes the input: %v", tc.doc, err)
		}
	}
	// Keys spelt with escapes are the same keys; nested objects may
	// reuse a name of the event.
	if _, err := DecodeRowSkipped([]byte(`{"type":"row.skipped","event_id":"e","pipeline":"shop","extra":{"pipeline":"x","list":[{"a":1},{"a":2}]},"\u0070rimary_key":{"pipeline":1}}`)); err != nil {
		t.Errorf("a document with one reading refused: %v", err)
	}
	if _, err := DecodeRowSkipped([]byte(`{"type":"row.skipped","event_id":"e","pipeline":"shop","\u0070ipeline":"billing"}`)); err == nil {
		t.Error("a key repeated through an escape accepted")
	}
	if _, err := DecodeRowSkipped([]byte(`"` + strings.Repeat("a", MaxEventBytes) + `"`)); err == nil {
		t.Error("oversized body accepted")
	}
}

// FuzzDecodeRowSkipped: SQS bodies come from outside. Decoding must not
// panic, must never echo the input in an error, and what it accepts must
// re-encode and decode to the same event.
func FuzzDecodeRowSkipped(f *testing.F) {
	f.Add([]byte(`{"type":"row.skipped","event_id":"e1","pipeline":"shop","topic":"shop.public.t","table":"public.t","primary_key":{"id":1},"size_bytes":2000000,"limit_bytes":1048576,"reason":"too large","time":"2026-01-02T03:04:05Z"}`))
	f.Add([]byte(`{"type":"row.skipped","event_id":"e1","pipeline":"shop","extra":{"a":[1,2,{"b":null}]}}`))
	f.Add([]byte(`{"type":"row.skipped"`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := DecodeRowSkipped(data)
		if err != nil {
			if len(data) >= 8 && strings.Contains(err.Error(), string(data)) {
				t.Fatalf("error echoes the input: %v", err)
			}
			return
		}
		again, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("accepted event does not encode: %v", err)
		}
		if _, err := DecodeRowSkipped(again); err != nil {
			t.Fatalf("re-encoded event rejected: %v\n%s", err, again)
		}
	})
}
