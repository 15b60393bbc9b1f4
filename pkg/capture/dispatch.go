package capture

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// dispatcher is the loop's side of a driver's stream (source.Stream): what
// every database needs done around its log, in one place. Each row passes
// through the snapshot engine before it is handed on (so a chunk's copy
// of a row the stream changed in its window is left out); a change of a
// row's key becomes a delete and a create; watermarks go to the engine;
// each cursor is sealed with the captured set and the snapshots' state
// into the checkpoint's position (envelope.go). One per Capture, made
// with its engine; out is where the current attempt hands events on.
type dispatcher struct {
	engine   *snapshot.Engine
	backfill bool // source.backfill: tables added while streaming are snapshotted
	// txmeta: transaction metadata is on (txmeta.go); tx is the open
	// transaction's.
	txmeta bool
	tx     txState

	// out hands an event on (the pipeline's emit, or a handoff's Emit);
	// set by the loop before Start and before Stream. first, when set,
	// runs once before the next position is sealed (Capture.run).
	out   func(context.Context, *change.Event) error
	first func()
	// slabs holds the deletes of key changes: an event handed on is never
	// reused (source.Handoff), and these cost no allocation each.
	slabs snapshot.Slabs

	// The captured set, as the checkpoint records it and by name.
	mu     sync.Mutex
	record json.RawMessage
	names  []string
}

var _ source.Stream = (*dispatcher)(nil)

// Change implements source.Stream.
func (d *dispatcher) Change(ctx context.Context, ev *change.Event) error {
	if d.txmeta {
		if err := d.txChange(ctx, ev); err != nil {
			return err
		}
	}
	if ev.Op == change.OpUpdate && keyChanged(ev.Table, ev.Before, ev.After) {
		// Like Debezium: a delete of the old key, then a create of the new
		// one, each seen by the snapshot's windows.
		del := d.slabs.Event()
		*del = *ev
		del.Op, del.After, del.ID = change.OpDelete, nil, ev.ID+":old"
		if d.txmeta {
			// Two changes of the transaction: the create comes second.
			d.tx.next(ev)
		}
		if err := d.engine.Observe(ctx, del, d.out); err != nil {
			return err
		}
		if err := d.out(ctx, del); err != nil {
			return err
		}
		ev.Op, ev.Before = change.OpCreate, nil
	}
	if err := d.engine.Observe(ctx, ev, d.out); err != nil {
		return err
	}
	return d.out(ctx, ev)
}

// Commit implements source.Stream.
func (d *dispatcher) Commit(ctx context.Context, cursor change.Position, commitMicros int64) error {
	if d.tx.open {
		if err := d.txEnd(ctx, cursor, commitMicros); err != nil {
			return err
		}
	}
	if d.first != nil {
		f := d.first
		d.first = nil
		f()
	}
	d.mu.Lock()
	record := d.record
	d.mu.Unlock()
	ev := &change.Event{Position: seal(cursor, record, d.engine.State())}
	ev.Source.CommitMicros = commitMicros
	return d.out(ctx, ev)
}

// Heartbeat implements source.Stream.
func (d *dispatcher) Heartbeat(ctx context.Context, cursor change.Position) error {
	return d.Commit(ctx, cursor, 0)
}

// Watermark implements source.Stream.
func (d *dispatcher) Watermark(ctx context.Context, mark string) error {
	_, err := d.engine.Watermark(ctx, mark, d.out)
	return err
}

// Captured implements source.Stream.
func (d *dispatcher) Captured(record json.RawMessage, names []string) {
	d.mu.Lock()
	d.record, d.names = record, names
	d.mu.Unlock()
}

// capturedNames are the captured set's names (nil before a driver told
// them).
func (d *dispatcher) capturedNames() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.names
}

// Added implements source.Stream.
func (d *dispatcher) Added(names []string) {
	if d.backfill && len(names) > 0 {
		d.engine.Queue(names, false)
	}
}

// Gone implements source.Stream: no snapshot of the table can finish; one
// of a new table of its name, queued after, goes on.
func (d *dispatcher) Gone(name string) { d.engine.Drop(name) }

// Again implements source.Stream: a snapshot of the table under way has
// read past rows that may have changed, so it starts again from the first
// row (snapshot.Engine.Again).
func (d *dispatcher) Again(name string) { d.engine.Again(name) }

// keyChanged reports whether an update changed the message key: an
// update carries a before image with its key only when the database logged
// one (PostgreSQL's old key or REPLICA IDENTITY FULL, MySQL's full row).
func keyChanged(t *change.Table, before, after change.Row) bool {
	if before == nil || after == nil {
		return false
	}
	for _, k := range t.Key {
		a, b := &before[k], &after[k]
		if a.Kind != b.Kind || a.Int != b.Int || a.Float != b.Float || string(a.Bytes) != string(b.Bytes) {
			return true
		}
	}
	return false
}
