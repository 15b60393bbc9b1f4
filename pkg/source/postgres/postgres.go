// Package postgres is the PostgreSQL driver of the capture loop
// (pkg/capture, capture.Database): it streams changes from a pgoutput
// logical replication slot, resuming from the slot's confirmed LSN, and
// reads the chunks and writes the watermarks (pg_logical_emit_message) of
// the snapshots taken while it streams (pkg/snapshot).
//
// Promises: the slot's confirmed flush LSN only moves to positions the
// pipeline has acknowledged (Ack); a missing or lost slot after a
// checkpoint fails with "resnapshot required" rather than silently
// starting from now.
package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// Source reads one PostgreSQL database.
type Source struct {
	opts    source.Options
	connCfg *pgx.ConnConfig
	slot    string
	pub     string

	conn   *pgx.Conn // catalog queries
	repl   *pgconn.PgConn
	acked  atomic.Uint64 // LSN the pipeline has durably checkpointed
	marked uint64        // LSN of the last position emitted by stream
	// lastCommit is where the stream's last commit was written (its end
	// LSN): the first element of source.sequence, as Debezium's
	// lastCommitLsn; 0 (null) until one is known.
	lastCommit uint64
	// initialOnlySlot: the slot was made by a run of snapshot_mode
	// initial_only, and no run of another mode has read it since
	// (position.InitialOnly).
	initialOnlySlot bool
	tables          map[uint32]*change.Table
	rels            map[uint32]*relation

	// captured maps each captured table's OID to its schema.table name:
	// the tables whose every row is published and whose streamed changes
	// are; CapturedSet is its encoding for positions. sel is the table
	// and column selection (source.tables, exclude_tables,
	// exclude_columns, mask_columns). missing remembers what was already
	// warned about.
	captured map[uint32]string
	source.CapturedSet
	sel          *config.Selection
	missing      map[string]bool
	nextDiscover time.Time
	// goneAt holds the captured tables that were dropped, each with the
	// WAL position up to which changes to it may still stream; typeNames
	// the names pgoutput's Type messages gave type OIDs (dropped.go).
	goneAt    map[uint32]uint64
	typeNames map[uint32]string
	// dropped and fullKeys are position.Dropped and position.FullKeys of
	// the captured set; restoredKeys is FullKeys of the checkpoint Run
	// resumed from, the keys of tables dropped while stopped.
	dropped      map[uint32]string
	fullKeys     map[uint32][]string
	restoredKeys map[uint32][]string

	// snapTables is what the snapshot workers read of the tables (see
	// snapshotTable); streamLSN the last position the stream emitted, for
	// the lsn of read rows.
	snapMu     sync.Mutex
	snapTables map[string]snapTable
	streamLSN  atomic.Uint64
	// streamSlabs holds the streamed events, their rows and the copies of
	// the messages their values alias (row, stream.go).
	streamSlabs snapshot.Slabs

	// What the current attempt of the capture loop found: the slot, the
	// selected tables and the publication (Connect, Discover),
	// the checkpoint's position and LSN (Resume), and where streaming
	// starts (start).
	slotState slotState
	selected  []*relation
	pubState  publicationState
	from      position
	start     uint64
}

