// Package mongodb reads a MongoDB replica set or sharded cluster: change
// streams for the log, find in _id order for snapshots, and the message in
// Debezium's MongoDB connector format. Driver reads the server (its stream
// into a local Sink); Source (source.go) runs it under the capture loop,
// and collections are document tables whose messages this package writes
// (codec.go).
package mongodb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// Sink receives what the stream reads, in order.
type Sink interface {
	// Change is one document change on a captured collection.
	Change(ctx context.Context, ev Event) error
	// Commit says every change handed over so far is complete: the stream
	// resumes from c. A transaction's changes end with one Commit.
	Commit(ctx context.Context, c Cursor) error
	// Watermark is a snapshot watermark written by Snapshots().WriteWatermark
	// read back at its place in the stream.
	Watermark(ctx context.Context, id string) error
	// Heartbeat reports progress while no captured change arrives.
	Heartbeat(ctx context.Context, c Cursor) error
	// Captured says the captured set changed at this point of the stream,
	// before the Commit of the event that changed it: set is the whole
	// set now (sorted), gone the collections that left it (dropped,
	// renamed away, their database dropped), added those that joined it
	// with documents the stream never carried (renamed into it). A
	// collection in both was replaced by a rename onto its name.
	Captured(ctx context.Context, set, added, gone []string) error
}

// Capture modes, as Debezium's capture.mode names them.
const (
	ModeUpdateFull             = "change_streams_update_full"
	ModeUpdateFullWithPreImage = "change_streams_update_full_with_pre_image"
	ModeChangeStreams          = "change_streams"
	ModeChangeStreamsPreImage  = "change_streams_with_pre_image"
)

// captureMode is the capture mode s names, taken as Debezium's
// CaptureMode.parse takes it (trimmed, in any case; unset is
// ModeUpdateFull), and whether s names one.
func captureMode(s string) (string, bool) {
	if s == "" {
		return ModeUpdateFull, true
	}
	t := strings.TrimSpace(s)
	for _, m := range []string{ModeUpdateFull, ModeUpdateFullWithPreImage, ModeChangeStreams, ModeChangeStreamsPreImage} {
		if strings.EqualFold(t, m) {
			return m, true
		}
	}
	return s, false
}

// Scopes: what one change stream watches.
const (
	// ScopeCluster watches the whole deployment and filters by
	// namespace: later-created collections are captured and watermarks
	// travel in the same stream. The default.
	ScopeCluster = "cluster"
	// ScopeCollection watches one collection: for servers without
	// cluster-wide change streams (mongo-java-server). No watermarks.
	ScopeCollection = "collection"
)

// Config is the driver's configuration.
type Config struct {
	Connection Connection
	// Include and Exclude are collection.include.list /
	// collection.exclude.list regexes on "db.collection".
	Include, Exclude []string
	// CaptureMode is Debezium's capture.mode; empty is ModeUpdateFull.
	CaptureMode string
	// Scope is ScopeCluster (default) or ScopeCollection.
	Scope string
	// SignalCollection, "db.collection", is where watermarks are written;
	// empty disables them.
	SignalCollection string
	// BatchSize of the change stream's getMore; 0 is the server's.
	BatchSize int32
	// MaxAwait is how long the server holds an empty getMore
	// (defaultMaxAwait);
	// IdlePause the least time between two empty polls (default 100ms), for
	// servers that answer an empty getMore at once.
	MaxAwait, IdlePause time.Duration
	// SplitLargeEvents adds $changeStreamSplitLargeEvent (MongoDB 7.0+),
	// and streams without it where the server does not know the stage.
	SplitLargeEvents bool
	Logger           *slog.Logger
}

// defaultMaxAwait is how long a server may hold an empty getMore: a
// snapshot chunk's watermark (an operation time) is handed on when a read
// of the stream begun after it returns, so on an idle collection each
// chunk waits for up to one such read. The driver's default, 1 s, would
// bound a backfill to a chunk a second; a quarter of it costs an idle
// pipeline four small reads a second. (mongo-java-server answers an empty
// getMore at once, so this has not been measured on a real server.)
const defaultMaxAwait = 250 * time.Millisecond

