package mongodb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// Source is the driver the capture loop runs (capture.Database): a Driver
// whose stream goes to the loop's source.Stream, whose snapshots the
// loop's engine reads in _id order, placing their watermarks by operation
// time (MarkAt), and whose cursor is the Cursor JSON.
type Source struct {
	opts source.Options
	d    *Driver
	name string // the topic prefix, source.name
	// fields is field.exclude.list and field.renames (source.exclude_columns,
	// source.rename_fields).
	fields *FieldSelector

	mu     sync.Mutex
	tables map[string]*change.Table // by "db.collection"
	found  []string                 // Discover's
	// listedAt is where a fresh start streams from: the server's time
	// before Discover listed the collections (zero: not read).
	listedAt Cursor
}

// New makes the driver of a mongodb source; it does not connect yet.
// source.tables and source.exclude_tables are Debezium's
// collection.include.list and collection.exclude.list: regular
// expressions on "database.collection".
func New(_ context.Context, opts source.Options) (*Source, error) {
	c := opts.Config
	cfg := Config{
		Connection: Connection{URI: c.URL, CAPEM: pemOrNil(c.CACertificate),
			CertPEM: pemOrNil(c.ClientCertificate), KeyPEM: pemOrNil(c.ClientKey), Dial: source.Dial(opts.Dial)},
		Include: c.Tables, Exclude: c.ExcludeTables, CaptureMode: config.SettingsOf[Settings](c).CaptureMode,
		SplitLargeEvents: true, Logger: opts.Log(),
	}
	d, err := NewDriver(cfg)
	if err != nil {
		return nil, err
	}
	fields, err := NewFieldSelector(c.ExcludeColumns, config.SettingsOf[Settings](c).RenameFields)
	if err != nil {
		return nil, err
	}
	return &Source{opts: opts, d: d, name: opts.TopicPrefix, tables: map[string]*change.Table{}, fields: fields}, nil
}

