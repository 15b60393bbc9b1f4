package capture

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// droppedWhileDown is a driver whose checkpoint snapshots public.t, which
// was dropped while the pipeline was down: resuming, it finds the table
// gone.
type droppedWhileDown struct {
	source.CapturedSet
}

var errStopped = errors.New("stopped")

func (f *droppedWhileDown) Connect(context.Context) error { return nil }
func (f *droppedWhileDown) Discover(context.Context) ([]string, error) {
	f.SetCaptured(json.RawMessage(`{}`), nil)
	return nil, nil
}
func (f *droppedWhileDown) Resume(_ context.Context, from source.Checkpoint, st source.Stream) ([]string, error) {
	f.TellCaptured(st)
	if string(from.Captured) != `{"public.t":1}` || string(from.Cursor) != `{"lsn":"0/1"}` {
		return nil, errors.New("checkpoint " + string(from.Cursor) + " " + string(from.Captured))
	}
	f.CapturedGone("public.t")
	return nil, nil
}
func (f *droppedWhileDown) Fresh(context.Context, bool) error { return errors.New("not a fresh start") }
func (f *droppedWhileDown) Start(ctx context.Context, st source.Stream) error {
	f.TellCaptured(st)
	return st.Heartbeat(ctx, change.Position(`{"lsn":"0/1"}`))
}
func (f *droppedWhileDown) Stream(context.Context, source.Stream) error { return errStopped }
func (f *droppedWhileDown) Acknowledge(change.Position)                 {}
func (f *droppedWhileDown) Retriable(error) bool                        { return false }
func (f *droppedWhileDown) Snapshots() (snapshot.Database, snapshot.Config) {
	return noSessions{}, snapshot.Config{}
}
func (f *droppedWhileDown) Close() error                                      { return nil }
func (f *droppedWhileDown) Check(context.Context) []source.Check              { return nil }
func (f *droppedWhileDown) Describe(context.Context) ([]*change.Table, error) { return nil, nil }
func (f *droppedWhileDown) Tables(context.Context) (source.Inventory, error) {
	return source.Inventory{}, nil
}
func (f *droppedWhileDown) LagBytes(context.Context, []byte) (int64, error)      { return 0, nil }
func (f *droppedWhileDown) Leftovers(context.Context) ([]source.Leftover, error) { return nil, nil }
func (f *droppedWhileDown) Drop(context.Context) ([]source.Leftover, error)      { return nil, nil }

type noSessions struct{}

func (noSessions) Session(context.Context) (snapshot.Session, error) { return nil, errStopped }

// A table dropped while the pipeline was down, in the middle of its
// snapshot: the driver finds it gone while resuming, and the snapshot
// ends there, not put back by the checkpoint's state afterwards (to be
// read on from its last key, under its name, by whatever table has it
// next). The case of a table created again under the name is
// TestPGTableRecreatedWhileStoppedMidSnapshot (integration/postgres).
func TestResumeDropsSnapshotOfTableGoneWhileDown(t *testing.T) {
	c := newCapture(&droppedWhileDown{}, source.Options{})
	from := change.Position(`{"lsn":"0/1","backfilled":true,"tables":{"public.t":1},` +
		`"snapshot":{"tables":[{"table":"public.t","key":["AAAB"],"rows":5}]}}`)
	var first *change.Event
	err := c.run(context.Background(), from, func(_ context.Context, ev *change.Event) error {
		if first == nil {
			first = ev
		}
		return nil
	})
	if !errors.Is(err, errStopped) || first == nil {
		t.Fatalf("run: %v, first event %v", err, first)
	}
	env, st, _, err := openEnvelope(first.Position)
	if err != nil {
		t.Fatal(err)
	}
	if string(env.Tables) != `{}` || len(st.Tables) != 0 {
		t.Fatalf("start position %s: want no snapshot of public.t under way", first.Position)
	}
}
