package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// statusInterval is how often the acknowledged position is reported to the
// server when it does not ask sooner.
const statusInterval = time.Second

// txState is the transaction being decoded.
type txState struct {
	finalLSN     uint64
	xid          uint32
	commitMicros int64
	// lastLSN and atLSN number the changes that share one WAL record (a
	// multi-row insert), so that an event ID is unique.
	lastLSN uint64
	atLSN   int
	// changed says the transaction holds more than the snapshot's
	// watermarks (logical decoding messages of Tributary's prefix), which
	// Debezium, streaming without Tributary beside it, never sees.
	changed bool
}

// stream starts logical replication at start and hands st every change of
// a published table, then the cursor at each commit.
func (s *Source) stream(ctx context.Context, start uint64, st source.Stream) error {
	// messages: the snapshot watermarks (pg_logical_emit_message).
	args := []string{"proto_version '1'", "publication_names " + quoteLiteral(s.pub), "messages 'true'"}
	if err := retryActive(ctx, func() error {
		return pglogrepl.StartReplication(ctx, s.repl, s.slot, pglogrepl.LSN(start), pglogrepl.StartReplicationOptions{PluginArgs: args})
	}); err != nil {
		return fmt.Errorf("start replication on slot %s: %w", s.slot, err)
	}
	source.MarkConnected(ctx)
	s.opts.Log().Info("streaming from the replication slot", "slot", s.slot, "publication", s.pub, "lsn", formatLSN(start))
	var tx txState
	limit := silenceLimit(ctx, s.conn)
	heard := time.Now() // the last message from the server
	next := time.Now().Add(statusInterval)
	s.nextDiscover = time.Now().Add(discoverEvery)
	// A read takes no context: pgconn would watch each one (a deadline
	// context, an AfterFunc, a channel: seven allocations per message).
	// The connection's read deadline is next, set when next moves, and
	// ctx's end moves it to now once for the whole stream. A read it ends
	// fails as a timeout; ctx.Err() then says why.
	// On return the deadline is cleared for whoever uses the connection
	// next, after the AfterFunc can no longer set it: stop does not wait
	// for one already running, the flag under mu does.
	nc := s.repl.Conn()
	var mu sync.Mutex
	returned := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !returned {
			_ = nc.SetReadDeadline(time.Now())
		}
	})
	defer func() {
		stop()
		mu.Lock()
		returned = true
		mu.Unlock()
		_ = nc.SetReadDeadline(time.Time{})
	}()
	var deadline time.Time
	// One clock read per message: a message's arrival is noted at the
	// next turn of the loop, its handling (a few µs, or a wait for the
	// destination, when the server was not silent either) apart.
	received := false
	for {
		now := time.Now()
		if received {
			heard, received = now, false
		}
		if tx.finalLSN == 0 && now.After(s.nextDiscover) {
			if err := s.discover(ctx, st); err != nil {
				return err
			}
			now = time.Now()
			s.nextDiscover = now.Add(discoverEvery)
			heard = now // the stream was not read meanwhile
		}
		if now.After(next) {
			if err := s.sendStatus(ctx, now.Sub(heard) >= pingAfter); err != nil {
				return err
			}
			next = time.Now().Add(statusInterval)
		}
		if !deadline.Equal(next) {
			deadline = next
			if err := nc.SetReadDeadline(next); err != nil {
				return fmt.Errorf("replication stream: %w", err)
			}
		}
		if ctx.Err() != nil { // after the deadline: an end before it moved it to now
			return ctx.Err()
		}
		msg, err := s.repl.ReceiveMessage(context.Background())
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if pgconn.Timeout(err) {
				if silent := time.Since(heard); silent >= limit {
					return fmt.Errorf("replication stream: %w", errSilent(silent, limit))
				}
				continue
			}
			return fmt.Errorf("replication stream: %w", err)
		}
		received = true
		switch msg := msg.(type) {
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("replication stream: %w", pgconn.ErrorResponseToPgError(msg))
		case *pgproto3.CopyData:
			if len(msg.Data) == 0 {
				continue
			}
			switch msg.Data[0] {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(msg.Data[1:])
				if err != nil {
					return fmt.Errorf("replication stream: %w", err)
				}
				if ka.ReplyRequested {
					next = time.Time{}
				}
				if err := s.heartbeat(ctx, &tx, uint64(ka.ServerWALEnd), st); err != nil {
					return err
				}
			case pglogrepl.XLogDataByteID:
				xld, err := pglogrepl.ParseXLogData(msg.Data[1:])
				if err != nil {
					return fmt.Errorf("replication stream: %w", err)
				}
				if err := s.handle(ctx, &tx, xld, st); err != nil {
					return err
				}
			}
		}
	}
}

