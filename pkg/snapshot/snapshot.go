// Package snapshot is the capture engine's snapshot side, shared by every
// source: it re-publishes whole tables (op r) while the source streams,
// with DBLog-style watermarks, several tables at once, resumable from each
// table's last key. It knows no database: a source plugs in through
// Database (read a chunk after a key, write a watermark to its own log);
// the capture loop (pkg/capture) makes the engine and feeds it the
// source's stream through Observe and Watermark.
//
// The window: for each chunk a worker writes a low watermark to the
// database's log, reads the chunk (a short query, no long transaction),
// and writes a high watermark. From just before the low watermark the
// stream notes the keys its changes touch in that table; meeting the high
// watermark, it emits the chunk's rows whose keys it did not see changed,
// right there in the stream's order. A row changed inside the window is thus
// published only by the stream, whose message is newer than (or as new
// as) the chunk's copy, and every chunk row comes after every change
// older than it: a key's last message is always its latest state, and no
// r row is older than a change published after it. One exception keeps
// values recoverable: when the stream's newest image of a changed row
// lacks a value (PostgreSQL's unchanged TOAST), the chunk's row is the
// only copy of it, and the engine emits that image with the missing
// values taken from the chunk's row instead (touch.go).
//
// Promises: Watermark and Observe are called by the stream's goroutine
// only and emit from it, so the source's order is kept; State, encoded in
// each position the source emits, says how far every unfinished table got,
// so a restart from that position reads on after each table's last key.
package snapshot

