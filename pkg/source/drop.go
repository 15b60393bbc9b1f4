package source

import "context"

// Leftover is one thing a pipeline left on its database: what it is
// ("replication slot", "publication", "signal table rows"), its name,
// and, when Drop keeps it, why (Kept).
type Leftover struct {
	What string `json:"what"`
	Name string `json:"name"`
	Kept string `json:"kept,omitempty"`
}

// Dropper is implemented by sources that can remove what a pipeline
// left on its database, for `tributary drop` (docs/operations.md).
// Leftovers lists it without changing anything; Drop removes what
// Leftovers does not mark kept and returns what it removed. Both fail,
// changing nothing, while another process reads for the pipeline (a
// replication slot in use). Each connects, works and disconnects; a
// second Drop finds nothing to remove.
type Dropper interface {
	Leftovers(ctx context.Context) ([]Leftover, error)
	Drop(ctx context.Context) ([]Leftover, error)
}

// Finisher is implemented by sources that keep something on the database
// only a stream reads (a replication slot, which pins the log). When a
// run of source.snapshot_mode initial_only ends, nothing will ever stream
// from it: FinishBackfilled releases it (only what is the pipeline's
// own), logging what it did. It connects, works and disconnects.
type Finisher interface {
	FinishBackfilled(ctx context.Context) error
}