// New parses the connection settings; it does not connect yet.
func New(_ context.Context, opts source.Options) (*Source, error) {
	cfg, err := pgx.ParseConfig(opts.Config.URL)
	if err != nil {
		// pgx errors may quote the URL; keep the secret out of the message.
		return nil, errors.New("source.url: not a valid PostgreSQL connection URL")
	}
	if err := applyTLS(cfg, &opts.Config); err != nil {
		return nil, err
	}
	sel, err := opts.Config.Selection()
	if err != nil {
		return nil, err
	}
	// Text output the decoders expect, whatever the server's defaults.
	// pgconn dials every host and fallback through DialFunc: with
	// keepalive and a user timeout, a connection whose packets vanish is
	// found dead (source.Dial).
	cfg.DialFunc = pgconn.DialFunc(source.Dial(opts.Dial))
	cfg.RuntimeParams["TimeZone"] = "UTC"
	cfg.RuntimeParams["DateStyle"] = "ISO, YMD"
	cfg.RuntimeParams["IntervalStyle"] = "iso_8601"
	cfg.RuntimeParams["bytea_output"] = "hex"
	cfg.RuntimeParams["extra_float_digits"] = "3"
	cfg.RuntimeParams["application_name"] = "tributary"
	s := &Source{
		opts:     opts,
		connCfg:  cfg,
		slot:     settingsOf(opts).Slot,
		pub:      settingsOf(opts).Publication,
		tables:   map[uint32]*change.Table{},
		rels:     map[uint32]*relation{},
		captured: map[uint32]string{},
		sel:      sel,
		missing:  map[string]bool{},

		snapTables: map[string]snapTable{},
	}
	return s, nil
}

// Snapshots implements capture.Database: chunk reads and watermarks in
// the WAL (snapshot.go).
func (s *Source) Snapshots() (snapshot.Database, snapshot.Config) {
	return pgSnapshots{s}, snapshot.Config{
		IDPrefix:  "pg",
		TableName: func(id change.TableID) string { return id.Schema + "." + id.Name },
		Log:       s.opts.Log(),
	}
}

// Connect implements capture.Database: the catalog connection, the
// prerequisites, the slot (another live reader of it is refused here,
// before anything changes on the server: see takeSlot), and the
// replication connection.
func (s *Source) Connect(ctx context.Context) error {
	s.Close() // a reconnect runs the loop again: drop the lost connections
	s.from, s.start, s.lastCommit = position{}, 0, 0
	conn, err := pgx.ConnectConfig(ctx, s.connCfg)
	if err != nil {
		return fmt.Errorf("connect to postgres: %w", err)
	}
	s.conn = conn
	if err := checkPrerequisites(ctx, conn); err != nil {
		return err
	}
	if s.slotState, err = lookupSlot(ctx, conn, s.slot); err != nil {
		return err
	}
	if s.slotState.elsewhere != "" {
		// Another pipeline's (slot names are server-wide): never read,
		// taken over or dropped in this pipeline's name.
		return fmt.Errorf("replication slot %s is %s, not of this one (slot names are server-wide: another pipeline's, of the same name on another database?); "+
			"give this pipeline another source.slot", s.slot, s.slotState.elsewhere)
	}
	if s.slotState.exists {
		if err := s.takeSlot(ctx, s.slot); err != nil {
			return err
		}
		// The holder waited for or ended may have been creating the
		// slot: looked at again, it may be gone or consistent now.
		if s.slotState, err = lookupSlot(ctx, conn, s.slot); err != nil {
			return err
		}
	}
	replCfg := s.connCfg.Config.Copy()
	replCfg.RuntimeParams["replication"] = "database"
	if s.repl, err = pgconn.ConnectConfig(ctx, replCfg); err != nil {
		return fmt.Errorf("open replication connection: %w", err)
	}
	return nil
}

// Discover implements capture.Database: the selected tables, which the
// publication is brought in line with; they are the captured set from
// here on.
func (s *Source) Discover(ctx context.Context) ([]string, error) {
	rels, missing, err := selectedTables(ctx, s.conn, s.sel)
	if err != nil {
		return nil, err
	}
	for _, p := range s.sel.Unmatched(names(rels)) {
		s.opts.Log().Warn("source.tables: the regular expression matches no table; tables that match it are captured when they are created", "pattern", p)
	}
	for _, t := range missing {
		// As Debezium treats include-list entries that match nothing: a
		// warning, so a dropped or renamed table does not block every
		// restart. It is captured (and backfilled) if it appears.
		s.missing[t] = true
		s.opts.Log().Warn("source.tables: table not found (dropped or renamed?); it is captured if it appears", "table", t)
	}
	s.reportMissing()
	if len(rels) == 0 && len(missing) > 0 && !s.slotState.exists {
		// A first start (no slot yet) whose list names only tables that
		// do not exist: a misspelling, most likely. Refused before the
		// slot and the publication are made, as on MySQL; a restart
		// keeps following a list whose tables were dropped since.
		return nil, s.nothingToCapture(ctx, missing)
	}
	if rels, err = s.identified(rels, true); err != nil {
		return nil, err
	}
	if s.pubState, err = reconcilePublication(ctx, s.conn, s.opts.Log(), s.opts.Pipeline, s.pub, rels); err != nil {
		return nil, err
	}
	s.selected = rels
	return names(rels), nil
}

