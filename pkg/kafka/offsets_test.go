package kafka

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestDecodeOffsets(t *testing.T) {
	good, _ := json.Marshal(offsetsRecord{Version: 1, Pipeline: "shop", Position: json.RawMessage(`{"lsn":"0/16B3748"}`), CommittedAt: time.Now()})
	pos, _, err := decodeOffsets(good, "shop")
	if err != nil || string(pos) != `{"lsn":"0/16B3748"}` {
		t.Fatalf("decodeOffsets = %s, %v", pos, err)
	}
	for name, c := range map[string]struct{ value, want string }{
		"not json":      {`nope`, "not JSON"},
		"newer version": {`{"version":2,"pipeline":"shop","position":{}}`, "version 2"},
		"no version":    {`{"pipeline":"shop","position":{}}`, "version 0"},
		"other name":    {`{"version":1,"pipeline":"other","position":{}}`, `names pipeline "other"`},
		"no position":   {`{"version":1,"pipeline":"shop"}`, "no position"},
		"null position": {`{"version":1,"pipeline":"shop","position":null}`, "no position"},
	} {
		if _, _, err := decodeOffsets([]byte(c.value), "shop"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one saying %q", name, err, c.want)
		}
	}
}

// FuzzDecodeOffsets: offsets-topic values come from the broker; anything
// that can write the topic can put any bytes there.
func FuzzDecodeOffsets(f *testing.F) {
	f.Add([]byte(`{"version":1,"pipeline":"p","position":{"lsn":"0/1"},"committed_at":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"version":1,"pipeline":"p","position":"x"}`))
	f.Add([]byte(`null`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		pos, _, err := decodeOffsets(b, "p")
		if err == nil && !json.Valid(pos) {
			t.Fatalf("accepted a position that is not JSON: %q", pos)
		}
	})
}
