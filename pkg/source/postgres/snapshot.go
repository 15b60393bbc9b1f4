package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// Snapshots run in the capture engine (pkg/snapshot) while the slot
// streams. The watermarks are transactional logical decoding messages
// (pg_logical_emit_message with prefix watermarkPrefix), which pgoutput
// sends with `messages 'true'` at their transaction's place in commit
// order: any role may call the function, so snapshots need nothing more
// than the REPLICATION attribute (rds_replication on RDS) and SELECT on
// the tables. Chunks are plain autocommit SELECTs on connections of their
// own: no exported snapshot, no long transaction.

// watermarkPrefix is the prefix of Tributary's logical decoding messages.
const watermarkPrefix = "tributary"

// snapTable is what a chunk query needs of a table.
type snapTable struct {
	rel *relation
	t   *change.Table
}

// snapshotTable records (or refreshes) what chunk queries read of rel:
// the stream's goroutine owns s.rels and s.tables, the workers read this
// copy under snapMu.
func (s *Source) snapshotTable(rel *relation, t *change.Table) {
	s.snapMu.Lock()
	s.snapTables[rel.fullName()] = snapTable{rel: rel, t: t}
	s.snapMu.Unlock()
}

// pgSnapshots is the snapshot.Database of a Source.
type pgSnapshots struct{ s *Source }

// Session implements snapshot.Database.
func (d pgSnapshots) Session(ctx context.Context) (snapshot.Session, error) {
	conn, err := pgx.ConnectConfig(ctx, d.s.connCfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	return &pgSession{s: d.s, conn: conn}, nil
}

type pgSession struct {
	s    *Source
	conn *pgx.Conn
	scan *pgScan // the open scan of a table without a primary key
}

func (p *pgSession) Close() error {
	p.closeScan()
	return p.conn.Close(context.Background())
}

// pgScan reads a table without a primary key: a cursor in a read-only
// transaction of a connection of its own (the session's writes the
// watermarks, which must commit), FETCHed a chunk at a time. The cursor
// reads the table as of its start; the transaction holds that snapshot
// and an ACCESS SHARE lock (an ALTER TABLE of the table waits) until the
// last chunk (docs/snapshots.md).
type pgScan struct {
	st   snapTable
	conn *pgx.Conn
}

// scanCursor names the scan's cursor (one per connection).
const scanCursor = "tributary_scan"

func (p *pgSession) closeScan() {
	if p.scan != nil {
		p.scan.conn.Close(context.Background()) // ends the transaction, and the cursor with it
		p.scan = nil
	}
}

// readScan implements ReadChunk for a table without a primary key (see
// snapshot.Session): after nil opens a scan, snapshot.ReadOn fetches on.
func (p *pgSession) readScan(ctx context.Context, st snapTable, after snapshot.Key, limit int) ([]snapshot.Row, error) {
	table := st.rel.fullName()
	if after == nil {
		p.closeScan()
		conn, err := pgx.ConnectConfig(ctx, p.s.connCfg)
		if err != nil {
			return nil, fmt.Errorf("%s: connect to postgres: %w", table, err)
		}
		p.scan = &pgScan{st: st, conn: conn}
		for _, sql := range []string{"BEGIN READ ONLY", "DECLARE " + scanCursor + " NO SCROLL CURSOR FOR " + selectColumns(st.rel)} {
			if _, err := conn.Exec(ctx, sql); err != nil {
				p.closeScan()
				return nil, chunkError(table, err)
			}
		}
	} else if p.scan == nil || p.scan.st.rel.oid != st.rel.oid {
		return nil, fmt.Errorf("%s: no scan open to read on", table)
	}
	rows, err := p.s.readRows(ctx, p.scan.conn, p.scan.st, fmt.Sprintf("FETCH FORWARD %d FROM %s", limit, scanCursor), nil, limit)
	if err != nil || len(rows) < limit {
		p.closeScan()
	}
	return rows, err
}

// WriteWatermark implements snapshot.Session.
func (p *pgSession) WriteWatermark(ctx context.Context, mark string) error {
	_, err := p.conn.Exec(ctx, `SELECT pg_logical_emit_message(true, $1, $2::text)`, watermarkPrefix, mark)
	return err
}

// leaves is the query of the relations that hold table's rows: relid,
// the table and its partitions (a partitioned table itself has none).
const leaves = `SELECT $1::regclass AS relid UNION SELECT relid FROM pg_partition_tree($1::regclass) WHERE isleaf`

// smallTableBytes is the size under which a table never analyzed is
// counted rather than estimated: the planner's guess for a page or two is
// far off (hundreds of rows for three), and counting them costs nothing.
const smallTableBytes = 1 << 20

// Estimate implements snapshot.Session: the leaves' pg_class.reltuples,
// or, when one holding data was never analyzed or vacuumed (-1), the
// planner's guess from the pages (a table just loaded is the one worth
// splitting; autovacuum never analyzes a partitioned table itself), or
// for a small table its count.
func (p *pgSession) Estimate(ctx context.Context, table string) (int64, error) {
	var n float64
	var unknown bool
	var size int64
	if err := p.conn.QueryRow(ctx, `SELECT coalesce(sum(greatest(reltuples, 0)), 0)::float8, coalesce(bool_or(reltuples < 0 AND pg_relation_size(oid) > 0), false),
		coalesce(sum(pg_relation_size(oid)), 0)::int8
		FROM pg_class WHERE oid IN (`+leaves+`)`, quoteName(table)).Scan(&n, &unknown, &size); err != nil || !unknown {
		return int64(n), err
	}
	if size <= smallTableBytes {
		var count int64
		err := p.conn.QueryRow(ctx, "SELECT count(*) FROM "+quoteName(table)).Scan(&count)
		return count, err
	}
	var text string
	var plan []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		}
	}
	if err := p.conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) SELECT 1 FROM "+quoteName(table)).Scan(&text); err != nil {
		return 0, err
	}
	if err := json.Unmarshal([]byte(text), &plan); err != nil || len(plan) == 0 {
		return 0, fmt.Errorf("%s: the planner's estimate: %q", table, text)
	}
	return int64(plan[0].Plan.Rows), nil
}

