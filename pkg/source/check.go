package source

import (
	"context"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Check is one thing a connection test verified about the source: its
// name ("source connection", "wal_level", …), whether it passed, what was
// found, and when it failed, how to fix it. Detail and Fix never hold a
// password.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
	Fix    string `json:"fix,omitempty"`
}

// Checker is implemented by sources that can test their connection and
// prerequisites (settings, grants, slots) without reading any change,
// so that test-connection finds what run would refuse at start. Check
// reports every check it could make, failing ones included; it stops
// early only when it cannot connect.
type Checker interface {
	Check(ctx context.Context) []Check
}

// Lagger is implemented by sources that can say how many bytes of their
// log lie between a checkpointed position and the server's current end,
// for status displays. It connects, reads and disconnects.
type Lagger interface {
	LagBytes(ctx context.Context, pos []byte) (int64, error)
}

// Describer is implemented by sources that can read the current shape of
// the tables they would capture, without capturing anything: for
// test-connection's list of the columns the encoder leaves out.
type Describer interface {
	Describe(ctx context.Context) ([]*change.Table, error)
}