// resume reads the checkpoint's cursor, which must stream from the slot
// the config names.
func (s *Source) resume(ctx context.Context, from change.Position) error {
	pos, start, err := decodePosition(from)
	if err != nil {
		return err
	}
	if pos.Slot != s.slot {
		s.dropAbandoned(ctx, pos.Slot)
		return fmt.Errorf("the checkpoint belongs to replication slot %s, the config names %s: %w", pos.Slot, s.slot, source.ErrResnapshotRequired)
	}
	// The checkpoint's LSN is the end of the last transaction it holds,
	// or Commit says where the last one with changes ended.
	s.from, s.start, s.lastCommit = pos, start, start
	s.initialOnlySlot = pos.InitialOnly && s.opts.Config.Snapshot() == config.SnapshotInitialOnly
	if c, err := parseLSN(pos.Commit); err == nil && pos.Commit != "" {
		s.lastCommit = c
	}
	return nil
}

// Legacy implements capture.Legacy: a backfill of an earlier release,
// unfinished, whose slot still starts at its consistent point, is read on
// from its last key while streaming from there.
func (s *Source) Legacy(ctx context.Context, cursor change.Position, _ []string) (snapshot.State, bool, error) {
	if err := s.resume(ctx, cursor); err != nil {
		return snapshot.State{}, false, err
	}
	slot, pos := s.slotState, s.from
	if pos.Backfill == nil || !slot.exists || slot.lost || slot.confirmedLSN > s.start {
		return snapshot.State{}, false, nil
	}
	s.opts.Log().Info("resuming the backfill", "slot", s.slot, "lsn", formatLSN(s.start), "table", pos.Backfill.Table, "rows", pos.Backfill.Rows)
	s.setCaptured(s.selected)
	s.raiseAcked(slot.confirmedLSN)
	return legacyState(pos.Backfill, s.selected), true, nil
}

// Fresh implements capture.Database.
func (s *Source) Fresh(ctx context.Context, checkpointed bool) error {
	slot := s.slotState
	if !checkpointed && slot.exists && slot.consistent && !slot.lost && slot.plugin == "pgoutput" {
		// The slot outlived its checkpoint: a start killed before its
		// first save (pkg/pipeline saves the start position before any
		// record), or a checkpoint store lost or replaced. The slot's
		// confirmed position only moves once a checkpoint holds it, so no
		// change after it was acknowledged: stream from there (never from
		// now, which would lose what changed since) and backfill every
		// table again.
		s.start = slot.confirmedLSN
		s.opts.Log().Info("no checkpoint, but the replication slot exists: streaming from its confirmed position and backfilling every table",
			"slot", s.slot, "lsn", formatLSN(s.start))
		s.setCaptured(s.selected)
		s.raiseAcked(slot.confirmedLSN)
		s.initialOnlySlot = s.opts.Config.Snapshot() == config.SnapshotInitialOnly
		return nil
	}
	// No usable stream position yet: take a fresh slot and snapshot
	// every table while streaming from its consistent point.
	start, err := s.freshStart(ctx, slot)
	if err != nil {
		return err
	}
	s.start = start
	s.setCaptured(s.selected)
	// A slot created just now: its consistent point is checkpointed.
	s.acked.Store(start)
	s.initialOnlySlot = s.opts.Config.Snapshot() == config.SnapshotInitialOnly
	return nil
}