// ReadChunk implements snapshot.Session: one keyset query, values in
// text format (the stream's decoders read the same text); a table without
// a primary key is read by a cursor (pgScan).
//
// The shape the chunk query selects is the one the stream last learnt,
// from the table's last Relation message; PostgreSQL sends that only with
// a change to the table, so after an ALTER TABLE it can be stale for as
// long as nobody writes to the table. When the query names a column that
// is gone, or the server answers with other types than the shape's, the
// chunk is read again with the shape the catalog has now: the rows are
// read now, so they are published with the table's shape as of now.
func (p *pgSession) ReadChunk(ctx context.Context, table string, after, until snapshot.Key, limit int) ([]snapshot.Row, error) {
	st, err := p.s.snapTable(table)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		rows, err := p.readChunk(ctx, st, after, until, limit)
		if !errors.Is(err, snapshot.ErrShapeMoved) || attempt == 3 || after != nil && len(st.t.Key) == 0 {
			// (A scan that met it cannot read on: the engine reads the
			// table again from the start.)
			return rows, err
		}
		rel := &relation{oid: st.rel.oid, schema: st.rel.schema, name: st.rel.name}
		if err := describe(ctx, p.conn, rel); err != nil {
			return nil, err
		}
		st = snapTable{rel: rel, t: rel.table(p.s.connCfg.Database, st.t, p.s.sel)}
		p.s.snapMu.Lock()
		if cur, ok := p.s.snapTables[table]; ok && cur.rel.oid == rel.oid {
			// Until the stream learns the shape from a Relation message:
			// the next chunks read with this one, as the same *Table.
			p.s.snapTables[table] = st
		}
		p.s.snapMu.Unlock()
	}
}

func (p *pgSession) readChunk(ctx context.Context, st snapTable, after, until snapshot.Key, limit int) ([]snapshot.Row, error) {
	if len(st.t.Key) == 0 {
		return p.readScan(ctx, st, after, limit)
	}
	p.closeScan() // a keyless table's scan left open (the table dropped from the snapshot)
	keys, where, params := keyRange(st.t, after, until)
	sql := selectColumns(st.rel) + where + fmt.Sprintf(" ORDER BY %s LIMIT %d", keys, limit)
	return p.s.readRows(ctx, p.conn, st, sql, params, limit)
}