// heartbeat hands on the cursor at walEnd, the end of what the
// walsender has decoded (a keepalive carries its sent pointer), when that
// is past the last one and no transaction is open: every transaction
// that committed before it has been received, so nothing before it is
// left to publish. It is checkpointed once everything handed over
// before it is acknowledged, and then reported as flushed, so that while
// the selected tables are idle and the server writes WAL for other tables
// or databases the slot moves on instead of pinning that WAL.
func (s *Source) heartbeat(ctx context.Context, tx *txState, walEnd uint64, st source.Stream) error {
	if tx.finalLSN != 0 || walEnd <= s.marked {
		return nil
	}
	s.marked = walEnd
	return st.Heartbeat(ctx, s.cursor(walEnd))
}

// sendStatus reports the acknowledged LSN as written, flushed and applied:
// the server may recycle WAL only up to what is durably checkpointed.
// ping asks the server to answer at once (see silenceLimit).
func (s *Source) sendStatus(ctx context.Context, ping bool) error {
	lsn := pglogrepl.LSN(s.acked.Load())
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.repl, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: lsn, WALFlushPosition: lsn, WALApplyPosition: lsn, ReplyRequested: ping,
	})
	if err != nil {
		return fmt.Errorf("send standby status: %w", err)
	}
	return nil
}

// handle decodes one pgoutput message. A transaction's messages and its
// rows are parsed in place (pgoutput.go); the rare others by pglogrepl.
func (s *Source) handle(ctx context.Context, tx *txState, xld pglogrepl.XLogData, st source.Stream) error {
	if len(xld.WALData) == 0 {
		return fmt.Errorf("decode pgoutput message at %s: empty message", xld.WALStart)
	}
	var pm pgoutputMessage
	if ok, err := parsePgoutput(xld.WALData, &pm); err != nil {
		return fmt.Errorf("decode message at %s: %w", xld.WALStart, err)
	} else if ok {
		switch pm.kind {
		case 'B':
			*tx = txState{finalLSN: pm.finalLSN, xid: pm.xid, commitMicros: pm.commitMicros}
			return nil
		case 'C':
			tx.finalLSN = 0 // between transactions: see heartbeat
			if tx.changed {
				// Debezium's lastCommitLsn: where its stream saw the
				// commit, the message's start, which is the commit's end.
				s.lastCommit = uint64(xld.WALStart)
			}
			s.marked = max(s.marked, pm.endLSN)
			return st.Commit(ctx, s.cursor(pm.endLSN), 0) // the commit time is on the rows
		}
		tx.changed = true
		return s.row(ctx, tx, uint64(xld.WALStart), xld.WALData, &pm, st)
	}
	m, err := pglogrepl.Parse(xld.WALData)
	if err != nil {
		return fmt.Errorf("decode pgoutput message at %s: %w", xld.WALStart, err)
	}
	if ldm, ok := m.(*pglogrepl.LogicalDecodingMessage); !ok {
		tx.changed = true
	} else if ldm.Prefix != watermarkPrefix {
		// Debezium asks pgoutput for logical decoding messages too (on
		// PostgreSQL 14 and later): an application's transactional one
		// makes its transaction's commit count, and a non-transactional
		// one counts as a commit where it is. Only the snapshot's
		// watermarks, which a Debezium without Tributary never sees, do
		// not.
		if ldm.Transactional {
			tx.changed = true
		} else {
			s.lastCommit = uint64(xld.WALStart)
		}
	}
	switch m := m.(type) {
	case *pglogrepl.RelationMessage:
		return s.relation(ctx, m)
	case *pglogrepl.TypeMessage:
		if s.typeNames == nil {
			s.typeNames = map[uint32]string{}
		}
		s.typeNames[m.DataType] = m.Name
	case *pglogrepl.LogicalDecodingMessage:
		if m.Prefix == watermarkPrefix {
			return st.Watermark(ctx, string(m.Content))
		}
	}
	// Truncate, Type, Origin and other logical messages publish nothing
	// (Debezium skips truncates by default).
	return nil
}

