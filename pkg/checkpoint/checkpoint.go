// Package checkpoint keeps a pipeline's durable position and guarantees a
// single owner per pipeline. The position is the source's own encoding; this
// package stores it and never interprets it.
package checkpoint

import (
	"context"
	"errors"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Checkpoint is what a store keeps for one pipeline.
type Checkpoint struct {
	Pipeline  string          `json:"pipeline"`
	Position  change.Position `json:"position"` // the source's JSON; nil before the first checkpoint
	UpdatedAt time.Time       `json:"updated_at"`
}

// Store persists checkpoints for the pipeline it was opened for. Opening a
// store takes ownership of the pipeline; Close releases it.
type Store interface {
	// Load returns the last saved checkpoint; found is false when none exists.
	Load(ctx context.Context) (cp Checkpoint, found bool, err error)
	// Save durably replaces the checkpoint. It returns only once the write
	// is durable.
	Save(ctx context.Context, cp Checkpoint) error
	// Close releases ownership.
	Close() error
}

// ErrOwned is returned when another process owns the pipeline.
var ErrOwned = errors.New("checkpoint: pipeline is owned by another process")
