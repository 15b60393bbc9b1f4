package capture

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
)

// The checkpoint's position is one JSON object: the driver's cursor, its
// own fields (PostgreSQL: slot, lsn, dropped, full_keys; MySQL: flavor,
// gtid, file, pos, shapes), with the fields the loop owns beside them:
//
//	backfilled  true in every position this release writes: the stream
//	            position is usable (positions of earlier releases without
//	            it carry an unfinished backfill that ran before streaming,
//	            read by Legacy)
//	tables      the captured set (source.Stream's Captured), so that a restart
//	            snapshots exactly the tables added while it was down
//	snapshot    the snapshot engine's state (snapshot.State): the tables
//	            still being snapshotted, each with its last key
//
// Positions written before the loop was shared had the same three fields
// at the same level, so every checkpoint written since reads unchanged.
type envelope struct {
	Backfilled bool            `json:"backfilled"`
	Tables     json.RawMessage `json:"tables,omitempty"`
	Snapshot   json.RawMessage `json:"snapshot,omitempty"`
}

// openEnvelope reads the loop's fields of a checkpoint's position (nil: no
// checkpoint, the zero envelope) and the driver's cursor, the position
// without them.
func openEnvelope(p change.Position) (envelope, snapshot.State, change.Position, error) {
	var e envelope
	if p == nil {
		return e, snapshot.State{}, nil, nil
	}
	if err := json.Unmarshal(p, &e); err != nil {
		return e, snapshot.State{}, nil, fmt.Errorf("checkpoint position: %w", err)
	}
	st, err := snapshot.DecodeState(e.Snapshot)
	if err != nil {
		return e, st, nil, fmt.Errorf("checkpoint position: %w", err)
	}
	cursor, err := cursorOf(p)
	if err != nil {
		return e, st, nil, fmt.Errorf("checkpoint position: %w", err)
	}
	return e, st, cursor, nil
}

// cursorOf is a position without the loop's fields: the driver's cursor.
// Its fields come out in name order and compacted; their values are the
// position's, byte for byte.
func cursorOf(p change.Position) (change.Position, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(p, &fields); err != nil {
		return nil, err
	}
	if fields == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	delete(fields, "backfilled")
	delete(fields, "tables")
	delete(fields, "snapshot")
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fields); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// seal adds the loop's fields to a driver's cursor, a JSON object that
// holds none of them.
func seal(cursor change.Position, tables, state json.RawMessage) change.Position {
	if len(cursor) < 2 {
		cursor = change.Position("{}")
	}
	out := make([]byte, 0, len(cursor)+len(tables)+len(state)+45)
	out = append(out, cursor[:len(cursor)-1]...)
	if len(cursor) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"backfilled":true`...)
	if tables != nil {
		out = append(out, `,"tables":`...)
		out = append(out, tables...)
	}
	if state != nil {
		out = append(out, `,"snapshot":`...)
		out = append(out, state...)
	}
	return append(out, '}')
}