// relation refreshes a table's shape from a Relation message: column order
// and types from the message, nullability from the catalog. The key is the
// replica identity the message flags, the columns every old image written
// with it carries, even when the identity has changed since (the catalog
// has the new one); under REPLICA IDENTITY FULL, which flags every column,
// it is the primary key (docs/postgresql.md).
func (s *Source) relation(ctx context.Context, m *pglogrepl.RelationMessage) error {
	follow, err := s.follows(ctx, m.RelationID, m.Namespace, m.RelationName)
	if err != nil {
		return err
	}
	if !follow {
		// Not captured: a table removed from source.tables whose changes
		// were decoded before the publication dropped it, or one renamed
		// out of the list. Its rows are skipped (see row).
		delete(s.tables, m.RelationID)
		delete(s.rels, m.RelationID)
		return nil
	}
	rel := &relation{oid: m.RelationID, schema: m.Namespace, name: m.RelationName, replident: string(rune(m.ReplicaIdentity))}
	if err := describe(ctx, s.conn, rel); err != nil {
		return err
	}
	prev := s.rels[m.RelationID]
	gone := prev != nil && prev.gone
	if !gone && len(rel.columns) == 0 && len(m.Columns) > 0 {
		var err error
		if gone, err = s.tableGone(ctx, m.RelationID, rel.fullName()); err != nil {
			return err
		}
	}
	if gone {
		// Dropped since (dropped.go): the last shape this session knew,
		// when the message's columns are still it, else the message's;
		// under FULL, the key last known (described, or from the
		// checkpoint: fullKeysChanged), when there is one.
		rel.gone = true
		if prev == nil || !sameColumns(prev.columns, m.Columns) {
			var err error
			if rel.columns, rel.key, err = s.goneColumns(ctx, m); err != nil {
				return err
			}
			if rel.replident == "f" && prev != nil && (len(prev.columns) > 0 || prev.replident == "f") {
				rel.key = prev.key
				for i := range rel.columns {
					rel.columns[i].notNull = slices.Contains(rel.key, rel.columns[i].name)
				}
			}
		} else {
			rel.columns, rel.key = prev.columns, prev.key
		}
		s.rels[m.RelationID] = rel
		s.fullKeyChanged(m.RelationID)
		// No snapshotTable: a new table of its name may be snapshotted.
		s.tables[m.RelationID] = rel.table(s.connCfg.Database, s.tables[m.RelationID], s.sel)
		return nil
	}
	byName := map[string]catalogColumn{}
	for _, c := range rel.columns {
		byName[c.name] = c
	}
	rel.columns = rel.columns[:0:0]
	// Columns the catalog has no longer, or of another type (dropped or
	// retyped after this WAL was written): their types by OID, as the
	// catalog cannot say what an array's elements or an enum's labels are.
	var stale []int
	for i, c := range m.Columns {
		cat, ok := byName[c.Name]
		if !ok || cat.typOID != c.DataType || cat.typmod != c.TypeModifier {
			stale = append(stale, i)
		}
		rel.columns = append(rel.columns, cat.withMessageType(c.Name, c.DataType, c.TypeModifier))
	}
	if len(stale) > 0 {
		cols := make([]catalogColumn, len(stale))
		oids, typmods := make([]uint32, len(stale)), make([]int32, len(stale))
		for j, i := range stale {
			cols[j], oids[j], typmods[j] = rel.columns[i], rel.columns[i].typOID, rel.columns[i].typmod
		}
		found, err := s.typesByOID(ctx, cols, oids, typmods)
		if err != nil {
			return fmt.Errorf("types of %s: %w", rel.fullName(), err)
		}
		for j, i := range stale {
			if found[j] {
				rel.columns[i] = cols[j]
			}
		}
	}
	if key := identityColumns(m); rel.replident != "f" && rel.replident != "n" && !sameSet(key, rel.key) {
		// The identity changed after this WAL was written (NOTHING: the
		// table leaves the capture, see discover).
		rel.key = key
	}
	if p := columnProblems(rel, s.sel); len(p) > 0 {
		// The key changed to take in a column the rules leave out or
		// mask: stop rather than publish keys without it, or with it.
		return fmt.Errorf("%s: %s", rel.fullName(), strings.Join(p, "; "))
	}
	s.rels[m.RelationID] = rel
	s.fullKeyChanged(m.RelationID)
	s.tables[m.RelationID] = rel.table(s.connCfg.Database, s.tables[m.RelationID], s.sel)
	s.snapshotTable(rel, s.tables[m.RelationID])
	return nil
}

