package mysql

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
)

// The captured set rides on every position (position.Tables), so that a
// restart snapshots exactly the tables added to source.tables (or created
// in the database) while the pipeline was down.

// capturedChangedLocked re-encodes the captured set's names; s.mu held.
func (s *Source) capturedChangedLocked() {
	s.tablesJSON, _ = json.Marshal(slices.Sorted(maps.Keys(s.tables))) // strings: cannot fail
}

// encode is p with the captured set and the snapshots' state.
func (s *Source) encode(p position) change.Position {
	s.mu.Lock()
	p.Tables = s.tablesJSON
	s.mu.Unlock()
	p.Snapshot = s.engine.State()
	p.Shapes = nil // the history's own encoding is spliced in (history.attach)
	return s.hist.attach(p.encode())
}

// addedTables are the names not in the recorded set; none when the
// position predates the record (every table was captured then).
func addedTables(recorded json.RawMessage, names []string) []string {
	if recorded == nil {
		return nil
	}
	var had []string
	if json.Unmarshal(recorded, &had) != nil {
		return nil
	}
	var out []string
	for _, n := range names {
		if !slices.Contains(had, n) {
			out = append(out, n)
		}
	}
	return out
}

// legacyState turns an unfinished backfill of an earlier release (tables
// in name order; those before pos.Table done, pos.After the hex key of
// the last row published of pos.Table) into the engine's state.
func legacyState(pos position, names []string) snapshot.State {
	var st snapshot.State
	for _, n := range slices.Sorted(slices.Values(names)) {
		if pos.Table != "" && n < pos.Table {
			st.Done = append(st.Done, n)
			continue
		}
		ts := snapshot.TableState{Table: n, Initial: true}
		if n == pos.Table {
			for _, h := range pos.After {
				raw, err := hex.DecodeString(h)
				if err != nil {
					ts.Key = nil
					break
				}
				ts.Key = append(ts.Key, raw)
			}
		}
		st.Tables = append(st.Tables, ts)
	}
	return st
}

// binlogNow is the binlog position of the server now (needs REPLICATION
// CLIENT, MariaDB: BINLOG MONITOR): streaming starts there, and the
// initial snapshot is read while it streams.
func (s *Source) binlogNow(conn *client.Conn, srv server) (position, error) {
	pos := position{Flavor: s.flavor}
	r, err := conn.Execute("SHOW MASTER STATUS")
	if err != nil {
		r, err = conn.Execute("SHOW BINARY LOG STATUS") // MySQL 8.4+
	}
	if err != nil {
		return pos, fmt.Errorf("read the binlog position (needs REPLICATION CLIENT; MariaDB: BINLOG MONITOR): %w", err)
	}
	if len(r.Values) == 0 {
		return pos, fmt.Errorf("no binlog position: %w: enable the binary log (log_bin)", ErrPrerequisite)
	}
	f, _ := r.GetString(0, 0)
	p, _ := r.GetInt(0, 1)
	pos.File, pos.Pos = strings.Clone(f), uint32(p)
	switch {
	case s.flavor == flavorMariaDB:
		r, err := conn.Execute(fmt.Sprintf("SELECT BINLOG_GTID_POS(%s, %d)", quoteString(pos.File), pos.Pos))
		if err != nil {
			return pos, fmt.Errorf("BINLOG_GTID_POS: %w", err)
		}
		g, _ := r.GetString(0, 0)
		pos.GTID = strings.Clone(g)
	case srv.gtid && len(r.Fields) >= 5:
		g, _ := r.GetString(0, 4)
		pos.GTID = strings.Join(strings.Fields(g), "")
	}
	return pos, nil
}

// sortedKeys returns the keys of a name set, sorted.
func sortedKeys(set map[string]bool) []string { return slices.Sorted(maps.Keys(set)) }
