package mysql

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// funcStream hands what the driver streams to a function, as the capture
// loop does with no snapshot running and no key change to split: the
// cursors as position events, unsealed.
type funcStream func(context.Context, *change.Event) error

func (f funcStream) Change(ctx context.Context, ev *change.Event) error { return f(ctx, ev) }
func (f funcStream) Commit(ctx context.Context, cursor change.Position, micros int64) error {
	ev := &change.Event{Position: cursor}
	ev.Source.CommitMicros = micros
	return f(ctx, ev)
}
func (f funcStream) Heartbeat(ctx context.Context, cursor change.Position) error {
	return f.Commit(ctx, cursor, 0)
}
func (funcStream) Watermark(context.Context, string) error { return nil }
func (funcStream) Captured(json.RawMessage, []string)      {}
func (funcStream) Added([]string)                          {}
func (funcStream) Gone(string)                             {}
func (funcStream) Again(string)                            {}

// cursorOf is the driver's part of a checkpoint's position, as the capture
// loop hands it over: without the loop's fields.
func cursorOf(t *testing.T, doc string) string {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(doc), &fields); err != nil {
		t.Fatal(err)
	}
	delete(fields, "backfilled")
	delete(fields, "tables")
	delete(fields, "snapshot")
	b, _ := json.Marshal(fields)
	return string(b)
}
