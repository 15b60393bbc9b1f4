package pipeline

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
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

// TestResumeFrom: exactly once resumes from the newer of the offsets
// topic and the checkpoint store. The store lags the offsets topic while
// it is written exactly once; written at least once after the last
// commit (delivery switched to at_least_once and back), it leads.
func TestResumeFrom(t *testing.T) {
	committed := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	offsets, store := change.Position(`{"n":1}`), change.Position(`{"n":2}`)
	for name, c := range map[string]struct {
		cp        checkpoint.Checkpoint
		fromStore bool
	}{
		"store written exactly once after the commit":   {checkpoint.Checkpoint{Position: store, UpdatedAt: committed.Add(time.Second), Delivery: checkpoint.DeliveryExactlyOnce}, false},
		"store written at least once after the commit":  {checkpoint.Checkpoint{Position: store, UpdatedAt: committed.Add(time.Hour), Delivery: checkpoint.DeliveryAtLeastOnce}, true},
		"store written at least once before the commit": {checkpoint.Checkpoint{Position: store, UpdatedAt: committed.Add(-time.Second), Delivery: checkpoint.DeliveryAtLeastOnce}, false},
		"store of a version without the mode":           {checkpoint.Checkpoint{Position: store, UpdatedAt: committed.Add(time.Hour)}, false},
		"no checkpoint":                                 {checkpoint.Checkpoint{}, false},
	} {
		pos, fromStore := resumeFrom(offsets, committed, c.cp)
		want := offsets
		if c.fromStore {
			want = store
		}
		if fromStore != c.fromStore || string(pos) != string(want) {
			t.Errorf("%s: resumes from %s (store %v), want %s", name, pos, fromStore, want)
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

// TestCommitTickBoundsTheWait: the README promises a read_committed
// consumer sees a record at most max_interval plus one commit after it was
// written; on a quiet source the timer's granularity adds to that, and
// must stay within a tenth of the interval (it was half: 75 ms of 50).
func TestCommitTickBoundsTheWait(t *testing.T) {
	for _, iv := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond, time.Second, 10 * time.Second} {
		tick := commitTick(iv)
		if tick <= 0 {
			t.Fatalf("interval %s: tick %s", iv, tick)
		}
		if iv >= 10*time.Millisecond && iv+tick > iv*11/10 {
			t.Errorf("interval %s: tick %s lets a quiet source's last records wait %s, more than 1.1 × the interval", iv, tick, iv+tick)
		}
	}
}
