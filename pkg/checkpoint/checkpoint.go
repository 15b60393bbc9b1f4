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
	// Receipts are the write receipts of every partition written, as of
	// this checkpoint (receipt.go).
	Receipts []Receipt `json:"receipts,omitempty"`
	// Delivery is the delivery mode of the task that wrote the checkpoint
	// (DeliveryAtLeastOnce, DeliveryExactlyOnce; "" when written by a
	// version that did not record it). Exactly once, the offsets topic
	// leads the store; a checkpoint written at least once after the last
	// exactly-once commit leads the offsets topic instead (see
	// pkg/pipeline/exactlyonce.go).
	Delivery string `json:"delivery,omitempty"`
	// Owner and Epoch describe the lease when the store has one (DynamoDB):
	// who held the pipeline at the last write, and its fencing epoch. Load
	// fills them in; Save ignores them.
	Owner string `json:"-"`
	Epoch int64  `json:"-"`
}

// The delivery modes a checkpoint records (config delivery).
const (
	DeliveryAtLeastOnce = "at_least_once"
	DeliveryExactlyOnce = "exactly_once"
)

// Store persists checkpoints for the pipeline it was opened for. Opening a
// store takes ownership of the pipeline (the file lock, the DynamoDB lease)
// before anything reads the source; Close releases it.
//
// The contract every store honours: Save succeeds only while this store
// owns the pipeline, so a stale owner can never move the checkpoint; and a
// caller that checks Owned before each publish stops publishing within one
// lease period of losing ownership.
type Store interface {
	// Load returns the last saved checkpoint; found is false when none exists.
	Load(ctx context.Context) (cp Checkpoint, found bool, err error)
	// Save durably replaces the checkpoint. It returns only once the write
	// is durable, and fails (wrapping ErrLeaseLost) when this store no
	// longer owns the pipeline.
	Save(ctx context.Context, cp Checkpoint) error
	// Owned returns nil while this store certainly owns the pipeline, and
	// an error wrapping ErrLeaseLost once it may not. It does not block.
	Owned() error
	// Lost is closed when ownership is lost (nil when it cannot be lost
	// while the process lives, as with the file lock); Owned then says why.
	Lost() <-chan struct{}
	// SaveStatus keeps the running task's status snapshot (JSON) where
	// Kind.Read finds it (statussnapshot.go).
	SaveStatus(ctx context.Context, snapshot []byte) error
	// Close releases ownership.
	Close() error
}

// ErrOwned is returned when another process owns the pipeline.
var ErrOwned = errors.New("checkpoint: pipeline is owned by another process")

// ErrLeaseLost is wrapped by Save and Owned once another task took the
// pipeline over, or the lease could not be renewed in time: the holder
// must stop publishing.
var ErrLeaseLost = errors.New("checkpoint: lease lost")