// shownID is a document's _id as an error names it: extended JSON, cut
// at 200 bytes (an _id may be a large document).
func shownID(id bson.RawValue) string {
	s := id.String()
	if len(s) > 200 {
		return strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

func pemOrNil(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// table is the document table of ns, one per collection for the Source's
// lifetime (the encoder keeps one codec per table).
func (s *Source) table(db, coll string) *change.Table {
	ns := db + "." + coll
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tables[ns]
	if !ok {
		t = newTable(db, coll)
		s.tables[ns] = t
	}
	return t
}

// Connect implements capture.Database.
func (s *Source) Connect(ctx context.Context) error {
	_ = s.d.Close(ctx)
	return s.d.Connect(ctx)
}

// Discover implements capture.Database: the collections the selection
// matches now.
func (s *Source) Discover(ctx context.Context) ([]string, error) {
	// A fresh start streams from before the listing (Fresh): a collection
	// created between the listing and the start of the stream has its
	// first documents in the stream, which captures it from them; after
	// the listing's time they would be in neither. Where the time cannot
	// be read here, Fresh reads it.
	s.listedAt = Cursor{}
	if c, err := s.d.Fresh(ctx); err == nil {
		s.listedAt = c
	}
	found, err := s.d.Discover(ctx)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		s.opts.Log().Warn("no collection matches source.tables yet; collections created later are captured only with a cluster-wide change stream")
	}
	s.found = found
	return found, nil
}

// Resume implements capture.Database.
func (s *Source) Resume(_ context.Context, from source.Checkpoint, _ source.Stream) ([]string, error) {
	c, err := DecodeCursor(from.Cursor)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var captured []string
	if len(from.Captured) > 0 {
		if err := json.Unmarshal(from.Captured, &captured); err != nil {
			return nil, fmt.Errorf("checkpoint: the captured collections: %w", err)
		}
	}
	var added []string
	for _, t := range s.found {
		if !slices.Contains(captured, t) {
			added = append(added, t)
		}
	}
	return added, s.d.Resume(c, s.found)
}

// Fresh implements capture.Database: the stream starts at the server's
// operation time now, taken before any snapshot reads.
func (s *Source) Fresh(ctx context.Context, _ bool) error {
	c := s.listedAt
	if c.IsZero() {
		var err error
		if c, err = s.d.Fresh(ctx); err != nil {
			return err
		}
	}
	return s.d.Resume(c, s.found)
}

// Start implements capture.Database. A server without cluster-wide
// change streams (CommandNotFound) watches its one captured collection
// instead.
func (s *Source) Start(ctx context.Context, st source.Stream) error {
	err := s.d.Start(ctx)
	var se mongo.ServerError
	if err != nil && s.d.cfg.Scope == ScopeCluster && errors.As(err, &se) && se.HasErrorCode(59) {
		if len(s.d.captured) != 1 {
			return fmt.Errorf("mongodb: the server has no cluster-wide change streams (a standalone or test server), so a pipeline captures exactly one collection there; source.tables selects %d (%s)",
				len(s.d.captured), strings.Join(s.d.captured, ", "))
		}
		s.opts.Log().Warn("the server has no cluster-wide change streams; watching the one captured collection: a collection created later that source.tables selects is not captured, and the next start refuses the selection",
			"collection", s.d.captured[0])
		s.d.cfg.Scope = ScopeCollection
		err = s.d.Start(ctx)
	}
	if err != nil {
		return s.lost(err)
	}
	if err := captured(st, s.d.captured); err != nil {
		return err
	}
	cur, err := json.Marshal(s.d.cursor)
	if err != nil {
		return err
	}
	return st.Heartbeat(ctx, cur)
}

// captured tells st the captured set, as the checkpoint records it (a
// JSON array of "db.collection", never null).
func captured(st source.Stream, set []string) error {
	record, err := json.Marshal(set)
	if err != nil {
		return err
	}
	if record == nil || string(record) == "null" {
		record = []byte("[]")
	}
	st.Captured(record, slices.Clone(set))
	return nil
}

// lost is err, marked as needing a new snapshot when the resume point is
// gone.
func (s *Source) lost(err error) error {
	if errors.Is(err, ErrHistoryLost) {
		return fmt.Errorf("%w: %w", source.ErrResnapshotRequired, err)
	}
	return err
}

// Stream implements capture.Database.
func (s *Source) Stream(ctx context.Context, st source.Stream) error {
	return s.lost(s.d.Stream(ctx, &sink{s: s, st: st}))
}

// sink turns the Driver's stream into the loop's.
type sink struct {
	s  *Source
	st source.Stream
}

func (k *sink) Change(ctx context.Context, e Event) error {
	if err := k.s.fields.For(e.DB, e.Collection).Event(&e); err != nil {
		return fmt.Errorf("%s.%s: the document of _id %s: %w", e.DB, e.Collection, shownID(e.Key), err)
	}
	ev := new(change.Event)
	changeEvent(ev, k.s.table(e.DB, e.Collection), e, k.s.name)
	return k.st.Change(ctx, ev)
}

func (k *sink) Commit(ctx context.Context, c Cursor) error {
	cur, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return k.st.Commit(ctx, cur, int64(c.OperationTime.T)*1000000)
}

// Captured tells the loop: a gone collection's snapshot ends, the new
// set is recorded with the next cursor, and the added collections'
// documents are snapshotted (after the end of any snapshot of the one
// of that name that was gone).
func (k *sink) Captured(_ context.Context, set, added, gone []string) error {
	for _, ns := range gone {
		k.st.Gone(ns)
	}
	if err := captured(k.st, set); err != nil {
		return err
	}
	if len(added) > 0 {
		k.st.Added(slices.Clone(added))
	}
	return nil
}

func (k *sink) Watermark(ctx context.Context, id string) error { return k.st.Watermark(ctx, id) }

func (k *sink) Heartbeat(ctx context.Context, c Cursor) error {
	cur, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return k.st.Heartbeat(ctx, cur)
}

// Acknowledge implements capture.Database.
func (s *Source) Acknowledge(cursor change.Position) {
	if c, err := DecodeCursor(cursor); err == nil {
		s.d.Acknowledge(c)
	}
}

// Retriable implements capture.Database.
func (s *Source) Retriable(err error) bool {
	return s.d.Retriable(err) || !errors.Is(err, source.ErrResnapshotRequired) && source.NetworkRetriable(err)
}

// Close implements capture.Database.
func (s *Source) Close() error { return s.d.Close(context.Background()) }

// ChunkRows is the rows of a MongoDB snapshot chunk while the stream is
// idle (snapshot.Config.DefaultChunkRows), four times the relational
// sources': each chunk costs a query and a watermark that the change
// stream meets only at its next poll, and a server without a range index
// on _id (mongo-java-server) scans and sorts the whole collection for
// every chunk. The engine still bounds a chunk by snapshot.ChunkBytes.
const ChunkRows = 4 * snapshot.ChunkRows

// Snapshots implements capture.Database: _id-order chunks, watermarks by
// operation time.
func (s *Source) Snapshots() (snapshot.Database, snapshot.Config) {
	return snapDB{s}, snapshot.Config{
		DefaultChunkRows: ChunkRows,
		IDPrefix:         "mg",
		TableName:        func(id change.TableID) string { return id.DB + "." + id.Name },
		Log:              s.opts.Log(),
	}
}

type snapDB struct{ s *Source }

func (db snapDB) Session(context.Context) (snapshot.Session, error) { return snapSession{db.s}, nil }

type snapSession struct{ s *Source }

// ReadChunk implements snapshot.Session: limit documents of table after
// the _id after, in _id order, read at the operation time of now.
func (ss snapSession) ReadChunk(ctx context.Context, table string, after, _ snapshot.Key, limit int) ([]snapshot.Row, error) {
	db, coll, ok := strings.Cut(table, ".")
	if !ok {
		return nil, fmt.Errorf("mongodb: collection %q: want database.collection", table)
	}
	var from bson.RawValue
	if len(after) == 1 && len(after[0]) > 0 {
		from = bson.RawValue{Type: bson.Type(after[0][0]), Value: after[0][1:]}
	}
	at, err := ss.s.d.operationTime(ctx)
	if err != nil {
		return nil, err
	}
	t := ss.s.table(db, coll)
	rows := make([]snapshot.Row, 0, min(limit, 1024))
	var fill snapshot.ChunkFill
	_, err = ss.s.d.Snapshots().EachInChunk(ctx, table, from, limit, func(raw bson.Raw) (bool, error) {
		doc := slices.Clone(raw)
		ev, _, err := readEvent(t, doc, at, ss.s.name)
		if err != nil {
			return false, err
		}
		// The key is the document's own _id; the value the filtered document.
		filtered, err := ss.s.fields.For(db, coll).Document(doc)
		if err != nil {
			return false, fmt.Errorf("%s.%s: the document of _id %s: %w", db, coll, shownID(doc.Lookup("_id")), err)
		}
		ev.After[colDocument] = docValue(filtered)
		rows = append(rows, snapshot.Row{Key: snapshot.Key{ev.After[colID].Bytes}, Event: ev})
		// Past snapshot.ChunkBytes the chunk ends: the next reads on
		// after the last document kept.
		fill.Keep(rows[len(rows)-1])
		return !fill.Full(), nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// Split implements snapshot.Session: a collection is read as one range.
func (snapSession) Split(context.Context, string, snapshot.Key, int64, int) ([]snapshot.Key, error) {
	return nil, nil
}

// WriteWatermark implements snapshot.Session.
func (ss snapSession) WriteWatermark(ctx context.Context, mark string) error {
	return ss.s.d.MarkAt(ctx, mark)
}

// Estimate implements snapshot.Session.
func (ss snapSession) Estimate(ctx context.Context, table string) (int64, error) {
	db, coll, _ := strings.Cut(table, ".")
	n, err := ss.s.d.client.Database(db).Collection(coll).EstimatedDocumentCount(ctx)
	if err != nil {
		return 0, nil
	}
	return n, nil
}

// RowBytes implements snapshot.Sizer: the collection's average document
// size from collStats (its size over its count where the server gives
// no avgObjSize), with what a read row adds to the document (its _id's
// copy and a few words for each value); 0 when the server does not say
// (an empty collection, or a user without the collStats action), and
// the first chunk is then a small one.
func (ss snapSession) RowBytes(ctx context.Context, table string) (int, error) {
	db, coll, _ := strings.Cut(table, ".")
	var st struct {
		Avg   float64 `bson:"avgObjSize"`
		Size  float64 `bson:"size"`
		Count float64 `bson:"count"`
	}
	err := ss.s.d.client.Database(db).RunCommand(ctx, bson.D{{Key: "collStats", Value: coll}}).Decode(&st)
	if err != nil {
		return 0, nil
	}
	if st.Avg <= 0 && st.Count > 0 {
		st.Avg = st.Size / st.Count
	}
	if !(st.Avg > 0) { // NaN as well
		return 0, nil
	}
	return int(min(st.Avg, maxDocumentBytes)) + rowOverhead, nil
}

// maxDocumentBytes is the largest BSON document a server stores: no
// average is larger.
const maxDocumentBytes = 16 << 20

// rowOverhead is what a read row holds beside its document: the _id's
// copy (12 bytes for an ObjectId) and snapshot.RowBytes' words for each
// of its values.
const rowOverhead = 12 + nCols*16

func (snapSession) Close() error { return nil }
