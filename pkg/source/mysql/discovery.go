package mysql

import (
	"regexp"
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Table discovery while streaming, the same rules as the PostgreSQL
// source: a table created, or renamed into the captured set, is captured
// from its first row, and a table renamed into it is snapshotted while
// streaming (the rows it held before); a captured table that is
// dropped or renamed away is logged when it happens and stops being
// published; a listed table that is missing at start is a warning.

// renameStmt: RENAME TABLE, and ALTER TABLE … RENAME [TO|AS].
var renameStmt = regexp.MustCompile(`(?is)^\s*(?:RENAME\s+TABLE|ALTER\s+.*\bRENAME\s+(?:TO|AS)\b)`)

// createSelect: CREATE TABLE … SELECT as the session wrote it, which the
// binlog holds only in STATEMENT format (in ROW format the server logs
// the table's definition, then its rows as rows events).
var createSelect = regexp.MustCompile(`(?is)^\s*CREATE\s.*\bSELECT\b`)

// wants tells whether db.name belongs to the captured set by name:
// named or matched by source.tables, or, with no list, in the URL's
// database (every non-system database when the URL names none); never
// when source.exclude_tables matches it. A pattern never selects a table
// of a system database; a plain name does.
func (s *Source) wants(db, name string) bool {
	id := db + "." + name
	if s.isSignal(db, name) || systemDBs[db] && !s.sel.Named(id) {
		return false
	}
	return s.sel.Wants(id, s.conn.Database == "" || db == s.conn.Database)
}

// refresh follows a DDL statement that names db.name: a captured table's
// shape is re-read (or, gone, it is dropped from the set with a warning;
// renamedTo, another table renamed onto its name, is snapshotted);
// a table of the captured set that is not captured yet is added when it
// exists (mayAdd: the name is a table the statement creates or renames
// to, not a column).
func (s *Source) refresh(db, name string, mayAdd, renamedTo bool, stmt string) error {
	id := db + "." + name
	s.mu.Lock()
	t := s.tables[id]
	s.mu.Unlock()
	if t == nil {
		if !mayAdd || !s.wants(db, name) {
			return nil
		}
		t = &table{db: db, name: name, mariadb: s.flavor == flavorMariaDB}
		if err := describe(s.db, t, nil); err != nil {
			if strings.Contains(err.Error(), "table not found") {
				return nil // dropped again since, or not a table
			}
			return err
		}
		if len(t.key) == 0 && !s.sel.Listed() {
			// Without a list, tables without a primary key are left out.
			s.log.Warn("a new table without a primary key is not captured; list it in source.tables to capture it (with null message keys)", "table", id)
			return nil
		}
		if err := s.columnProblems(t); err != nil {
			s.log.Warn("a new table is not captured: its key cannot be published whole", "table", id, "problem", err.Error())
			return nil
		}
		s.mu.Lock()
		s.tables[id] = t
		s.capturedChangedLocked()
		s.mu.Unlock()
		s.reportMissing()
		if createSelect.MatchString(stripComments(stmt)) {
			// Created with rows the binlog does not hold: backfilled
			// (or, with backfill off, the stream stops), as for any
			// statement logged as text.
			return s.statementChange(db, name, stmt)
		}
		if !renameStmt.MatchString(stmt) {
			// Created: every row it will hold is in the binlog from here.
			s.log.Info("table created in the captured set: captured from its first row", "table", id, "statement", trimStmt(stmt))
			return nil
		}
		s.log.Info("table renamed into the captured set: captured from its first row, and its rows snapshotted", "table", id, "statement", trimStmt(stmt))
		s.out.Added([]string{id})
		return nil
	}
	s.mu.Lock() // snapshot workers copy the table under mu
	err := describe(s.db, t, t.t)
	s.mu.Unlock()
	if err != nil {
		if strings.Contains(err.Error(), "table not found") {
			s.CapturedGone(id)
			s.mu.Lock()
			delete(s.tables, id)
			s.capturedChangedLocked()
			s.mu.Unlock()
			s.log.Warn("captured table dropped or renamed away: no longer published", "table", id, "statement", trimStmt(stmt))
			s.reportMissing()
			return nil
		}
		return err
	}
	if err := s.columnProblems(t); err != nil {
		// The key changed to take in a column the rules leave out or
		// mask: stop rather than publish keys without it, or with it.
		return err
	}
	if renamedTo {
		// Renamed onto a captured table's name (RENAME TABLE t TO t_old,
		// t_new TO t): another table holds the name now, with rows the
		// binlog holds under another name. A snapshot of the one it
		// replaced ends; its rows are snapshotted, as for any table
		// renamed into the captured set.
		s.CapturedGone(id)
		s.log.Info("table renamed onto a captured table's name: its rows snapshotted", "table", id, "statement", trimStmt(stmt))
		s.out.Added([]string{id})
		return nil
	}
	s.log.Info("table shape re-read after DDL", "table", t.id(), "columns", len(t.cols), "version", t.t.Version)
	return nil
}

func trimStmt(q string) string {
	if len(q) > 200 {
		return q[:200] + "…"
	}
	return q
}

// goneTable is the captured table a rows event belongs to when its table
// is not in the set now: a table of the captured set (by name) that was
// dropped or renamed away after the row was written, met again while
// replaying the binlog (a restart behind, a backlog). With FULL metadata
// the event describes it, and its rows are published like Debezium does;
// without, or for a table left out (no primary key, no list), nil.
func (s *Source) goneTable(db, name string, tm *replication.TableMapEvent) *table {
	if len(tm.ColumnName) != int(tm.ColumnCount) || !s.wants(db, name) {
		return nil
	}
	if len(tm.PrimaryKey) == 0 && !s.sel.Listed() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := db + "." + name
	if s.gone == nil {
		s.gone = map[string]*table{}
	}
	t := s.gone[id]
	if t == nil {
		// No catalog shape: shapeFor rebuilds every column from the event.
		t = &table{db: db, name: name, mariadb: s.flavor == flavorMariaDB,
			t: &change.Table{ID: change.TableID{DB: db, Name: name}}}
		s.gone[id] = t
		s.log.Info("publishing rows of a table that no longer exists under this name (dropped or renamed since), with the shape the binlog logged", "table", id)
	}
	return t
}