import (
	"context"
	"errors"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// DefaultParallelism is how many tables are read at once when
// source.snapshot_parallelism is not set: sized for a small task (one
// vCPU), where more readers only compete with the stream.
const DefaultParallelism = 2

// ChunkRows is how many rows one chunk query reads while the stream is
// idle, for every source that sets no Config.DefaultChunkRows. A chunk is held in memory between its
// watermarks, and emitted at once at its high watermark, ahead of every
// change the stream reads after it.
const ChunkRows = 5000

// StreamingChunkRows is the chunk while the stream carries changes: a
// change read just after a high watermark waits for the chunk's rows to be
// encoded and sent, so a smaller chunk keeps the stream's latency low:
// this size keeps make bench's snapshot-latency scenario within its p99
// target of 100 ms, where 2,500 rows did not, at a few percent of the
// rows/s of a large chunk.
const StreamingChunkRows = 1000

// ChunkBytes bounds a chunk by its values' bytes as ChunkRows bounds it
// by rows (both divided among the workers): 2,500 rows of 900 KB held a
// whole 1.3 GB table in memory. A table's first chunk is firstChunkRows
// rows, its rows' size unknown; each next one is sized by the last one's
// rows (at least one row). Whatever the size asked, a source keeps no
// row of a table with a key past ChunkBytes (Session.ReadChunk).
const ChunkBytes = 8 << 20

// firstChunkRows is the chunk read before a table's row size is known.
const firstChunkRows = 16

// ErrNoTable is returned (wrapped) by Session.ReadChunk when the table no
// longer exists: the engine drops it from the snapshot with a warning
// instead of failing the pipeline.
var ErrNoTable = errors.New("table not found")

// ErrShapeMoved is returned (wrapped) by Session.ReadChunk when the
// table's shape on the server is not yet the one the source knows (an
// ALTER TABLE the stream has not reached): the engine reads the chunk
// again a moment later, as long as it takes the stream to get there.
var ErrShapeMoved = errors.New("the table's shape changed since it was described")

// ReadOn is the after of a keyless table's next chunk: the next rows of
// the scan the session holds open (see Session.ReadChunk). It is never
// stored: a position resumes a keyless table from its start.
var ReadOn = Key{}

// Key is a primary key as a source's chunk query takes it back: one raw
// value per key column, in the source's own text form. It is stored in
// positions (base64 in JSON), so it survives any byte.
type Key [][]byte

// Row is one row a chunk read: its key, for resuming after it, and its
// read event (op r, Table and Source set; the engine sets Source.Snapshot
// and ID).
type Row struct {
	Key   Key
	Event *change.Event
}

// Database is what a source answers for the engine.
type Database interface {
	// Session opens a connection for one worker; the engine calls it
	// once per worker and closes the session when the worker ends.
	Session(ctx context.Context) (Session, error)
}

// Session is one worker's connection. Calls on one session come from one
// goroutine; sessions of different workers run at once.
type Session interface {
	// ReadChunk returns up to limit rows of table with keys after after
	// (nil: from the start), in key order, as of now (a single short
	// read, no long transaction). It keeps no row after those kept reach
	// ChunkBytes (ChunkFill counts them): then it returns fewer than limit rows
	// before the table's end, and the engine reads on after the last one
	// (a chunk is sized by the rows before it, and rows far larger than
	// those may follow).
	//
	// A table without a primary key has no key to read on after: it is
	// read by one scan (a single read of the whole table, as of its
	// start) that the session holds open from one call to the next, and
	// its rows have a nil Key. after nil opens the scan (closing one the
	// session had open); after ReadOn returns the scan's next rows, and
	// fewer than limit when it ends, which closes it. The engine passes
	// ReadOn only right after this session returned a full chunk of the
	// table; after anything else the table is read again from the start.
	//
	// until, when not nil, is the last key of the range read (a table
	// split by Split): no row after it is returned, and fewer than limit
	// rows end the range. It is nil for a table without a key.
	ReadChunk(ctx context.Context, table string, after, until Key, limit int) ([]Row, error)
	// Split returns up to parts-1 keys of table, in key order, that cut
	// its rows after after (nil: from the start; about rows of them, from
	// the statistics) into parts ranges of about the same rows: each key
	// is the last of its range. Fewer keys (none for a table without a
	// key) keep ranges whole.
	Split(ctx context.Context, table string, after Key, rows int64, parts int) ([]Key, error)
	// WriteWatermark writes mark to the database's log, committed, so
	// that the stream meets it after every change committed before it;
	// the source hands it back (source.Stream's Watermark).
	WriteWatermark(ctx context.Context, mark string) error
	// Estimate is the table's row count from the database's statistics;
	// 0 when unknown.
	Estimate(ctx context.Context, table string) (int64, error)
	Close() error
}

// Sizer is a Session that can tell, from the database's statistics, how
// many bytes (RowBytes) an average row of a table holds before any is
// read; 0 when it does not know. The engine then sizes the table's first
// chunk by it, where it would otherwise read firstChunkRows rows and grow
// from there by chunkGrowth: each of those small chunks costs a query
// and a watermark's round trip through the stream.
type Sizer interface {
	RowBytes(ctx context.Context, table string) (int, error)
}

// Config sets an Engine up.
type Config struct {
	// Parallelism is how many tables are read at once;
	// DefaultParallelism when 0.
	Parallelism int
	// ChunkRows is the rows of one chunk while the stream is idle;
	// ChunkRows when 0 (tests set it small). While the stream carries
	// changes a chunk is at most StreamingChunkRows.
	ChunkRows int
	// DefaultChunkRows replaces the ChunkRows constant for a source whose
	// every chunk costs far more than its rows (a server that scans the
	// collection for each chunk query, a stream that meets each watermark
	// a poll later); divided among the workers and overridden for tests as
	// the constant is. 0: ChunkRows.
	DefaultChunkRows int
	// ChunkBytes bounds a chunk's value bytes; ChunkBytes divided by
	// Parallelism when 0.
	ChunkBytes int
	// IDPrefix starts the event IDs of read rows ("pg", "my").
	IDPrefix string
	// TableName names the table of a streamed event as source.tables
	// does ("schema.table", "db.table").
	TableName func(change.TableID) string
	// Log receives the engine's messages; nil: slog.Default().
	Log interface {
		Info(msg string, args ...any)
		Warn(msg string, args ...any)
	}
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Backlog is how many read rows the destination has yet to
	// acknowledge while the stream publishes (0 while it is idle); a new
	// chunk waits until it is at most half a StreamingChunkRows chunk, so
	// the stream's changes never queue behind more than about one small
	// chunk. nil: no pacing.
	Backlog func() int64
}