// ErrHistoryLost means the resume point is gone from the oplog (server
// error 286 ChangeStreamHistoryLost, or 136 CappedPositionLost): the
// collections must be snapshot again.
var ErrHistoryLost = errors.New("mongodb: the resume point is no longer in the oplog; a new snapshot is required")

// Driver is one connection to a MongoDB deployment.
type Driver struct {
	cfg    Config
	filter *Filter
	log    *slog.Logger
	client *mongo.Client

	cursor   Cursor
	skipTo   bson.Timestamp // events at or before it are already read
	captured []string       // sorted
	stream   changeStream
	// open opens a change stream at a cursor (Start sets it; tests give
	// their own).
	open func(ctx context.Context, c Cursor) (changeStream, error)
	// exists says whether a collection is there now (Start sets it;
	// nil in tests: not asked).
	exists   func(ctx context.Context, db, coll string) (bool, error)
	watchDB  string
	watchCol string
	acked    Cursor
	// modernTypesOnly: the server rejected the deprecated BSON types in
	// $type, so chunk filters leave them out (snapshot workers read and
	// set it at once).
	modernTypesOnly atomic.Bool
	// noSplit: the server refused $changeStreamSplitLargeEvent; streams
	// are opened without it.
	noSplit atomic.Bool

	// marks are the watermarks placed by operation time (MarkAt), not yet
	// met by the stream; markSeq numbers them.
	marksMu sync.Mutex
	marks   []timedMark
	markSeq uint64
	// marked wakes an idle Stream when a mark is placed: the stream polls
	// at once instead of after IdlePause, so a snapshot chunk waits one
	// poll for its watermark, not a pause and a poll.
	marked chan struct{}
	// refused ends the operation guard gave it (the ping, a read of the
	// stream) once every server has refused a dial for long enough
	// (refusals).
	refused atomic.Pointer[func(err error, streak time.Duration)]
}

// timedMark is a watermark placed at an operation time: every event at or
// before at comes before it in the stream, every later one after.
type timedMark struct {
	id  string
	at  bson.Timestamp
	seq uint64
}

