package status

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/metrics"
	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/webhook"
)

func TestBuildStates(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cp := checkpoint.Checkpoint{Position: change.Position(`{"slot":"s","lsn":"0/1","backfilled":false,"backfill":{"done":["public.a"],"table":"public.b","rows":42}}`), UpdatedAt: now.Add(-3 * time.Second)}
	fresh := &Live{UpdatedAt: now.Add(-time.Second), Owner: "7@h"}
	for _, tc := range []struct {
		name  string
		found bool
		live  *Live
		want  string
	}{
		{"never ran", false, nil, StateNew},
		{"checkpoint, no snapshot", true, nil, StateStopped},
		{"fresh snapshot", true, fresh, StateRunning},
		{"stale snapshot", true, &Live{UpdatedAt: now.Add(-time.Minute)}, StateStopped},
		{"stopped snapshot", true, &Live{UpdatedAt: now, Stopped: true}, StateStopped},
	} {
		r := Build("shop", cp, tc.found, tc.live, now, nil)
		if r.State != tc.want {
			t.Errorf("%s: state %q, want %q", tc.name, r.State, tc.want)
		}
	}
	r := Build("shop", cp, true, fresh, now, nil)
	if r.Owner != "7@h" || r.Backfill == nil || r.Backfill.Table != "public.b" || r.Backfill.Rows != 42 || r.Backfill.TablesDone[0] != "public.a" {
		t.Errorf("report %+v backfill %+v", r, r.Backfill)
	}
	if r.Checkpoint.AgeSeconds != 3 {
		t.Errorf("checkpoint age %v, want 3", r.Checkpoint.AgeSeconds)
	}
}

type nopNotifier struct{}

func (nopNotifier) Notify(context.Context, webhook.RowSkipped) error { return nil }

func TestRecorderAndPrint(t *testing.T) {
	m := metrics.NewPipeline(metrics.NewRegistry(), "shop")
	rows := m.Rows("public.orders")
	rows.Acked(change.OpRead, 0, true, time.Now())
	rows.Sent(change.OpCreate, time.Now().UnixMicro(), time.Now())
	rows.Acked(change.OpCreate, time.Now().UnixMicro(), true, time.Now())
	rec := NewRecorder(m, "v9")
	n := rec.Notifier(nopNotifier{})
	for i := 0; i < recentSkipped+5; i++ {
		n.Notify(context.Background(), webhook.RowSkipped{Table: "public.orders", SizeBytes: 2 << 20, Reason: "too large", Time: time.Now()})
	}
	rec.Failed(errors.New("broker gone"))
	live := rec.Snapshot()
	if live.SkippedRows != recentSkipped+5 || len(live.Skipped) != recentSkipped || live.LastError.Message != "broker gone" {
		t.Errorf("snapshot %+v", live)
	}
	if live.Rows["r"] != 1 || live.Rows["c"] != 1 || len(live.Tables) != 1 {
		t.Errorf("rows %v tables %v", live.Rows, live.Tables)
	}

	var out bytes.Buffer
	Print(&out, Build("shop", checkpoint.Checkpoint{}, false, &live, time.Now(), nil))
	for _, want := range []string{"state", "running", "no checkpoint yet", "skipped rows      25", "broker gone", "public.orders", "v9"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestFileStoreSnapshotRoundTrip: the snapshots Publish writes to the file
// store are what `tributary status` reads back, the last one marked
// stopped.
func TestFileStoreSnapshotRoundTrip(t *testing.T) {
	dir := t.TempDir()
	store, err := checkpoint.OpenFile(dir, "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	kind, err := checkpoint.Lookup("file")
	if err != nil {
		t.Fatal(err)
	}
	read := func() (*Live, error) {
		_, _, snapshot, err := kind.Read(context.Background(), checkpoint.Where{Pipeline: "shop", Path: dir})
		if err != nil {
			return nil, err
		}
		return Decode(snapshot)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rec := NewRecorder(nil, "v1")
	done := make(chan struct{})
	go func() { Publish(ctx, rec, store.SaveStatus, time.Hour, nil); close(done) }()
	var l *Live
	for i := 0; i < 100 && l == nil; i++ {
		time.Sleep(10 * time.Millisecond)
		l, _ = read()
	}
	if l == nil || l.Version != "v1" || l.Stopped {
		t.Fatalf("first snapshot %+v", l)
	}
	cancel()
	<-done
	if l, err := read(); err != nil || !l.Stopped {
		t.Errorf("after stop: %+v %v, want stopped", l, err)
	}
}

// FuzzDecode: a snapshot comes from a file or a DynamoDB item someone else
// may have written; decoding it and reading a position never panics.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"version":"v","rows":{"c":1},"tables":[{"table":"a.b","rows":{"r":2}}]}`), []byte(`{"backfilled":false,"backfill":{"table":"a.b","rows":3}}`))
	f.Add([]byte(`null`), []byte(`{"backfilled":true,"table":"x"}`))
	f.Fuzz(func(t *testing.T, snapshot, position []byte) {
		l, err := Decode(snapshot)
		if err == nil && l != nil {
			var out bytes.Buffer
			Print(&out, Build("p", checkpoint.Checkpoint{Position: position}, true, l, time.Now(), nil))
		}
		backfillOf(position)
	})
}

// A pipeline riding out a source outage says so: reconnecting, since
// when, attempts, the window and the last error with its class.
func TestPrintReconnecting(t *testing.T) {
	rec := NewRecorder(metrics.NewPipeline(metrics.NewRegistry(), "shop"), "v9")
	since := time.Now().Add(-42 * time.Second)
	rec.WatchSource(func() source.ConnState {
		return source.ConnState{State: source.ConnReconnecting, Since: since, Attempts: 7, OutageWindow: "5m0s",
			LastError: "dial tcp 10.0.0.1:5432: i/o timeout", LastErrorClass: "retriable", LastErrorAt: time.Now()}
	})
	live := rec.Snapshot()
	var out bytes.Buffer
	Print(&out, Build("shop", checkpoint.Checkpoint{}, false, &live, time.Now(), nil))
	for _, want := range []string{"RECONNECTING since", "(42s)", "7 failed attempts", "outage window 5m0s", "i/o timeout (retriable)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