// keyRange is the key columns of t, in key order, and the condition (with
// its parameters, text values) of the rows after the key after up to the
// key until; nil bounds are open. A row comparison is read as a range of
// the primary key.
func keyRange(t *change.Table, after, until snapshot.Key) (keys, where string, params [][]byte) {
	cols := make([]string, len(t.Key))
	for i, k := range t.Key {
		cols[i] = pgx.Identifier{t.Columns[k].Name}.Sanitize()
	}
	keys = strings.Join(cols, ", ")
	var conds []string
	for _, b := range []struct {
		key snapshot.Key
		op  string
	}{{after, ">"}, {until, "<="}} {
		if len(b.key) != len(cols) {
			continue
		}
		ph := make([]string, len(cols))
		for i := range cols {
			ph[i] = fmt.Sprintf("$%d", len(params)+i+1)
		}
		conds = append(conds, "("+keys+") "+b.op+" ("+strings.Join(ph, ", ")+")")
		params = append(params, b.key...)
	}
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	return keys, where, params
}

// Split implements snapshot.Session: the quantiles of a sample of the
// table's keys, which statistics older than the table's last load do not
// skew as a walk to the estimate's n-th key would. TABLESAMPLE SYSTEM
// reads whole pages at random, of which it takes at least splitPages per
// range (fewer sampled a table of narrow rows in key order from one or
// two pages, or none) and at least splitSample rows per range by the
// estimate.
func (p *pgSession) Split(ctx context.Context, table string, after snapshot.Key, rows int64, parts int) ([]snapshot.Key, error) {
	st, err := p.s.snapTable(table)
	if err != nil || len(st.t.Key) == 0 || rows <= 0 {
		return nil, err
	}
	var pages float64
	if err := p.conn.QueryRow(ctx, `SELECT coalesce(sum(pg_relation_size(relid)), 0)::float8 / current_setting('block_size')::float8 FROM (`+leaves+`) l`,
		quoteName(table)).Scan(&pages); err != nil {
		return nil, chunkError(table, err)
	}
	pct := 100.0
	if pages > 0 {
		pct = min(100, 100*max(float64(splitSample*parts)/float64(rows), float64(splitPages*parts)/pages))
	}
	keys, where, params := keyRange(st.t, after, nil)
	res := p.conn.PgConn().ExecParams(ctx, fmt.Sprintf("SELECT %s FROM %s TABLESAMPLE SYSTEM (%g) REPEATABLE (0)%s ORDER BY %s",
		keys, st.rel.qualified(), pct, where, keys), params, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, chunkError(table, res.Err)
	}
	var out []snapshot.Key
	for i := 1; i < parts && len(res.Rows) >= parts; i++ {
		out = append(out, snapshot.Key(res.Rows[i*len(res.Rows)/parts-1]))
	}
	return out, nil
}

// splitSample and splitPages are the fewest rows (by the estimate) and
// pages Split samples for each range.
const (
	splitSample = 200
	splitPages  = 64
)

// snapTable is what a chunk query reads of table.
func (s *Source) snapTable(table string) (snapTable, error) {
	s.snapMu.Lock()
	st, ok := s.snapTables[table]
	s.snapMu.Unlock()
	if !ok {
		return st, fmt.Errorf("%s: %w", table, snapshot.ErrNoTable)
	}
	return st, nil
}

