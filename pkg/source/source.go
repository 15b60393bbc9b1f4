// Package source is what the pipeline sees of a source (Source and the
// capabilities it asks for) and the kit every database driver shares:
// its options, the errors it reports (errors.go: a lost position, another
// reader), connection checks, dialing, TLS, column projections. The
// capture loop that runs a driver is pkg/capture (which maps source.type
// to its driver); the drivers live in the sub-packages.
package source

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
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

// Options are what every driver's constructor gets.
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
	// TransactionMetadata is format.provide_transaction_metadata: the
	// capture loop places each streamed change in its transaction and
	// hands on each transaction's BEGIN and END (change.TxMark).
	TransactionMetadata bool
	// Checkpointed is the position the pipeline's checkpoint holds (nil:
	// none), for Dropper: a source drops only what it records as the
	// pipeline's own (a replication slot is server-wide, and may be
	// another pipeline's).
	Checkpointed change.Position
	// SnapshotBacklog, when set, paces snapshot chunks while the stream
	// publishes (see snapshot.Config.Backlog).
	SnapshotBacklog func() int64
	// StatementChange, when set, is told each time a captured table is
	// changed by a statement the log holds as text, not rows (MySQL
	// binlog_format = STATEMENT): its rows are read again by a backfill.
	StatementChange func(table string)
}

// Log returns the logger a source logs through: Logger, or slog.Default().
func (o Options) Log() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// CapturedSet is a driver's captured set, which the capture loop records
// in each position (Stream.Captured): a driver embeds it, sets it whenever
// the set changes, and hands it the loop's Stream (TellCaptured: at Resume
// and Start), from which on each change is told at once. It is safe from
// any goroutine.
type CapturedSet struct {
	mu     sync.Mutex
	record json.RawMessage
	names  []string
	to     Stream
}

// SetCaptured replaces the set: its record (JSON) and its names, sorted.
func (c *CapturedSet) SetCaptured(record json.RawMessage, names []string) {
	c.mu.Lock()
	c.record, c.names = record, names
	to := c.to
	c.mu.Unlock()
	if to != nil {
		to.Captured(record, names)
	}
}

// TellCaptured tells st the set, and every change from here on.
func (c *CapturedSet) TellCaptured(st Stream) {
	c.mu.Lock()
	c.to = st
	record, names := c.record, c.names
	c.mu.Unlock()
	st.Captured(record, names)
}

// CapturedGone tells the loop that a captured table no longer exists
// (Stream.Gone); before the loop's Stream is known (a fresh start) there
// is no snapshot of it to end.
func (c *CapturedSet) CapturedGone(name string) {
	c.mu.Lock()
	to := c.to
	c.mu.Unlock()
	if to != nil {
		to.Gone(name)
	}
}

// CapturedNames are the set's names.
func (c *CapturedSet) CapturedNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.names
}