// sameSet reports whether a and b hold the same names, in any order.
func sameSet(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(n string) bool { return !slices.Contains(b, n) })
}

// largeMessage is the size of a row message after which the stream's
// slabs are released (snapshot.Slabs.Release): its own copy is then in
// memory only while its event is.
const largeMessage = 64 << 10

// rowOps are the ops of pgoutput's row messages.
var rowOps = [256]change.Op{'I': change.OpCreate, 'U': change.OpUpdate, 'D': change.OpDelete}

// row emits the change of an Insert, Update or Delete message m, parsed
// from msg, which was written at walStart.
func (s *Source) row(ctx context.Context, tx *txState, walStart uint64, msg []byte, m *pgoutputMessage, st source.Stream) error {
	// The event ID names the change by its own LSN, not by its rank among
	// the published changes of its transaction: the rank shifts when a
	// replay after a restart publishes another set of tables (one removed
	// from or added to source.tables), and the same change would then get
	// another ID, or two changes the same one.
	if walStart != tx.lastLSN {
		tx.lastLSN, tx.atLSN = walStart, 0
	}
	at := tx.atLSN
	tx.atLSN++
	if _, ok := s.captured[m.relID]; !ok {
		return nil
	}
	t, ok := s.tables[m.relID]
	if !ok {
		return fmt.Errorf("pgoutput: change for unknown relation %d at %s", m.relID, formatLSN(walStart))
	}
	rel := s.rels[m.relID]
	// pgconn reuses the buffer msg arrived in for the next message
	// (pgproto3's Frontend.Receive), and the event's values outlive it: the
	// message is copied once, into a block shared with the next ones and
	// never reused, and its values alias the copy (decodeText decodes a
	// bytea over it). The event and its rows are cut from slabs the same
	// way (docs/hot-path.md).
	msg = s.streamSlabs.Keep(msg)
	if len(msg) > largeMessage {
		defer s.streamSlabs.Release()
	}
	ev := s.streamSlabs.Event()
	var idBuf [64]byte
	var seqBuf [48]byte
	op := rowOps[m.kind]
	*ev = change.Event{
		Table: t,
		Op:    op,
		Source: change.Source{
			Block:        SourceBlock,
			Name:         s.opts.TopicPrefix,
			DB:           s.connCfg.Database,
			Schema:       rel.schema,
			Table:        rel.name,
			CommitMicros: tx.commitMicros,
			Sequence:     s.streamSlabs.String(appendSequence(seqBuf[:0], s.lastCommit, walStart)),
			Ints:         [change.SourceSlots]int64{slotTxID: int64(tx.xid), slotLSN: int64(walStart)},
		},
		ID: s.streamSlabs.String(appendEventID(idBuf[:0], tx.finalLSN, walStart, at)),
	}
	if m.new.set {
		ev.After = s.streamRow(len(t.Columns))
		if err := decodeTuple(t, &rel.proj, msg, m.new, ev.After); err != nil {
			return fmt.Errorf("%s.%s at %s: %w", rel.schema, rel.name, formatLSN(walStart), err)
		}
	}
	if m.old.set {
		ev.Before = s.streamRow(len(t.Columns))
		if err := decodeTuple(t, &rel.proj, msg, m.old, ev.Before); err != nil {
			return fmt.Errorf("%s.%s at %s: %w", rel.schema, rel.name, formatLSN(walStart), err)
		}
	}
	completeImages(t, m.oldKind == 'K', ev.Before, ev.After)
	maskUnavailable(t, &rel.proj, ev.Before)
	maskUnavailable(t, &rel.proj, ev.After)
	// The old tuple's values say whether the key changed (the loop splits
	// such an update), not its type: pgoutput marks an old row with the
	// published relation's tuple type, so a partition with REPLICA
	// IDENTITY FULL under a root with DEFAULT sends the whole old row as an
	// old key on every update (docs/postgresql.md). An old tuple of either
	// type is the update's before, as Debezium publishes it, even one whose
	// columns outside the key are all null.
	return st.Change(ctx, ev)
}

