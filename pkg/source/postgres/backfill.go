package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// chunkRows is how many rows one backfill query reads.
const chunkRows = 20000

// markEvery is how many published rows pass between two progress markers
// of a backfill (checkpointable positions from which it resumes).
const markEvery = 1000

// backfill publishes every row of rels (op r) as of the exported snapshot,
// so that streaming from the slot's consistent point continues exactly
// where the backfill ends. Tables are read in primary-key chunks, and every
// markEvery rows a position marker records how far it got.
//
// Resuming (resume != nil, snapshot ""): the exported snapshot died with
// the process that exported it, so the tables are read on from resume's
// last key in a fresh snapshot, taken later than the slot's consistent
// point. That leaves no gap: the slot still starts at its consistent point
// (nothing is confirmed past it before the backfill finishes), so every
// change committed after that point is streamed afterwards, whatever
// snapshot a row was read in. A row inserted or updated since appears as
// an r row with its newer value and then again as the streamed changes
// (duplicates, in the order: newer r row, then the older changes up to the
// newest, so the last message for a key is always its latest state); a row
// deleted since is not read, and its delete is streamed.
func (s *Source) backfill(ctx context.Context, snapshot string, lsn uint64, rels []*relation, resume *backfillProgress, emit func(context.Context, *change.Event) error) error {
	conn, err := pgx.ConnectConfig(ctx, s.connCfg)
	if err != nil {
		return fmt.Errorf("backfill: connect: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return fmt.Errorf("backfill: %w", err)
	}
	if snapshot != "" {
		if _, err := conn.Exec(ctx, "SET TRANSACTION SNAPSHOT "+quoteLiteral(snapshot)); err != nil {
			return fmt.Errorf("backfill: import snapshot: %w", err)
		}
	}
	started := time.Now().UnixMicro()
	b := &backfiller{src: s, emit: emit, lsn: lsn, started: started}
	if resume != nil {
		b.done = append([]string(nil), resume.Done...)
		b.rows, b.published = resume.Rows, resume.Rows
	}
	for _, rel := range rels {
		t := rel.table(s.connCfg.Database, s.tables[rel.oid])
		s.tables[rel.oid], s.rels[rel.oid] = t, rel
		name := rel.schema + "." + rel.name
		var after [][]byte
		if resume != nil {
			if slices.Contains(resume.Done, name) {
				continue
			}
			if key := resume.resumeKey(); resume.Table == name && len(key) == len(t.Key) {
				after = key
			}
		}
		b.order = append(b.order, name)
		if err := b.table(ctx, conn, rel, t, after); err != nil {
			return err
		}
		if b.pending != nil && (b.pending.Source.Snapshot == "true" || b.pending.Source.Snapshot == "first_in_data_collection") {
			// Debezium's precedence: first, last, then last_in_… over
			// first_in_… (a table of one row is last_in_data_collection).
			b.pending.Source.Snapshot = "last_in_data_collection"
		}
	}
	if b.pending != nil {
		if b.pending.Source.Snapshot != "first" {
			b.pending.Source.Snapshot = "last"
		}
		if err := b.flush(ctx); err != nil {
			return err
		}
	}
	_, err = conn.Exec(ctx, "COMMIT")
	return err
}

// backfiller holds one row back so it can mark the last row of a table
// and of the whole backfill, as Debezium's snapshot field does.
type backfiller struct {
	src     *Source
	emit    func(context.Context, *change.Event) error
	lsn     uint64
	started int64
	rows    int64
	pending *change.Event

	// For progress markers: the pending row's table and key (raw text
	// values, copied).
	pendingTable string
	pendingKey   [][]byte
	published    int64    // rows emitted, over all tables
	done         []string // tables finished in earlier runs
	order        []string // tables started in this run, in order
}

func (b *backfiller) flush(ctx context.Context) error {
	if b.pending == nil {
		return nil
	}
	ev, table, key := b.pending, b.pendingTable, b.pendingKey
	b.pending = nil
	if err := b.emit(ctx, ev); err != nil {
		return err
	}
	b.published++
	if b.published%markEvery != 0 {
		return nil
	}
	// Everything up to this row is emitted: a resumable position.
	done := append([]string(nil), b.done...)
	for _, name := range b.order {
		if name == table {
			break
		}
		done = append(done, name)
	}
	after := make([]string, len(key))
	for i, v := range key {
		after[i] = string(v)
	}
	pos := position{Slot: b.src.slot, LSN: formatLSN(b.lsn), Backfill: &backfillProgress{
		Done: done, Table: table, After: after, Key: key, Rows: b.published,
	}}
	return b.emit(ctx, &change.Event{Position: pos.encode()})
}

func (b *backfiller) table(ctx context.Context, conn *pgx.Conn, rel *relation, t *change.Table, after [][]byte) error {
	cols := make([]string, len(rel.columns))
	for i, c := range rel.columns {
		cols[i] = pgx.Identifier{c.name}.Sanitize()
	}
	keys := make([]string, len(t.Key))
	for i, k := range t.Key {
		keys[i] = cols[k]
	}
	base := "SELECT " + strings.Join(cols, ", ") + " FROM " + rel.qualified()
	last := after // key values of the last row read, text format
	first := after == nil
	name := rel.schema + "." + rel.name
	for {
		sql := base
		var params [][]byte
		if len(keys) > 0 {
			if last != nil {
				ph := make([]string, len(keys))
				for i := range keys {
					ph[i] = fmt.Sprintf("$%d", i+1)
				}
				sql += " WHERE (" + strings.Join(keys, ", ") + ") > (" + strings.Join(ph, ", ") + ")"
				params = last
			}
			sql += fmt.Sprintf(" ORDER BY %s LIMIT %d", strings.Join(keys, ", "), chunkRows)
		}
		rr := conn.PgConn().ExecParams(ctx, sql, params, nil, nil, nil)
		n := 0
		for rr.NextRow() {
			n++
			vals := rr.Values()
			var key [][]byte
			for _, k := range t.Key {
				key = append(key, append([]byte(nil), vals[k]...))
			}
			ev, err := b.event(rel, t, vals, key)
			if err != nil {
				rr.Close()
				return err
			}
			if first {
				ev.Source.Snapshot = "first_in_data_collection"
				first = false
			}
			if b.rows == 0 {
				ev.Source.Snapshot = "first"
			}
			b.rows++
			if err := b.flush(ctx); err != nil {
				rr.Close()
				return err
			}
			b.pending, b.pendingTable, b.pendingKey = ev, name, key
			if len(keys) > 0 {
				last = key
			}
		}
		if _, err := rr.Close(); err != nil {
			return fmt.Errorf("backfill %s.%s: %w", rel.schema, rel.name, err)
		}
		if len(keys) == 0 || n < chunkRows {
			return nil
		}
	}
}

// event decodes one row in text format into a read event. The values are
// copied: the result reader reuses its buffers.
func (b *backfiller) event(rel *relation, t *change.Table, vals [][]byte, key [][]byte) (*change.Event, error) {
	size := 0
	for _, v := range vals {
		size += len(v)
	}
	buf := make([]byte, 0, size)
	row := make(change.Row, len(vals))
	for i, v := range vals {
		if v == nil {
			continue // Null
		}
		start := len(buf)
		buf = append(buf, v...)
		val, err := decodeText(t.Columns[i].Type, buf[start:len(buf):len(buf)])
		if err != nil {
			return nil, fmt.Errorf("backfill %s.%s column %s: %w", rel.schema, rel.name, t.Columns[i].Name, err)
		}
		row[i] = val
	}
	ev := &change.Event{
		Table: t,
		Op:    change.OpRead,
		After: row,
		Source: change.Source{
			Connector:    "postgresql",
			Name:         b.src.opts.TopicPrefix,
			DB:           b.src.connCfg.Database,
			Schema:       rel.schema,
			Table:        rel.name,
			CommitMicros: b.started,
			Snapshot:     "true",
			LSN:          int64(b.lsn),
		},
	}
	// The id names the row by its key, so that a resumed backfill (which
	// counts rows differently) gives the same row the same id.
	if len(key) > 0 {
		ev.ID = fmt.Sprintf("pg:r:%s:%s.%s:%q", formatLSN(b.lsn), rel.schema, rel.name, key)
	} else {
		ev.ID = fmt.Sprintf("pg:r:%s:%s.%s:#%d", formatLSN(b.lsn), rel.schema, rel.name, b.rows)
	}
	return ev, nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
