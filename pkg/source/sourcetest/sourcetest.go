// Package sourcetest holds what the drivers' tests share: a stream that
// hands what a driver streams to a function, and the driver's part of a
// checkpoint's position.
package sourcetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// FuncStream hands what the driver streams to a function, as the capture
// loop does with no snapshot running and no key change to split: the
// cursors as position events, unsealed.
type FuncStream func(context.Context, *change.Event) error

func (f FuncStream) Change(ctx context.Context, ev *change.Event) error { return f(ctx, ev) }
func (f FuncStream) Commit(ctx context.Context, cursor change.Position, micros int64) error {
	ev := &change.Event{Position: cursor}
	ev.Source.CommitMicros = micros
	return f(ctx, ev)
}
func (f FuncStream) Heartbeat(ctx context.Context, cursor change.Position) error {
	return f.Commit(ctx, cursor, 0)
}
func (FuncStream) Watermark(context.Context, string) error { return nil }
func (FuncStream) Captured(json.RawMessage, []string)      {}
func (FuncStream) Added([]string)                          {}
func (FuncStream) Gone(string)                             {}
func (FuncStream) Again(string)                            {}

// Cursor is the driver's part of a checkpoint's position, as the capture
// loop hands it over: without the loop's fields.
func Cursor(t *testing.T, doc string) string {
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