// appendEventID appends the ID of the change at lsn in the transaction
// ending at final, the at-th (from 0) of those at one LSN (a multi-row
// insert): "pg:<final>:<lsn>", then ":<at>" when at > 0.
func appendEventID(b []byte, final, lsn uint64, at int) []byte {
	b = append(b, "pg:"...)
	b = appendLSN(b, final)
	b = append(b, ':')
	b = appendLSN(b, lsn)
	if at > 0 {
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(at), 10)
	}
	return b
}

// streamRow returns a row of n Null values for a streamed event.
func (s *Source) streamRow(n int) change.Row {
	if n == 0 {
		return change.Row{} // not nil, which says "no image"
	}
	return s.streamSlabs.Row(n)
}

// maskUnavailable masks Debezium's placeholder in the masked columns of
// row that are still unavailable once the images are complete: Debezium
// applies a column's mask to whatever value it publishes, the placeholder
// too (a hash mask publishes the placeholder's hash).
func maskUnavailable(t *change.Table, p *source.Projection, row change.Row) {
	if row == nil {
		return
	}
	for j, mask := range p.Masks {
		if mask != nil && j < len(row) && row[j].Kind == change.Unavailable {
			row[j] = source.MaskValue(mask, &t.Columns[j], []byte(change.UnavailablePlaceholder), false)
		}
	}
}

// decodeTuple decodes the tuple tp of msg into row, a row of t, whose
// columns are the relation's as p projects them: an excluded column is
// skipped, a masked one masked before it becomes a Value. The values
// alias msg, which the caller hands over (decodeText).
func decodeTuple(t *change.Table, p *source.Projection, msg []byte, tp tuple, row change.Row) error {
	if tp.n != len(p.Out) {
		return fmt.Errorf("tuple has %d columns, relation has %d", tp.n, len(p.Out))
	}
	for i, off := 0, tp.from; i < tp.n; i++ {
		var kind byte
		var data []byte
		kind, data, off = column(msg, off)
		j := p.Out[i]
		if j < 0 {
			continue
		}
		col := &t.Columns[j]
		mask := p.Masks[j]
		switch kind {
		case colNull:
			if mask != nil {
				row[j] = source.MaskValue(mask, col, nil, true)
			}
		case colUnchanged:
			row[j] = change.Value{Kind: change.Unavailable}
		case colText:
			if mask != nil {
				row[j] = source.MaskValue(mask, col, data, false)
				continue
			}
			v, err := decodeText(col.Type, data)
			if err != nil {
				return fmt.Errorf("column %s: %w", col.Name, err)
			}
			row[j] = v
		default:
			return errors.New("column " + col.Name + ": binary tuple data is not expected with proto_version 1")
		}
	}
	return nil
}

// sameColumns reports whether a Relation message's columns are cols, by
// name and type.
func sameColumns(cols []catalogColumn, msg []*pglogrepl.RelationMessageColumn) bool {
	if len(cols) != len(msg) {
		return false
	}
	for i, c := range msg {
		if cols[i].name != c.Name || cols[i].typOID != c.DataType || cols[i].typmod != c.TypeModifier {
			return false
		}
	}
	return true
}

// HandsOff implements capture's handsOff: the stream never reuses an
// event, or memory an event points to, once it emitted it (events and rows
// are cut from streamSlabs, values alias the stream's copy of a message,
// never written again; row), and what a position must say of the moment it
// was handed over is in it before (cursor encodes the dropped tables and
// FULL keys then, the capture loop seals the captured set and the
// snapshots' state), so the capture loop may emit them on a goroutine of
// its own (source.Handoff). While a snapshot is queued or running (its
// windows, the held last row of the initial snapshot) the handoff emits on
// the stream's goroutine, as before.
func (s *Source) HandsOff() bool { return true }

// appendSequence appends source.sequence as Debezium's PostgreSQL
// connector writes it: a JSON array, as text, of the last commit's LSN
// (null when not known) and the change's LSN, each a decimal number in a
// string (["24023128","24023160"]). Consumers order and deduplicate by it.
func appendSequence(b []byte, lastCommit, lsn uint64) []byte {
	if lastCommit == 0 {
		b = append(b, "[null,"...)
	} else {
		b = append(b, `["`...)
		b = strconv.AppendUint(b, lastCommit, 10)
		b = append(b, `",`...)
	}
	b = append(b, '"')
	b = strconv.AppendUint(b, lsn, 10)
	return append(b, `"]`...)
}
