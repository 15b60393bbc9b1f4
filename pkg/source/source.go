// Package source defines what every database source implements and a
// registry from source.type to constructor, so the CLI never switches on
// database kinds. Implementations live in the sub-packages.
package source

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"sync"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
)

// Source reads one database: backfill, then streaming.
type Source interface {
	// Run backfills (when configured and not done) and then streams changes,
	// calling emit for each event in source order, until ctx is done or an
	// error occurs. from is the last checkpointed position (nil: fresh
	// start). emit may block (backpressure); its error stops Run. The
	// first event is the position Run streams from (no row, Op None): the
	// pipeline checkpoints it before it publishes any row, so a restart
	// after a crash at any moment resumes from a position at or before
	// every change not yet published.
	Run(ctx context.Context, from change.Position, emit func(context.Context, *change.Event) error) error
	// Ack tells the source that everything up to pos is durably
	// checkpointed, so it may release log space. Safe to call from any
	// goroutine; it does not block on the network.
	Ack(pos change.Position)
	// Close releases connections.
	Close() error
}

// Options are what every source constructor gets.
type Options struct {
	Pipeline    string        // the pipeline name
	TopicPrefix string        // Debezium's logical server name
	Config      config.Source // the source section, validated
	// Leased says the checkpoint store holds a lease that fences out any
	// earlier owner (the DynamoDB store): then, and only then, the source
	// may end another reader's replication connection, which can only be
	// a stale owner. Without it (the file store, whose lock is local to
	// one machine) another reader may be a live task, and is refused.
	Leased bool
	// Logger is the pipeline's logger (it carries the pipeline field);
	// nil means slog.Default().
	Logger *slog.Logger
	// Dial, when set, opens every TCP connection the source makes to its
	// database (the Lambda functions pass their guarded dialer, which
	// refuses loopback and instance metadata); nil dials directly.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MissingTables, when set, is told the source.tables entries that
	// match no table, each time that set changes (see ReportMissing).
	MissingTables func(tables []string)
	// KeyColumns is destination.key_columns: per table, the columns of
	// the message key instead of the primary key. A source whose old row
	// images may lack some of them refuses that table at start and in its
	// checks, rather than publish keys it cannot know.
	KeyColumns map[string][]string
	// SnapshotBacklog, when set, paces snapshot chunks while the stream
	// publishes (see snapshot.Config.Backlog).
	SnapshotBacklog func() int64
}

// Log returns the logger a source logs through: Logger, or slog.Default().
func (o Options) Log() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// Constructor makes a Source.
type Constructor func(ctx context.Context, opts Options) (Source, error)

var (
	mu       sync.Mutex
	registry = map[string]Constructor{}
)

// Register makes a source type available; sub-packages call it from init.
func Register(typ string, c Constructor) {
	mu.Lock()
	defer mu.Unlock()
	registry[typ] = c
}

// New makes the Source for opts.Config.Type.
func New(ctx context.Context, opts Options) (Source, error) {
	mu.Lock()
	c, ok := registry[opts.Config.Type]
	mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("source.type %q is not supported (have %v)", opts.Config.Type, Types())
	}
	src, err := c(ctx, opts)
	if err != nil {
		return nil, err
	}
	// Every source rides out a lost connection the same way (retry.go).
	return &Reconnecting{Source: src, Type: opts.Config.Type, Window: opts.Config.OutageWindowDuration(),
		Resnapshot: opts.Config.Snapshot() == config.SnapshotWhenNeeded}, nil
}

// Types lists the registered source types.
func Types() []string {
	mu.Lock()
	defer mu.Unlock()
	var ts []string
	for t := range registry {
		ts = append(ts, t)
	}
	sort.Strings(ts)
	return ts
}