// NewDriver checks the configuration; every problem is reported at once.
func NewDriver(cfg Config) (*Driver, error) {
	var errs []error
	s, err := ParseConnection(cfg.Connection)
	if err != nil {
		errs = append(errs, err)
	}
	cfg.Connection = s
	f, err := NewFilter(cfg.Include, cfg.Exclude)
	if err != nil {
		errs = append(errs, err)
	}
	if mode, ok := captureMode(cfg.CaptureMode); ok {
		cfg.CaptureMode = mode
	} else {
		errs = append(errs, fmt.Errorf("source.capture_mode %q: want one of %s, %s, %s, %s", cfg.CaptureMode,
			ModeChangeStreams, ModeUpdateFull, ModeChangeStreamsPreImage, ModeUpdateFullWithPreImage))
	}
	switch cfg.Scope {
	case "":
		cfg.Scope = ScopeCluster
	case ScopeCluster, ScopeCollection:
	default:
		errs = append(errs, fmt.Errorf("source.scope %q: want %s or %s", cfg.Scope, ScopeCluster, ScopeCollection))
	}
	if cfg.SignalCollection != "" {
		db, coll, ok := strings.Cut(cfg.SignalCollection, ".")
		if !ok || db == "" || coll == "" {
			errs = append(errs, fmt.Errorf("source.signal_collection %q: want database.collection", cfg.SignalCollection))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if f != nil {
		f.signal = cfg.SignalCollection
	}
	if cfg.MaxAwait <= 0 {
		cfg.MaxAwait = defaultMaxAwait
	}
	if cfg.IdlePause <= 0 {
		cfg.IdlePause = 100 * time.Millisecond
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Driver{cfg: cfg, filter: f, log: log.With("source", "mongodb"), marked: make(chan struct{}, 1)}, nil
}

// Connect opens the client and pings. Once every host of the URI has
// refused a dial the ping ends with that error (DialFailed sees it)
// instead of waiting out the driver's server selection (30 s): a first
// start against a wrong address fails at once, as the other sources'
// do, and a pipeline with a checkpoint retries it for
// source.outage_window (pkg/capture/reconnect.go); a dialer that refuses
// an address (the connection-test function's guard) refuses it every
// time. Later, a read of the stream ends the same way once every server
// the client has reached has refused for streamGrace (Stream), not after
// the server selection, with the time of the first refusal, where the
// outage's clock starts. A host that accepts and does not answer still
// takes the server selection's 30 s, and its timeout is retried as an
// outage.
func (d *Driver) Connect(ctx context.Context) error {
	o, err := d.cfg.Connection.clientOptions()
	if err != nil {
		return err
	}
	var seeds []string
	if p := d.cfg.Connection.parsed; p != nil && p.Scheme == connstring.SchemeMongoDB {
		seeds = p.Hosts
	}
	o.SetDialer(refusals(o.Dialer, seeds, func(err error, streak time.Duration) {
		if end := d.refused.Load(); end != nil {
			(*end)(err, streak)
		}
	}))
	c, err := mongo.Connect(o)
	if err != nil {
		return d.wrapErr("mongodb "+d.cfg.Connection.Redacted()+": ", err)
	}
	pingCtx, end := d.guard(ctx, 0)
	defer end()
	if err := c.Ping(pingCtx, nil); err != nil {
		_ = c.Disconnect(context.WithoutCancel(ctx))
		return d.wrapErr("mongodb "+d.cfg.Connection.Redacted()+": ", d.refusal(ctx, pingCtx, err))
	}
	d.client = c
	d.log.Info("connected", "url", d.cfg.Connection.Redacted())
	return nil
}

// guard is ctx ended early, with refusals' error as its cause, once every
// server has refused dials for grace; end releases it. One operation at a
// time is guarded: the ping, then the stream's reads.
func (d *Driver) guard(ctx context.Context, grace time.Duration) (_ context.Context, end func()) {
	gctx, cancel := context.WithCancelCause(ctx)
	lost := func(err error, streak time.Duration) {
		if streak >= grace {
			cancel(err)
		}
	}
	d.refused.Store(&lost)
	return gctx, func() {
		d.refused.CompareAndSwap(&lost, nil)
		cancel(nil)
	}
}

// streamGrace is how long every server refuses before a read of the
// stream ends: shorter outages (a blip, a quick restart) the driver rides
// out by itself, as it did before the reads ended early, while a longer
// one reaches the reconnect loop 10 s after the loss instead of after the
// driver's 30 s of server selection, dated from the loss.
const streamGrace = 10 * time.Second

// refusal is err, or the refused dial that ended the guarded gctx while
// ctx, its parent, goes on.
func (d *Driver) refusal(ctx, gctx context.Context, err error) error {
	if cause := context.Cause(gctx); ctx.Err() == nil && cause != nil && cause != gctx.Err() {
		return cause
	}
	return err
}

// refusals wraps base (a direct dialer when nil): while every address it
// knows has failed to dial, with no dial succeeding since, each failure
// calls lost with its error (a source.LostSince from the first of them)
// and how long the failures have gone on. It
// knows hosts (source.url's, host:port) and every address it has dialled
// once: a member the driver found by itself and never reached (a replica
// set's hosts beyond the URL's seeds) does not count, since one member
// down is not a deployment never reached, and a seed down does not count
// while a member reached before is still up.
func refusals(base options.ContextDialer, hosts []string, lost func(err error, streak time.Duration)) dialFunc {
	if base == nil {
		base = &net.Dialer{Timeout: 10 * time.Second}
	}
	known := map[string]bool{}
	for _, h := range hosts {
		known[seedAddr(h)] = true
	}
	var mu sync.Mutex
	failed := map[string]bool{}
	var since time.Time // the first failure since the last success
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := base.DialContext(ctx, network, addr)
		a := seedAddr(addr)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if since.IsZero() {
				since = time.Now()
			}
			if known[a] {
				failed[a] = true
			}
			if len(known) > 0 && len(failed) == len(known) {
				lost(&source.LostSince{At: since, Err: fmt.Errorf("no server of source.url could be dialled: %w", err)}, time.Since(since))
			}
		} else {
			known[a] = true
			clear(failed)
			since = time.Time{}
		}
		return c, err
	}
}

// seedAddr is a host of source.url, or an address the driver dials, as
// one spelling: lower case, with MongoDB's default port when it has none.
func seedAddr(h string) string {
	h = strings.ToLower(h)
	if _, _, err := net.SplitHostPort(h); err != nil {
		return net.JoinHostPort(strings.Trim(h, "[]"), "27017")
	}
	return h
}

// scrub is err's message with the password hidden.
func (d *Driver) scrub(err error) string {
	return scrub(err.Error(), d.cfg.Connection.URI, d.cfg.Connection.Password)
}

// wrapErr is err after prefix, its text scrubbed, its chain kept: the
// reconnect loop tells a refused dial or a timeout (retried, or "never
// reached" on a first start) from a server's refusal by it.
func (d *Driver) wrapErr(prefix string, err error) error {
	return &scrubbed{msg: prefix + d.scrub(err), err: err}
}

// Discover lists the captured collections, "db.collection", sorted.
// mongo-java-server lists a view as a collection (type "collection").
func (d *Driver) Discover(ctx context.Context) ([]string, error) {
	dbs, err := d.client.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		return nil, d.wrapErr("mongodb: listing databases: ", err)
	}
	var out []string
	for _, db := range dbs {
		if systemDatabase(db) {
			continue
		}
		// Collections only: a view (and a time-series collection) has
		// no change stream, so its rows would be snapshotted and its
		// changes never streamed.
		colls, err := d.client.Database(db).ListCollectionNames(ctx, bson.D{{Key: "type", Value: "collection"}})
		if err != nil {
			return nil, d.wrapErr("mongodb: listing collections of "+db+": ", err)
		}
		for _, c := range colls {
			if d.filter.Match(db, c) {
				out = append(out, db+"."+c)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// Fresh returns a cursor at the server's current operation time, taken
// before a snapshot starts: the stream then replays everything after it.
// The time comes from a session's operationTime, or, where the server has
// no sessions (mongo-java-server), from the newest oplog entry.
func (d *Driver) Fresh(ctx context.Context) (Cursor, error) {
	t, err := d.operationTime(ctx)
	if err != nil {
		return Cursor{}, err
	}
	return Cursor{OperationTime: t}, nil
}

// operationTime is the server's current operation time: a session's
// operationTime, else the newest oplog entry's.
func (d *Driver) operationTime(ctx context.Context) (bson.Timestamp, error) {
	if sess, err := d.client.StartSession(); err == nil {
		defer sess.EndSession(context.WithoutCancel(ctx))
		err := mongo.WithSession(ctx, sess, func(sc context.Context) error {
			return d.client.Database("admin").RunCommand(sc, bson.D{{Key: "ping", Value: 1}}).Err()
		})
		if err == nil {
			if t := sess.OperationTime(); t != nil && !t.IsZero() {
				return *t, nil
			}
		}
	}
	var last struct {
		TS bson.Timestamp `bson:"ts"`
	}
	err := d.client.Database("local").Collection("oplog.rs").
		FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "$natural", Value: -1}})).Decode(&last)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		// An empty oplog: every event to come is after time zero.
		return bson.Timestamp{T: 0, I: 1}, nil
	case err != nil:
		return bson.Timestamp{}, d.wrapErr("mongodb: reading the current operation time (the server answers no operationTime and the oplog is not readable): ", err)
	}
	return last.TS, nil
}

