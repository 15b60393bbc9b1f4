package webhook

import (
	"encoding/json"
	"strings"
	"testing"
)

// A row.skipped event ID stays within what the row-skipped function
// (256 characters) and an SQS FIFO deduplication ID (at most 128
// characters, ASCII 33-126, no spaces) accept, however long the source
// change's ID (which embeds the primary key) is, and it is the same every
// time the same change is skipped.
func TestSkippedEventIDBoundedAndStable(t *testing.T) {
	long := `pg:r:0/16B3748:public.docs:"` + strings.Repeat("a key with spaces, ünïcode and \"quotes\" ", 200) + `"`
	for _, src := range []string{"pg:0/16B3748:3", "my:mysql-bin.000003:1234:0", long} {
		id := SkippedEventID("shop", src)
		if len(id) == 0 || len(id) > 128 {
			t.Errorf("id %q of %d characters, want 1 to 128", id, len(id))
		}
		for _, c := range []byte(id) {
			if c < 33 || c > 126 {
				t.Errorf("id %q has byte %q, which a FIFO deduplication ID may not hold", id, c)
			}
		}
		if again := SkippedEventID("shop", src); again != id {
			t.Errorf("id not stable: %q then %q", id, again)
		}
		if SkippedEventID("other", src) == id {
			t.Errorf("pipelines shop and other share id %q for one source change", id)
		}
		ev := event()
		ev.Type, ev.EventID = EventType, id
		ev.Extra = map[string]any{"source_event_id": src}
		body, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeRowSkipped(body); err != nil {
			t.Errorf("the row-skipped function's decoder refuses the event: %v", err)
		}
	}
	if SkippedEventID("shop", "pg:0/1:1") == SkippedEventID("shop", "pg:0/1:2") {
		t.Error("two source changes share an id")
	}
}
