package mysql

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// Without binlog_row_metadata = FULL a rows event says only its column
// types, so rows are decoded with the catalog's shape, which is the shape
// at the end of the binlog. That is right for a row unless a schema change
// of its table comes after it in the binlog and before the end: a restart
// far behind, or a stream lagging behind a migration. checkReplayable
// reads the binlog from a position to the current end looking for such a
// row (a row of a captured table, then a DDL statement naming the table)
// and refuses to go on rather than publish values under the wrong names.

// checkReplayable scans the binlog from (file, pos) to the server's
// current end. serverID must differ from any running stream's.
func (s *Source) checkReplayable(ctx context.Context, file string, pos uint32, serverID uint32) error {
	endFile, endPos, err := binlogEnd(s.db)
	if err != nil {
		return err
	}
	if !binlogBefore(file, pos, endFile, endPos) {
		return nil
	}
	cfg, err := s.syncerConfig(serverID)
	if err != nil {
		return err
	}
	syncer := replication.NewBinlogSyncer(cfg)
	defer syncer.Close()
	bs, err := syncer.StartSync(gomysql.Position{Name: file, Pos: pos})
	if err != nil {
		return classify(fmt.Errorf("scan binlog for schema changes: %w", err))
	}
	written := map[string]string{} // captured table → where its first row in the range is
	for {
		ev, err := bs.GetEvent(ctx)
		if err != nil {
			return classify(fmt.Errorf("scan binlog for schema changes: %w", err))
		}
		h := ev.Header
		at := fmt.Sprintf("%s:%d", file, int64(h.LogPos)-int64(h.EventSize))
		switch e := ev.Event.(type) {
		case *replication.RotateEvent:
			file = string(e.NextLogName)
			continue
		case *replication.RowsEvent:
			id := string(e.Table.Schema) + "." + string(e.Table.Table)
			s.mu.Lock()
			captured := s.tables[id] != nil
			s.mu.Unlock()
			if captured && written[id] == "" {
				written[id] = at
			}
		case *replication.QueryEvent:
			q := strings.TrimSpace(string(e.Query))
			if u := strings.ToUpper(q); strings.HasPrefix(u, "TRUNCATE") || strings.HasPrefix(u, "CREATE") {
				break // no change of an existing table's shape
			}
			for _, m := range ddlTable.FindAllStringSubmatch(q, -1) {
				db, name := string(e.Schema), m[1]
				if i := dotOutsideQuotes(name); i >= 0 {
					db, name = unquote(name[:i]), name[i+1:]
				}
				id := db + "." + unquote(name)
				if first := written[id]; first != "" {
					return fmt.Errorf("%s: its rows from %s on were written before a schema change at %s (%s), and the server does not log column names with rows (binlog_row_metadata is not FULL), so they cannot be decoded without guessing; set binlog_row_metadata = FULL (SET GLOBAL and the server configuration; on RDS/Aurora, the DB parameter group) so that later changes decode, and backfill again: %w",
						id, first, at, trimStmt(q), source.ErrResnapshotRequired)
				}
			}
		}
		if h.LogPos > 0 && !binlogBefore(file, h.LogPos, endFile, endPos) {
			return nil
		}
	}
}

// binlogEnd reads the server's current binlog file and position.
func binlogEnd(conn *client.Conn) (string, uint32, error) {
	r, err := conn.Execute("SHOW MASTER STATUS")
	if err != nil {
		r, err = conn.Execute("SHOW BINARY LOG STATUS") // MySQL 8.4+
	}
	if err != nil {
		return "", 0, fmt.Errorf("read binlog position (needs REPLICATION CLIENT / BINLOG MONITOR): %w", err)
	}
	if len(r.Values) == 0 {
		return "", 0, fmt.Errorf("no binlog position: %w: enable the binary log (log_bin)", ErrPrerequisite)
	}
	f, _ := r.GetString(0, 0)
	p, _ := r.GetInt(0, 1)
	return strings.Clone(f), uint32(p), nil
}

// binlogBefore orders binlog coordinates (file names share a base name
// and a zero-padded, growing number).
func binlogBefore(f1 string, p1 uint32, f2 string, p2 uint32) bool {
	if f1 != f2 {
		return f1 < f2
	}
	return p1 < p2
}

// scanServerID is the server id of the replay scan's connection: a
// connection with the stream's id would make the server drop the other.
func (s *Source) scanServerID() uint32 { return s.serverID ^ 0x40000000 }