// Resume sets where Start opens the stream, and the set of collections
// the checkpoint recorded as captured.
func (d *Driver) Resume(c Cursor, captured []string) error {
	if c.IsZero() {
		return errors.New("mongodb: resume from an empty cursor; start fresh instead")
	}
	d.cursor = c
	d.captured = slices.Clone(captured)
	slices.Sort(d.captured)
	d.skipTo = bson.Timestamp{}
	if c.Token == nil {
		// Only a bare time needs the filter: after a token the server
		// itself resumes past the event, and the events of one
		// transaction share its clusterTime, so filtering by time there
		// would drop the rest of a transaction cut at a batch boundary.
		d.skipTo = c.OperationTime
	}
	return nil
}

// Start opens the change stream at the cursor given to Resume.
func (d *Driver) Start(ctx context.Context) error {
	if d.cursor.IsZero() {
		return errors.New("mongodb: Start before Resume")
	}
	if d.cfg.Scope == ScopeCollection {
		if len(d.captured) != 1 {
			return fmt.Errorf("mongodb: source.scope collection watches one collection; %d are captured (%s)", len(d.captured), strings.Join(d.captured, ", "))
		}
		d.watchDB, d.watchCol, _ = strings.Cut(d.captured[0], ".")
	}
	d.open = d.openStream
	d.exists = d.collectionExists
	s, err := d.open(ctx, d.cursor)
	if err != nil {
		return d.streamError("opening the change stream", err)
	}
	d.stream = s
	return nil
}