// selectColumns is the query of the columns of rel's table, in its order:
// an excluded column is not read (columns.go).
func selectColumns(rel *relation) string {
	cols := make([]string, len(rel.proj.Kept))
	for j, i := range rel.proj.Kept {
		cols[j] = pgx.Identifier{rel.columns[i].name}.Sanitize()
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + rel.qualified()
}

// readRows runs sql (a chunk query, or a FETCH of a scan's cursor) on
// conn and decodes its rows, in text format (the stream's decoders read
// the same text), as read events of st.
func (s *Source) readRows(ctx context.Context, conn *pgx.Conn, st snapTable, sql string, params [][]byte, limit int) ([]snapshot.Row, error) {
	rel, t := st.rel, st.t
	table := rel.fullName()
	now := time.Now().UnixMicro()
	lsn := int64(s.streamLSN.Load())
	rr := conn.PgConn().ExecParams(ctx, sql, params, nil, nil, nil)
	// A domain column's values come as its base type (RowDescription
	// names the base type), so either OID is the column's.
	for i, f := range rr.FieldDescriptions() {
		if c := rel.columns[rel.proj.Kept[i]]; f.DataTypeOID != c.typOID && f.DataTypeOID != c.baseOID {
			rr.Close()
			return nil, fmt.Errorf("%s: column %s is of type %d now: %w", table, c.name, f.DataTypeOID, snapshot.ErrShapeMoved)
		}
	}
	out := make([]snapshot.Row, 0, limit)
	var slabs snapshot.Slabs
	var fill snapshot.ChunkFill
	for rr.NextRow() {
		if fill.Full() {
			continue // past snapshot.ChunkBytes: the next chunk reads on after the last row kept
		}
		ev, key, err := s.readEvent(rel, t, rr.Values(), now, lsn, &slabs)
		if err != nil {
			rr.Close()
			return nil, err
		}
		out = append(out, snapshot.Row{Key: key, Event: ev})
		fill.Keep(out[len(out)-1])
	}
	if _, err := rr.Close(); err != nil {
		return nil, chunkError(table, err)
	}
	return out, nil
}

// chunkError names table in a chunk query's error, marking a dropped
// table (snapshot.ErrNoTable) and a column the query names that is gone
// (snapshot.ErrShapeMoved).
func chunkError(table string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "42P01": // dropped
			return fmt.Errorf("%s: %w: %w", table, snapshot.ErrNoTable, err)
		case "42703": // a column dropped or renamed
			return fmt.Errorf("%s: %w: %w", table, snapshot.ErrShapeMoved, err)
		}
	}
	return fmt.Errorf("%s: %w", table, err)
}

// readEvent decodes one row in text format into a read event and its key.
// The values are copied into slabs: the result reader reuses its buffers.
func (s *Source) readEvent(rel *relation, t *change.Table, vals [][]byte, now, lsn int64, slabs *snapshot.Slabs) (*change.Event, snapshot.Key, error) {
	row := slabs.Row(len(vals))
	for i, v := range vals {
		if i >= len(t.Columns) {
			continue
		}
		if mask := rel.proj.Masks[i]; mask != nil {
			row[i] = source.MaskValue(mask, &t.Columns[i], v, v == nil)
			continue
		}
		if v == nil {
			continue // Null
		}
		val, err := decodeText(t.Columns[i].Type, slabs.Keep(v))
		if err != nil {
			return nil, nil, fmt.Errorf("snapshot %s column %s: %w", rel.fullName(), t.Columns[i].Name, err)
		}
		row[i] = val
	}
	var key snapshot.Key
	if len(t.Key) > 0 {
		key = slabs.Key(len(t.Key))
		for i, k := range t.Key {
			key[i] = slabs.Keep(vals[k])
		}
	}
	ev := slabs.Event()
	*ev = change.Event{
		Table: t,
		Op:    change.OpRead,
		After: row,
		Source: change.Source{
			Block:        SourceBlock,
			Name:         s.opts.TopicPrefix,
			DB:           s.connCfg.Database,
			Schema:       rel.schema,
			Table:        rel.name,
			CommitMicros: now,
			Ints:         [change.SourceSlots]int64{slotLSN: lsn},
		},
	}
	return ev, key, nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// legacyState turns the backfill progress of an earlier release into the
// engine's state: the tables it had not finished, reading on after the
// last key of the one it was reading.
func legacyState(b *backfillProgress, rels []*relation) snapshot.State {
	var st snapshot.State
	for _, r := range rels {
		name := r.fullName()
		if slices.Contains(b.Done, name) {
			st.Done = append(st.Done, name)
			continue
		}
		ts := snapshot.TableState{Table: name, Initial: true}
		if name == b.Table {
			ts.Key, ts.Rows = b.resumeKey(), b.Rows
		}
		st.Tables = append(st.Tables, ts)
	}
	return st
}
