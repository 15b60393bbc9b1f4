package checkpoint

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
)

// Where says where a pipeline's checkpoint is kept: the checkpoint
// section of the configuration (docs/configuration.md), for every kind of
// store; each kind reads the fields it needs.
type Where struct {
	Pipeline string
	// Path is the file store's directory (checkpoint.path).
	Path string
	// Table is the DynamoDB table (checkpoint.table); CreateTable creates
	// it when missing (checkpoint.create_table).
	Table       string
	CreateTable bool
	// LeaseDuration is the lease of a leased store; 0 is
	// DefaultLeaseDuration.
	LeaseDuration time.Duration
	Log           *slog.Logger
}

func (w Where) log() *slog.Logger {
	if w.Log != nil {
		return w.Log
	}
	return slog.Default()
}

// Kind is one kind of checkpoint store (checkpoint.store): everything the
// CLI does with a pipeline's checkpoint, so that it never switches on the
// store type. Each kind registers itself (Register) under its name.
type Kind struct {
	// Leased says ownership is a lease that another task can take over
	// while this one runs (DynamoDB), not a lock held for the process's
	// life (the file store): see source.Options.Leased.
	Leased bool
	// Open takes ownership of the pipeline (`tributary run`), waiting
	// while another task holds a lease.
	Open func(ctx context.Context, w Where) (Store, error)
	// Read reads the checkpoint and the running task's status snapshot
	// (nil: none) without taking ownership (`tributary status`): it works
	// while the owner runs. A store that was never written is found false.
	Read func(ctx context.Context, w Where) (cp Checkpoint, found bool, status []byte, err error)
	// Hold takes the pipeline for `tributary drop`, refusing an owner
	// that runs (ErrOwned).
	Hold func(ctx context.Context, w Where) (*Held, error)
	// RequestBackfill queues a backfill request without taking the
	// pipeline over (ErrNeverRan for a pipeline that never ran);
	// PendingBackfill reads the queued one.
	RequestBackfill func(ctx context.Context, w Where, r Request) error
	PendingBackfill func(ctx context.Context, w Where) (Request, error)
}

// Held is a pipeline's checkpoint held for `tributary drop`.
type Held struct {
	// Contents says, one line each, what the store keeps for the
	// pipeline; none when it never ran.
	Contents []string
	// Drop removes all of it, and releases the pipeline.
	Drop func(ctx context.Context) error
	// Discard releases the pipeline, removing only what holding it made.
	Discard func(ctx context.Context) error
}

// kinds holds each registered Kind by its name.
var kinds sync.Map

// Register makes a kind of store available under name.
func Register(name string, k Kind) { kinds.Store(name, k) }

// Lookup returns the kind of store registered under name; its error names
// checkpoint.store and the kinds there are.
func Lookup(name string) (Kind, error) {
	k, ok := kinds.Load(name)
	if !ok {
		return Kind{}, fmt.Errorf("checkpoint.store: %q is not supported (use %s)", name, strings.Join(Kinds(), " or "))
	}
	return k.(Kind), nil
}

// Kinds lists the registered kinds of store, by name.
func Kinds() []string {
	var ns []string
	kinds.Range(func(name, _ any) bool { ns = append(ns, name.(string)); return true })
	sort.Strings(ns)
	return ns
}