// openStream opens the server's change stream after c: startAfter an
// invalidate's token, resumeAfter any other token, else at c's operation
// time.
func (d *Driver) openStream(ctx context.Context, c Cursor) (changeStream, error) {
	o := options.ChangeStream().SetMaxAwaitTime(d.cfg.MaxAwait)
	if d.cfg.BatchSize > 0 {
		o.SetBatchSize(d.cfg.BatchSize)
	}
	switch d.cfg.CaptureMode {
	case ModeUpdateFull, ModeUpdateFullWithPreImage:
		o.SetFullDocument(options.UpdateLookup)
	}
	switch d.cfg.CaptureMode {
	case ModeUpdateFullWithPreImage, ModeChangeStreamsPreImage:
		o.SetFullDocumentBeforeChange(options.WhenAvailable)
	}
	switch {
	case c.Token != nil && c.StartAfter:
		o.SetStartAfter(c.Token)
	case c.Token != nil:
		o.SetResumeAfter(c.Token)
	default:
		// Inclusive: the events at this very time are dropped by Stream
		// (skipTo), as the cursor's time is already read.
		t := c.OperationTime
		o.SetStartAtOperationTime(&t)
	}
	split := d.cfg.SplitLargeEvents && !d.noSplit.Load()
	cs, err := d.watch(ctx, o, split)
	if split && unknownSplitStage(err) {
		// Before MongoDB 7.0 (and 6.0.9), and on servers that are not
		// MongoDB, no event is split: one over 16 MB stops the stream
		// there, as it would without the stage.
		d.noSplit.Store(true)
		d.log.Info("the server does not split change events over 16 MB ($changeStreamSplitLargeEvent, MongoDB 7.0+); streaming without it")
		cs, err = d.watch(ctx, o, false)
	}
	if err != nil {
		return nil, err
	}
	return serverStream{cs}, nil
}

// watch opens the change stream of the driver's scope with o; split ends
// its pipeline with $changeStreamSplitLargeEvent, which must come last.
func (d *Driver) watch(ctx context.Context, o *options.ChangeStreamOptionsBuilder, split bool) (*mongo.ChangeStream, error) {
	var pipeline mongo.Pipeline
	if d.cfg.Scope != ScopeCollection {
		pipeline = append(pipeline, bson.D{{Key: "$match", Value: bson.D{{Key: "ns.db", Value: bson.D{{Key: "$nin", Value: bson.A{"admin", "config", "local"}}}}}}})
	}
	if split {
		pipeline = append(pipeline, bson.D{{Key: "$changeStreamSplitLargeEvent", Value: bson.D{}}})
	}
	if d.cfg.Scope == ScopeCollection {
		return d.client.Database(d.watchDB).Collection(d.watchCol).Watch(ctx, pipeline, o)
	}
	return d.client.Watch(ctx, pipeline, o)
}

// unknownSplitStage reports a server's refusal of
// $changeStreamSplitLargeEvent as a stage it does not know (Location40324
// on MongoDB before 7.0 and on mongo-java-server).
func unknownSplitStage(err error) bool {
	var se mongo.ServerError
	return err != nil && (errors.As(err, &se) && se.HasErrorCode(40324) || strings.Contains(err.Error(), "$changeStreamSplitLargeEvent"))
}

// changeStream is what Stream reads: the server's change stream
// (serverStream), or a test's sequence of events.
type changeStream interface {
	TryNext(ctx context.Context) bool
	Err() error
	ID() int64
	ResumeToken() bson.Raw
	RemainingBatchLength() int
	Close(ctx context.Context) error
	current() bson.Raw
}

type serverStream struct{ *mongo.ChangeStream }

func (s serverStream) current() bson.Raw { return s.Current }

// streamError wraps a change-stream error; a lost resume point becomes
// ErrHistoryLost.
func (d *Driver) streamError(what string, err error) error {
	var se mongo.ServerError
	if errors.As(err, &se) && (se.HasErrorCode(286) || se.HasErrorCode(136)) {
		return fmt.Errorf("%w (%s: %s)", ErrHistoryLost, what, d.scrub(err))
	}
	return d.wrapErr("mongodb: "+what+": ", err)
}

