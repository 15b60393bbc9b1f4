package mysql

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// chunkRows is how many rows one backfill query reads.
const chunkRows = 2000

// backfill publishes every row of tables (op r) and returns the position
// streaming starts from. A fresh backfill takes a consistent snapshot and
// the binlog position that matches it. A resumed one (resume, with pos
// from the checkpoint) continues after the last published key with a new
// snapshot: rows it reads may be newer than pos, and streaming from pos
// replays those changes after them, so consumers converge on the same rows.
// A position marker follows every chunk, so a restart resumes there.
func (s *Source) backfill(ctx context.Context, srv server, resume bool, pos position, tables []*table, emit func(context.Context, *change.Event) error) (position, error) {
	conn, err := s.connect(ctx)
	if err != nil {
		return pos, fmt.Errorf("backfill: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	if !resume {
		if pos, err = s.snapshotStart(conn, srv); err != nil {
			return pos, err
		}
		s.log.Info("backfill snapshot", "file", pos.File, "pos", pos.Pos, "gtid", pos.GTID)
	} else if _, err := conn.Execute("START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
		return pos, fmt.Errorf("backfill: start snapshot: %w", err)
	}
	if !s.opts.Config.BackfillEnabled() {
		tables = nil
	}
	b := &backfiller{src: s, emit: emit, pos: pos, srv: srv, started: time.Now().UnixMicro()}
	for _, t := range tables {
		if resume && pos.Table != "" && t.id() < pos.Table {
			continue // done before the restart
		}
		var after []string
		if resume && t.id() == pos.Table {
			after = pos.After
		}
		if err := b.table(ctx, conn, t, after); err != nil {
			return pos, err
		}
	}
	if b.pending != nil {
		b.pending.Source.Snapshot = "last"
		if err := b.flush(ctx); err != nil {
			return pos, err
		}
	}
	if _, err := conn.Execute("COMMIT"); err != nil {
		return pos, fmt.Errorf("backfill: %w", err)
	}
	pos.Backfilled, pos.Table, pos.After = true, "", nil
	s.log.Info("backfill done", "rows", b.rows)
	return pos, emit(ctx, &change.Event{Position: pos.encode()})
}

// snapshotStart opens a consistent snapshot on conn and returns the binlog
// position it corresponds to. MariaDB reports that position for the
// snapshot itself (binlog_snapshot_file/position), so no lock is taken.
// MySQL needs FLUSH TABLES WITH READ LOCK for as long as it takes to read
// the position and open the snapshot.
func (s *Source) snapshotStart(conn *client.Conn, srv server) (position, error) {
	pos := position{Flavor: s.flavor}
	if s.flavor == flavorMariaDB {
		if _, err := conn.Execute("START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
			return pos, fmt.Errorf("backfill: start snapshot: %w", err)
		}
		r, err := conn.Execute("SHOW STATUS LIKE 'binlog_snapshot_%'")
		if err != nil {
			return pos, fmt.Errorf("backfill: read snapshot position: %w", err)
		}
		for i := range r.Values {
			k, _ := r.GetString(i, 0)
			v, _ := r.GetString(i, 1)
			switch strings.ToLower(k) {
			case "binlog_snapshot_file":
				pos.File = strings.Clone(v)
			case "binlog_snapshot_position":
				p, _ := r.GetInt(i, 1)
				pos.Pos = uint32(p)
			}
		}
		if pos.File == "" {
			return pos, fmt.Errorf("backfill: the server reports no binlog_snapshot_file: %w: enable the binary log (log_bin)", ErrPrerequisite)
		}
		r, err = conn.Execute(fmt.Sprintf("SELECT BINLOG_GTID_POS(%s, %d)", quoteString(pos.File), pos.Pos))
		if err != nil {
			return pos, fmt.Errorf("backfill: BINLOG_GTID_POS: %w", err)
		}
		g, _ := r.GetString(0, 0)
		pos.GTID = strings.Clone(g)
		return pos, nil
	}

	if _, err := conn.Execute("FLUSH TABLES WITH READ LOCK"); err != nil {
		return pos, fmt.Errorf("backfill: FLUSH TABLES WITH READ LOCK (needs the RELOAD privilege: GRANT RELOAD ON *.* TO <user>): %w", err)
	}
	unlock := func() { conn.Execute("UNLOCK TABLES") }
	r, err := conn.Execute("SHOW MASTER STATUS")
	if err != nil {
		r, err = conn.Execute("SHOW BINARY LOG STATUS") // MySQL 8.4+
	}
	if err != nil {
		unlock()
		return pos, fmt.Errorf("backfill: read binlog position (needs REPLICATION CLIENT): %w", err)
	}
	if len(r.Values) == 0 {
		unlock()
		return pos, fmt.Errorf("backfill: no binlog position: %w: enable the binary log (log_bin)", ErrPrerequisite)
	}
	f, _ := r.GetString(0, 0)
	p, _ := r.GetInt(0, 1)
	pos.File, pos.Pos = strings.Clone(f), uint32(p)
	if srv.gtid && len(r.Fields) >= 5 {
		g, _ := r.GetString(0, 4)
		pos.GTID = strings.Join(strings.Fields(g), "")
	}
	if _, err := conn.Execute("START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
		unlock()
		return pos, fmt.Errorf("backfill: start snapshot: %w", err)
	}
	unlock()
	return pos, nil
}

// backfiller holds one row back so it can mark the last row of a table
// and of the whole backfill, as Debezium's snapshot field does.
type backfiller struct {
	src     *Source
	emit    func(context.Context, *change.Event) error
	pos     position
	srv     server
	started int64
	rows    int64
	pending *change.Event
	// pendingKey is the key of pending; doneKey that of the last row emitted.
	pendingKey, doneKey []string
}

func (b *backfiller) flush(ctx context.Context) error {
	if b.pending == nil {
		return nil
	}
	ev := b.pending
	b.pending = nil
	b.doneKey = b.pendingKey
	return b.emit(ctx, ev)
}

func (b *backfiller) table(ctx context.Context, conn *client.Conn, t *table, after []string) error {
	cols := make([]string, len(t.cols))
	for i, c := range t.cols {
		cols[i] = quoteIdent(c.name)
	}
	keys := make([]string, len(t.key))
	for i, k := range t.key {
		keys[i] = cols[k]
	}
	base := "SELECT " + strings.Join(cols, ", ") + " FROM " + t.quoted()
	first := true
	b.doneKey = after
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		q := base
		if len(keys) > 0 {
			if after != nil {
				lits := make([]string, len(keys))
				for i, k := range t.key {
					lit, err := keyLiteral(&t.cols[k], after[i])
					if err != nil {
						return fmt.Errorf("backfill %s: resume key: %w", t.id(), err)
					}
					lits[i] = lit
				}
				q += " WHERE (" + strings.Join(keys, ", ") + ") > (" + strings.Join(lits, ", ") + ")"
			}
			q += " ORDER BY " + strings.Join(keys, ", ") + fmt.Sprintf(" LIMIT %d", chunkRows)
		}
		r, err := conn.Execute(q)
		if err != nil {
			return fmt.Errorf("backfill %s: %w", t.id(), err)
		}
		n := len(r.RowDatas)
		for i := range r.Values {
			vals := make([][]byte, len(t.cols))
			for j := range t.cols {
				fv := r.Values[i][j]
				if fv.Type == gomysql.FieldValueTypeNull {
					continue
				}
				vals[j] = []byte(fieldText(fv))
			}
			ev, key, err := b.event(t, vals)
			if err != nil {
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
				return err
			}
			b.pending, b.pendingKey = ev, key
			after = key
		}
		if len(keys) == 0 || n < chunkRows {
			if b.pending != nil && b.pending.Table == t.t {
				b.pending.Source.Snapshot = "last_in_data_collection"
			}
			return nil
		}
		// Everything emitted so far is resumable from doneKey.
		p := b.pos
		p.Table, p.After = t.id(), b.doneKey
		if err := b.emit(ctx, &change.Event{Position: p.encode()}); err != nil {
			return err
		}
	}
}