// Resume implements capture.Database: the checkpoint must stream from the
// slot the config names, which must still hold its changes; tables
// selected since are added, and captured tables dropped while stopped are
// followed.
func (s *Source) Resume(ctx context.Context, from source.Checkpoint, st source.Stream) ([]string, error) {
	s.TellCaptured(st)
	if err := s.resume(ctx, from.Cursor); err != nil {
		return nil, err
	}
	if from.Captured != nil {
		if _, err := decodeTables(from.Captured); err != nil {
			return nil, fmt.Errorf("postgres position: tables: %w", err)
		}
	}
	slot, pos := s.slotState, s.from
	switch {
	case !slot.exists && s.opts.Config.Snapshot() == config.SnapshotInitialOnly && from.SnapshotsDone:
		// The slot a finished initial_only run dropped (FinishBackfilled):
		// this run stops at its first position, streaming nothing.
		return nil, nil
	case !slot.exists:
		return nil, fmt.Errorf("replication slot %s does not exist on this server, but the checkpoint streams from it: "+
			"the slot was dropped (a run of snapshot_mode initial_only drops it when the backfill ends), "+
			"or this is a new primary after a failover that did not carry the slot over "+
			"(RDS Multi-AZ, Aurora, or PostgreSQL without failover slots, which PostgreSQL 17 adds); "+
			"the changes since the checkpoint are kept nowhere this pipeline can read them "+
			"(snapshot_mode when_needed backfills every table again from a new slot): %w", s.slot, source.ErrResnapshotRequired)
	case slot.lost:
		return nil, fmt.Errorf("replication slot %s lost WAL it still needed: %w", s.slot, source.ErrResnapshotRequired)
	case slot.confirmedLSN > s.start:
		return nil, fmt.Errorf("replication slot %s confirmed %s, beyond the checkpoint %s: %w",
			s.slot, formatLSN(slot.confirmedLSN), formatLSN(s.start), source.ErrResnapshotRequired)
	}
	added := s.addedSince(from.Captured)
	if err := s.followDropped(ctx, pos, from.Captured); err != nil {
		return nil, err
	}
	// The LSN reported as flushed starts at what is known checkpointed:
	// the slot's own confirmed position, and what this Source was
	// acknowledged before a reconnect. Never the start itself: a
	// reconnect resumes from the last position handed to the pipeline,
	// which may not be checkpointed yet, and a kill before its
	// checkpoint would leave the slot confirmed beyond it (resnapshot
	// required at the next start).
	s.raiseAcked(slot.confirmedLSN)
	return added, nil
}

// Start implements capture.Database.
func (s *Source) Start(ctx context.Context, st source.Stream) error {
	s.marked = s.start
	s.streamLSN.Store(s.start)
	s.TellCaptured(st)
	return st.Heartbeat(ctx, s.cursor(s.start))
}

// Stream implements capture.Database.
func (s *Source) Stream(ctx context.Context, st source.Stream) error {
	return s.stream(ctx, s.start, st)
}