// scrubbed is an error whose message has the password hidden while the
// chain below stays inspectable (errors.As finds the server error).
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// Stream reads the change stream into sink until ctx ends or an error.
// Each data event on a captured collection is a Change followed by a
// Commit at its resume token (a transaction's events are grouped when
// they arrive in one batch); an insert into the signal collection is a
// Watermark; an idle stream sends a Heartbeat when its token moves.
func (d *Driver) Stream(ctx context.Context, sink Sink) error {
	if d.stream == nil {
		return errors.New("mongodb: Stream before Start")
	}
	var j joiner
	lastBeat := d.cursor
	beatAgain := false
	// The reads end once every server has refused for streamGrace, not
	// after the driver's server selection; the sink's calls keep ctx,
	// since a refused dial is no failure of the pipeline's.
	rctx, end := d.guard(ctx, streamGrace)
	defer end()
	for {
		seq := d.markSeqNow()
		if !d.stream.TryNext(rctx) {
			if err := d.refusal(ctx, rctx, nil); err != nil {
				return d.wrapErr("mongodb: reading the change stream: ", err)
			}
			if err := d.stream.Err(); err != nil {
				return d.streamError("reading the change stream", err)
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			// The stream had nothing more: every event up to a mark
			// placed before this read was read.
			marked, err := d.flushMarks(ctx, sink, func(m timedMark) bool { return m.seq <= seq })
			if err != nil {
				return err
			}
			if d.stream.ID() == 0 {
				return errors.New("mongodb: the server closed the change stream")
			}
			moved := false
			if tok := d.stream.ResumeToken(); tok != nil && !bytesEqual(tok, lastBeat.Token) {
				lastBeat, moved = Cursor{Token: slices.Clone(tok)}, true
			}
			// A mark may have let the loop publish a chunk's rows: a
			// heartbeat after them ends that run of records (an
			// exactly-once transaction commits only at such an end)
			// and checkpoints the snapshot's progress, even where the
			// token stands still. One more follows at the next idle
			// read: a backfill request is cleared from the store only
			// once a position marked after the one its hand-over may
			// have raced with is saved (pkg/pipeline/backfillrequests.go),
			// and where the token stands still no other position comes.
			if moved || marked || beatAgain {
				if err := sink.Heartbeat(ctx, lastBeat); err != nil {
					return err
				}
			}
			beatAgain = marked
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d.cfg.IdlePause):
			case <-d.marked:
			}
			continue
		}
		raw, err := j.add(d.stream.current())
		if err != nil {
			return err
		}
		if raw == nil {
			continue
		}
		ev, err := decodeEvent(raw, d.watchDB, d.watchCol)
		if err != nil {
			return err
		}
		if !d.skipTo.IsZero() && !ev.ClusterTime.IsZero() && !ev.ClusterTime.After(d.skipTo) {
			continue
		}
		if !ev.ClusterTime.IsZero() {
			if _, err := d.flushMarks(ctx, sink, func(m timedMark) bool { return ev.ClusterTime.After(m.at) }); err != nil {
				return err
			}
		}
		cur := Cursor{Token: slices.Clone(ev.Token), OperationTime: ev.ClusterTime}
		switch {
		case ev.Namespace() == d.cfg.SignalCollection && ev.Op == OpInsert:
			id, ok := ev.Key.StringValueOK()
			if !ok {
				return fmt.Errorf("mongodb: watermark in %s with a non-string _id", d.cfg.SignalCollection)
			}
			if err := sink.Watermark(ctx, id); err != nil {
				return err
			}
		case ev.KeyLost():
			d.log.Warn("update event without its document's _id (the document was gone by the lookup); skipped: the delete that removed it follows",
				"collection", ev.Namespace())
		case ev.IsData() && d.filter.Match(ev.DB, ev.Collection):
			// A collection not in the captured set was created while
			// streaming, or dropped and created again: captured from its
			// first document, which the stream carries.
			if err := d.join(ctx, sink, ev.Namespace()); err != nil {
				return err
			}
			if err := sink.Change(ctx, ev); err != nil {
				return err
			}
			if ev.TxnNumber != nil && d.stream.RemainingBatchLength() > 0 {
				continue
			}
		case ev.Op == OpDrop || ev.Op == OpRename || ev.Op == OpDropDatabase:
			if err := d.collectionEvent(ctx, sink, ev); err != nil {
				return err
			}
		case ev.Op == OpInvalidate:
			// The server ends the stream after this: a collection stream
			// after its collection was dropped or renamed, a database
			// stream after its database was dropped. The drop or rename
			// before it was handled; a new stream opens after it
			// (startAfter), which on a collection stream carries that
			// collection again once it is created anew.
			// A collection there now stays: created anew after the drop,
			// its documents are all in the stream opened after this
			// (mongo-java-server also answers every later resume on a
			// collection dropped before it with an invalidate, which must
			// not take it out and have it snapshotted again).
			if d.cfg.Scope == ScopeCollection {
				there := false
				if d.exists != nil {
					var err error
					if there, err = d.exists(ctx, d.watchDB, d.watchCol); err != nil {
						return d.streamError("looking up the watched collection after an invalidate", err)
					}
				}
				if !there {
					if err := d.leave(ctx, sink, []string{d.watchDB + "." + d.watchCol}, nil); err != nil {
						return err
					}
				}
			}
			cur.StartAfter = true
			if err := sink.Commit(ctx, cur); err != nil {
				return err
			}
			lastBeat = cur
			d.log.Info("change stream invalidated (its collection or database was dropped or renamed); opening a new one after it", "resume_token", ev.Token.String())
			if err := d.reopen(ctx, cur); err != nil {
				return err
			}
			j = joiner{}
			continue
		}
		lastBeat = cur
		if err := sink.Commit(ctx, cur); err != nil {
			return err
		}
	}
}