// fieldText is a text-protocol value as the server sent it.
func fieldText(fv gomysql.FieldValue) string {
	switch v := fv.Value().(type) {
	case []byte:
		return string(v)
	case string:
		return v
	case int64:
		return fmt.Sprint(v)
	case uint64:
		return fmt.Sprint(v)
	case float64:
		return fmt.Sprint(v)
	}
	return fmt.Sprint(fv.Value())
}

// event decodes one row into a read event; key is its primary key, hex.
func (b *backfiller) event(t *table, vals [][]byte) (*change.Event, []string, error) {
	row := make(change.Row, len(vals))
	for i, v := range vals {
		val, err := decodeText(&t.cols[i], v)
		if err != nil {
			return nil, nil, fmt.Errorf("backfill %s column %s: %w", t.id(), t.cols[i].name, err)
		}
		row[i] = val
	}
	key := make([]string, len(t.key))
	for i, k := range t.key {
		key[i] = hex.EncodeToString(vals[k])
	}
	ev := &change.Event{
		Table: t.t,
		Op:    change.OpRead,
		After: row,
		Source: change.Source{
			Connector:    b.src.flavor,
			Name:         b.src.opts.TopicPrefix,
			DB:           t.db,
			Table:        t.name,
			CommitMicros: b.started,
			Snapshot:     "true",
			// Debezium leaves server_id at 0 in snapshot records: no binlog event was read.
			File: b.pos.File,
			Pos:  int64(b.pos.Pos),
		},
		ID: fmt.Sprintf("my:r:%s:%d:%s:%s", b.pos.File, b.pos.Pos, t.id(), strings.Join(key, ",")),
	}
	return ev, key, nil
}

// keyLiteral turns a hex-encoded key value back into an SQL literal.
func keyLiteral(c *column, hexVal string) (string, error) {
	raw, err := hex.DecodeString(hexVal)
	if err != nil {
		return "", err
	}
	switch c.typ.Kind {
	case change.KindInt16, change.KindInt32, change.KindInt64, change.KindYear, change.KindDecimal, change.KindFloat32, change.KindFloat64:
		for _, ch := range raw {
			if !(ch >= '0' && ch <= '9' || ch == '-' || ch == '.' || ch == 'e' || ch == 'E' || ch == '+') {
				return "", fmt.Errorf("bad numeric key %q", raw)
			}
		}
		return string(raw), nil
	case change.KindBytes, change.KindBits, change.KindBool:
		return "X'" + hexVal + "'", nil
	}
	return "_utf8mb4 X'" + hexVal + "'", nil
}
