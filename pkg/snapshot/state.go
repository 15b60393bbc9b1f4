package snapshot

import (
	"encoding/json"
	"fmt"
)

// State is what a position records of the snapshots: the tables still to
// finish, each with the key of its last published row, and the tables
// finished since the snapshots began. Sources store it, encoded, in their
// positions and hand it back to Engine.Restore.
type State struct {
	Tables []TableState `json:"tables,omitempty"`
	Done   []string     `json:"done,omitempty"`
}

// TableState is one unfinished table's snapshot.
type TableState struct {
	Table string `json:"table"`
	// Key is the primary key of the last row read (base64 values): the
	// snapshot reads on after it. Empty: from the start.
	Key Key `json:"key,omitempty"`
	// Parts are the key ranges still to read of a table split into
	// several (Key is then unused); none: one range, from Key to the end.
	Parts []RangeState `json:"parts,omitempty"`
	// Rows counts the rows published (op r) so far.
	Rows int64 `json:"rows"`
	// Started is when the table's first chunk was read (Unix ms); 0
	// while queued.
	Started int64 `json:"started,omitempty"`
	// Initial marks the snapshot a pipeline takes when it starts, whose
	// rows carry Debezium's first/last markers; the rows of a snapshot
	// requested while streaming are "incremental".
	Initial bool `json:"initial,omitempty"`
}

// RangeState is a key range of a table still to read: the rows after Key
// (empty: from the start) up to Until (inclusive; empty: to the end).
type RangeState struct {
	Key   Key `json:"key,omitempty"`
	Until Key `json:"until,omitempty"`
}

// DecodeState reads an encoded State; empty input is the empty State.
func DecodeState(raw json.RawMessage) (State, error) {
	var s State
	if len(raw) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("snapshot state: %w", err)
	}
	for _, t := range s.Tables {
		if t.Table == "" || t.Rows < 0 {
			return s, fmt.Errorf("snapshot state: a table without a name or with negative rows")
		}
	}
	return s, nil
}

// Pending reports whether any table is still to finish.
func (s State) Pending() bool { return len(s.Tables) > 0 }