// join adds ns to the captured set when it is not there yet.
func (d *Driver) join(ctx context.Context, sink Sink, ns string) error {
	i, found := slices.BinarySearch(d.captured, ns)
	if found {
		return nil
	}
	d.captured = slices.Insert(d.captured, i, ns)
	d.log.Info("collection joined the captured set: captured from its first document", "collection", ns)
	return sink.Captured(ctx, slices.Clone(d.captured), nil, nil)
}

// leave takes gone out of the captured set and puts added in (documents
// the stream never carried under that name, to be snapshotted), telling
// sink when the set changed.
func (d *Driver) leave(ctx context.Context, sink Sink, gone, added []string) error {
	var left []string
	for _, ns := range gone {
		if i, found := slices.BinarySearch(d.captured, ns); found {
			d.captured = slices.Delete(d.captured, i, i+1)
			left = append(left, ns)
		}
	}
	for _, ns := range added {
		if i, found := slices.BinarySearch(d.captured, ns); !found {
			d.captured = slices.Insert(d.captured, i, ns)
		}
	}
	if len(left) == 0 && len(added) == 0 {
		return nil
	}
	return sink.Captured(ctx, slices.Clone(d.captured), added, left)
}

// collectionEvent handles a drop, rename or dropDatabase as the
// relational sources handle a dropped or renamed table: a captured
// collection dropped, renamed away or in a dropped database leaves the
// captured set (its snapshot, if one is under way, ends); a collection
// renamed onto a captured name joins it, and its documents, which the
// stream carried under the old name, are snapshotted.
func (d *Driver) collectionEvent(ctx context.Context, sink Sink, ev Event) error {
	var gone, added []string
	switch ev.Op {
	case OpDrop:
		if ev.nsMissing && d.cfg.Scope == ScopeCollection && d.exists != nil {
			// mongo-java-server's drop names no collection, and its
			// collection stream carries the drops of every collection of
			// the database: the watched one is gone only if it is not there.
			there, err := d.exists(ctx, d.watchDB, d.watchCol)
			if err != nil {
				return d.streamError("looking up the watched collection after a drop", err)
			}
			if there {
				d.log.Info("a drop without a collection name while the watched collection exists: another collection of its database; ignored",
					"collection", ev.Namespace())
				return nil
			}
		}
		gone = []string{ev.Namespace()}
	case OpDropDatabase:
		db := ev.DB
		if db == "" {
			db = d.watchDB
		}
		for _, ns := range d.captured {
			if strings.HasPrefix(ns, db+".") {
				gone = append(gone, ns)
			}
		}
	case OpRename:
		gone = []string{ev.Namespace()}
		if ev.ToDB != "" && ev.ToCollection != "" {
			to := ev.ToDB + "." + ev.ToCollection
			if d.filter.Match(ev.ToDB, ev.ToCollection) {
				// dropTarget: a captured collection of that name is
				// replaced, and a snapshot of it ends.
				gone = append(gone, to)
				added = []string{to}
			}
		}
	}
	for _, ns := range gone {
		if slices.Contains(d.captured, ns) {
			d.log.Warn("captured collection dropped or renamed away: no longer published", "op", string(ev.Op), "collection", ns)
		}
	}
	for _, ns := range added {
		d.log.Info("collection renamed into the captured set: its documents are snapshotted", "collection", ns, "from", ev.Namespace())
	}
	return d.leave(ctx, sink, gone, added)
}

