package pipeline

import (
	"encoding/json"
	"testing"
)

// TestKeyPayload: a row.skipped event's primary_key is the key's columns
// with schemas (the default) and without (format.schemas: false).
func TestKeyPayload(t *testing.T) {
	with := keyPayload([]byte(`{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"}],"optional":false,"name":"p.public.t.Key"},"payload":{"id":9007199254740993}}`), true)
	without := keyPayload([]byte(`{"id":9007199254740993}`), false)
	for name, got := range map[string]map[string]any{"with schemas": with, "without schemas": without} {
		if got["id"] != json.Number("9007199254740993") || len(got) != 1 {
			t.Errorf("%s: primary key %v", name, got)
		}
	}
	if keyPayload(nil, false) != nil {
		t.Error("a keyless table has a primary key")
	}
}
