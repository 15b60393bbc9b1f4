package source

import "fmt"

// Reconnecting is implemented by a source that reconnects by itself after
// a lost connection (pkg/capture): whether it is connected now and how
// many times it has reconnected, for the pipeline's metrics.
type Reconnecting interface {
	Connected() bool
	Reconnects() int64
}

// Resnapshotting is implemented by a source that may start again from a
// new position and snapshot every table (source.snapshot_mode
// when_needed): how many times it has, for the pipeline's metrics.
type Resnapshotting interface {
	Resnapshots() int64
}

// UnsupportedError is what a command gets when it asks a source for a
// capability its driver does not have (a Dropper of a database that
// leaves nothing behind, say).
type UnsupportedError struct {
	Type string // source.type
	What string // what the command asked: "drop", "tables", …
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("source type %s does not support %s", e.Type, e.What)
}