// dropAbandoned drops the replication slot a checkpoint streamed from
// when the config names another one and source.snapshot_mode when_needed
// starts again from a new slot (docs/snapshots.md): nothing would ever
// read the old slot again, and it would hold its WAL for good. A slot
// still in use is left, with a warning naming it, and so is a slot of
// that name in another database (slot names are server-wide: another
// pipeline's).
func (s *Source) dropAbandoned(ctx context.Context, old string) {
	if s.opts.Config.Snapshot() != config.SnapshotWhenNeeded {
		return
	}
	tag, err := s.conn.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active AND database = current_database()`, old)
	if err == nil && tag.RowsAffected() == 0 {
		var active bool
		if s.conn.QueryRow(ctx, `SELECT active FROM pg_replication_slots WHERE slot_name = $1 AND database = current_database()`, old).Scan(&active) == nil {
			err = errors.New("the slot is in use")
		}
	}
	switch {
	case err != nil:
		s.opts.Log().Warn("source.snapshot_mode when_needed: could not drop the replication slot the checkpoint streamed from; it holds WAL until dropped",
			"slot", old, "err", err, "fix", "SELECT pg_drop_replication_slot('"+old+"')")
	case tag.RowsAffected() > 0:
		s.opts.Log().Warn("source.snapshot_mode when_needed: dropped the replication slot the checkpoint streamed from (source.slot names another)", "slot", old)
	}
}

// freshStart (re)creates the slot and returns its consistent point, where
// streaming starts; every selected table is queued for the initial
// snapshot (when source.backfill is on).
func (s *Source) freshStart(ctx context.Context, slot slotState) (uint64, error) {
	if slot.exists {
		if err := retryActive(ctx, func() error {
			_, err := s.conn.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, s.slot)
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "42704" {
				return nil // a slot that was being created, gone since
			}
			return err
		}); err != nil {
			return 0, fmt.Errorf("drop stale replication slot %s: %w", s.slot, err)
		}
	}
	res := s.repl.Exec(ctx, fmt.Sprintf("CREATE_REPLICATION_SLOT %s LOGICAL pgoutput NOEXPORT_SNAPSHOT", pgx.Identifier{s.slot}.Sanitize()))
	results, err := res.ReadAll()
	if err != nil {
		return 0, fmt.Errorf("create replication slot %s: %w", s.slot, err)
	}
	if len(results) != 1 || len(results[0].Rows) != 1 || len(results[0].Rows[0]) < 2 {
		return 0, fmt.Errorf("create replication slot %s: unexpected reply", s.slot)
	}
	return parseLSN(string(results[0].Rows[0][1]))
}

// addedSince makes the selected tables the captured set and returns those
// the checkpoint does not record as captured: tables added to
// source.tables (or created, with no list) while the pipeline was down,
// which the loop snapshots. reconcilePublication has already added them
// to the publication, so their changes stream from then on.
func (s *Source) addedSince(recorded json.RawMessage) []string {
	before := capturedBefore(recorded, s.pubState, s.selected)
	var added []*relation
	for _, r := range s.selected {
		if !before[r.oid] {
			added = append(added, r)
		}
	}
	s.setCaptured(s.selected)
	if len(added) == 0 {
		return nil
	}
	return names(added)
}

// Acknowledge implements capture.Database: the slot may release WAL up to
// cursor.
func (s *Source) Acknowledge(cursor change.Position) {
	if _, lsn, err := decodePosition(cursor); err == nil {
		s.raiseAcked(lsn)
	}
}

// raiseAcked moves the acknowledged LSN up to lsn; it never moves back.
func (s *Source) raiseAcked(lsn uint64) {
	for {
		cur := s.acked.Load()
		if lsn <= cur || s.acked.CompareAndSwap(cur, lsn) {
			return
		}
	}
}

// Close implements capture.Database: it closes the connections. The slot
// keeps the last position the stream reported (sendStatus), a
// checkpointed one.
func (s *Source) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	if s.repl != nil && !s.repl.IsClosed() {
		errs = append(errs, s.repl.Close(ctx))
	}
	if s.conn != nil {
		errs = append(errs, s.conn.Close(ctx))
	}
	return errors.Join(errs...)
}

// retryActive retries f while the slot is still held by a walsender of a
// process that just died (SQLSTATE 55006, object_in_use); the server
// notices the closed connection within seconds.
func retryActive(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := f()
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// nothingToCapture is the error of a first start whose source.tables
// names only tables that do not exist, each with the closest existing
// table's name when one is close (as `tributary tables` says).
func (s *Source) nothingToCapture(ctx context.Context, missing []string) error {
	existing, _ := existingTables(ctx, s.conn) // without them, no suggestion
	var why []string
	for _, t := range missing {
		w := t + " does not exist"
		if near := config.Closest(t, existing); near != "" {
			w += "; did you mean " + near + "?"
		}
		why = append(why, w)
	}
	return fmt.Errorf("source.tables: nothing to capture: %s (or the user %s cannot see them: it needs USAGE on their schema; `tributary tables` lists what the list selects)",
		strings.Join(why, ", "), s.connCfg.User)
}