// collectionExists says whether db.coll is there now.
func (d *Driver) collectionExists(ctx context.Context, db, coll string) (bool, error) {
	names, err := d.client.Database(db).ListCollectionNames(ctx, bson.D{{Key: "name", Value: coll}})
	if err != nil {
		return false, err
	}
	return slices.Contains(names, coll), nil
}

// reopen closes the stream and opens a new one after c.
func (d *Driver) reopen(ctx context.Context, c Cursor) error {
	_ = d.stream.Close(ctx)
	d.stream = nil
	s, err := d.open(ctx, c)
	if err != nil {
		return d.streamError("opening the change stream after an invalidate", err)
	}
	d.stream, d.cursor = s, c
	return nil
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// Acknowledge records that everything up to c is durably delivered.
// MongoDB keeps no per-reader position on the server (the oplog window is
// time-based), so nothing is sent.
func (d *Driver) Acknowledge(c Cursor) { d.acked = c }

// Retriable reports whether reopening the stream from the last cursor may
// succeed: network errors, timeouts, and server errors labelled
// ResumableChangeStreamError or RetryableError; never a lost resume point.
func (d *Driver) Retriable(err error) bool {
	if err == nil || errors.Is(err, ErrHistoryLost) {
		return false
	}
	if mongo.IsNetworkError(err) || mongo.IsTimeout(err) {
		return true
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		if se.HasErrorCode(286) || se.HasErrorCode(136) || se.HasErrorCode(280) {
			return false
		}
		return se.HasErrorLabel("ResumableChangeStreamError") || se.HasErrorLabel("RetryableError") ||
			se.HasErrorLabel("RetryableWriteError")
	}
	return false
}

// Close ends the stream and the client.
func (d *Driver) Close(ctx context.Context) error {
	var errs []error
	if d.stream != nil {
		errs = append(errs, d.stream.Close(ctx))
		d.stream = nil
	}
	if d.client != nil {
		errs = append(errs, d.client.Disconnect(ctx))
		d.client = nil
	}
	return errors.Join(errs...)
}

// MarkAt places the watermark id at the server's current operation time:
// the stream hands it to its sink's Watermark after every event at or
// before that time, and before any later one. Unlike WriteWatermark it
// writes nothing, so it works on a stream of one collection too.
func (d *Driver) MarkAt(ctx context.Context, id string) error {
	at, err := d.operationTime(ctx)
	if err != nil {
		return err
	}
	d.marksMu.Lock()
	d.markSeq++
	d.marks = append(d.marks, timedMark{id: id, at: at, seq: d.markSeq})
	d.marksMu.Unlock()
	select {
	case d.marked <- struct{}{}:
	default: // a wake-up is pending already
	}
	return nil
}

func (d *Driver) markSeqNow() uint64 {
	d.marksMu.Lock()
	defer d.marksMu.Unlock()
	return d.markSeq
}

// flushMarks hands the marks met (met true) to sink, in the order they
// were placed, and says whether it handed any.
func (d *Driver) flushMarks(ctx context.Context, sink Sink, met func(timedMark) bool) (bool, error) {
	d.marksMu.Lock()
	var due []timedMark
	rest := d.marks[:0]
	for _, m := range d.marks {
		if met(m) {
			due = append(due, m)
		} else {
			rest = append(rest, m)
		}
	}
	d.marks = rest
	d.marksMu.Unlock()
	for _, m := range due {
		if err := sink.Watermark(ctx, m.id); err != nil {
			return false, err
		}
	}
	return len(due) > 0, nil
}
