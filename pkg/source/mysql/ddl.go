package mysql

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	tcharset "github.com/pingcap/tidb/pkg/parser/charset"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// The TiDB parser knows every MySQL character set and its collations but
// accepts only the few TiDB supports ("Unknown character set: 'cp1251'"):
// the history needs each one a column may have, as charset.go converts.
func init() {
	for name := range charsetDecoders {
		if cs, err := tcharset.GetCharsetInfo(name); cs != nil && err != nil {
			tcharset.AddCharset(cs)
		}
	}
}

// DDL applied to the schema history (history.go) with the TiDB parser
// that go-mysql brings in. Every statement that changes a table's shape is
// either applied exactly or refused with an error naming the table, the
// binlog position and what to do: a shape is never guessed. Statements
// that change no shape (indexes, foreign keys, partitions, engine,
// TRUNCATE) leave the history alone; statements the parser cannot read
// stop the stream only when they name a table the history follows.

// errDDL carries why a statement cannot be applied; apply adds the table,
// position and what to do.
type errDDL struct {
	table  tableName
	reason string
}

func (e *errDDL) Error() string { return e.reason }

func refuse(n tableName, format string, args ...any) error {
	return &errDDL{table: n, reason: fmt.Sprintf(format, args...)}
}

// MariaDB syntax the TiDB parser does not know, rewritten to what it does.
var (
	createOrReplace = regexp.MustCompile(`(?is)^(\s*(?:/\*[^!].*?\*/\s*)*CREATE\s+)OR\s+REPLACE\s+`)
	alterOnline     = regexp.MustCompile(`(?is)^(\s*(?:/\*[^!].*?\*/\s*)*ALTER\s+)ONLINE\s+`)
)

// apply applies one statement, logged at file:pos (the end of its event)
// with defaultDB as the session's database, to the history.
func (h *history) apply(stmt, defaultDB, file string, pos uint32) error {
	if h.seedAt != "" && !binlogBefore(h.seedF, h.seedP, file, pos) {
		return nil // logged before the catalog was read: already in the shapes
	}
	at := fmt.Sprintf("%s:%d", file, pos)
	replace := createOrReplace.MatchString(stmt)
	q := createOrReplace.ReplaceAllString(stmt, "${1}")
	q = alterOnline.ReplaceAllString(q, "${1}")
	nodes, err := parseDDL(q)
	if err != nil {
		// Unreadable: an error only when it names a table followed here.
		for _, m := range ddlTable.FindAllStringSubmatch(stmt, -1) {
			db, name := defaultDB, m[1]
			if i := dotOutsideQuotes(name); i >= 0 {
				db, name = unquote(name[:i]), name[i+1:]
			}
			n := h.norm(tableName{db, unquote(name)})
			if h.tables[n] != nil || h.tracked(n.db) && h.wants(n.db, n.name) {
				return h.refusal(refuse(n, "the SQL parser cannot read it (%v)", err), stmt, at)
			}
		}
		return nil
	}
	for _, node := range nodes {
		if err := h.applyNode(node, defaultDB, at, replace); err != nil {
			return h.refusal(err, stmt, at)
		}
	}
	return nil
}

// refusal is the error a stream stops with.
func (h *history) refusal(err error, stmt, at string) error {
	var d *errDDL
	if !errors.As(err, &d) {
		return err
	}
	return fmt.Errorf("%s at %s: the schema history cannot follow %q: %s. Without binlog_row_metadata = FULL, Tributary decodes binlog rows with the shapes it derives from the DDL it reads, and does not guess one it cannot derive; backfill the pipeline again from now (delete its checkpoint), and set binlog_row_metadata = FULL where the server has it (MySQL ≥ 8.0.1, MariaDB ≥ 10.5; RDS/Aurora: the DB parameter group), with which no history is needed: %w",
		d.table, at, trimStmt(stmt), d.reason, source.ErrResnapshotRequired)
}

// parseDDL parses with the TiDB parser; a panic inside it is an error.
func parseDDL(q string) (nodes []ast.StmtNode, err error) {
	defer func() {
		if r := recover(); r != nil {
			nodes, err = nil, fmt.Errorf("parser failure: %v", r)
		}
	}()
	nodes, _, err = parser.New().Parse(q, "", "")
	return nodes, err
}

func (h *history) name(tn *ast.TableName, defaultDB string) tableName {
	db := tn.Schema.O
	if db == "" {
		db = defaultDB
	}
	return h.norm(tableName{db, tn.Name.O})
}

func (h *history) applyNode(node ast.StmtNode, defaultDB, at string, replace bool) error {
	switch s := node.(type) {
	case *ast.AlterTableStmt:
		return h.alter(s, defaultDB, at)
	case *ast.CreateTableStmt:
		return h.create(s, defaultDB, at, replace)
	case *ast.DropTableStmt:
		if s.IsView || s.TemporaryKeyword != ast.TemporaryNone {
			return nil
		}
		for _, tn := range s.Tables {
			h.drop(h.name(tn, defaultDB))
		}
	case *ast.RenameTableStmt:
		for _, tt := range s.TableToTables {
			if err := h.rename(h.name(tt.OldTable, defaultDB), h.name(tt.NewTable, defaultDB), at); err != nil {
				return err
			}
		}
	case *ast.DropDatabaseStmt:
		db := s.Name.O
		for n := range h.tables {
			if n.db == db || h.lower && strings.EqualFold(n.db, db) {
				h.drop(n)
			}
		}
	case *ast.CreateDatabaseStmt:
		h.dbCharset(s.Name.O, s.Options)
	case *ast.AlterDatabaseStmt:
		db := s.Name.O
		if s.AlterDefaultDatabase || db == "" {
			db = defaultDB
		}
		h.dbCharset(db, s.Options)
	}
	// TRUNCATE, CREATE/DROP INDEX, views, users, grants…: no table's shape.
	return nil
}

func (h *history) dbCharset(db string, opts []*ast.DatabaseOption) {
	if !h.tracked(db) {
		return
	}
	for _, o := range opts {
		switch o.Tp {
		case ast.DatabaseOptionCharset:
			h.dbs[db] = strings.ToLower(o.Value)
		case ast.DatabaseOptionCollate:
			h.dbs[db] = charsetOf(o.Value)
		}
	}
	if _, ok := h.dbs[db]; !ok {
		h.dbs[db] = ""
	}
	h.enc = nil
}

// unknown handles a table whose new shape cannot be derived: refused when
// the table is captured, forgotten otherwise (a later statement that
// makes it captured, a RENAME or CREATE … LIKE, is refused then).
func (h *history) unknown(n tableName, format string, args ...any) error {
	if h.wants(n.db, n.name) {
		return refuse(n, format, args...)
	}
	h.drop(n)
	return nil
}

func (h *history) rename(from, to tableName, at string) error {
	t := h.tables[from]
	h.drop(from)
	if !h.tracked(to.db) {
		return nil
	}
	if t == nil {
		if h.tracked(from.db) || h.wants(to.db, to.name) {
			return h.unknown(to, "the table renamed to it (%s) has no shape in the history", from)
		}
		return nil
	}
	h.set(to, &histTable{cols: t.cols, key: t.key, charset: t.charset}, at)
	return nil
}

func (h *history) create(s *ast.CreateTableStmt, defaultDB, at string, replace bool) error {
	n := h.name(s.Table, defaultDB)
	if s.TemporaryKeyword != ast.TemporaryNone || !h.tracked(n.db) {
		return nil
	}
	if s.IfNotExists && h.tables[n] != nil && !replace {
		return nil
	}
	if s.ReferTable != nil {
		src := h.tables[h.name(s.ReferTable, defaultDB)]
		if src == nil {
			return h.unknown(n, "CREATE TABLE … LIKE %s: that table has no shape in the history", h.name(s.ReferTable, defaultDB))
		}
		h.set(n, &histTable{cols: append([]column(nil), src.cols...), key: append([]string(nil), src.key...), charset: src.charset}, at)
		return nil
	}
	if s.Select != nil {
		return h.unknown(n, "CREATE TABLE … SELECT: the columns come from the query")
	}
	t := &histTable{charset: h.dbs[n.db]}
	for _, o := range s.Options {
		switch o.Tp {
		case ast.TableOptionCharset:
			t.charset = strings.ToLower(o.StrValue)
		case ast.TableOptionCollate:
			t.charset = charsetOf(o.StrValue)
		}
	}
	for _, d := range s.Cols {
		c, pk, err := h.columnFromDef(n, d, t.charset)
		if err != nil {
			return h.unknown(n, "%v", err)
		}
		if colIndex(t.cols, c.name) >= 0 {
			return h.unknown(n, "column %s twice", c.name)
		}
		t.cols = append(t.cols, c)
		if pk {
			t.key = []string{c.name}
		}
	}
	if len(t.cols) == 0 {
		return h.unknown(n, "a table without columns")
	}
	for _, c := range s.Constraints {
		if c.Tp == ast.ConstraintPrimaryKey {
			if err := setKey(n, t, c.Keys); err != nil {
				return h.unknown(n, "%v", err)
			}
		}
	}
	h.set(n, t, at)
	return nil
}

// setKey makes keys the primary key; its columns become NOT NULL.
func setKey(n tableName, t *histTable, keys []*ast.IndexPartSpecification) error {
	t.key = nil
	for _, k := range keys {
		if k.Column == nil {
			return refuse(n, "a primary key on an expression")
		}
		i := colIndex(t.cols, k.Column.Name.O)
		if i < 0 {
			return refuse(n, "primary key column %s is not a column", k.Column.Name.O)
		}
		t.cols[i].nullable = false
		t.key = append(t.key, t.cols[i].name)
	}
	return nil
}

// alterNoShape are the ALTER TABLE clauses that change no column.
var alterNoShape = map[ast.AlterTableType]bool{
	ast.AlterTableDropIndex: true, ast.AlterTableDropForeignKey: true, ast.AlterTableRenameIndex: true,
	ast.AlterTableLock: true, ast.AlterTableAlgorithm: true, ast.AlterTableForce: true,
	ast.AlterTableEnableKeys: true, ast.AlterTableDisableKeys: true, ast.AlterTableIndexInvisible: true,
	ast.AlterTableAddPartitions: true, ast.AlterTableCoalescePartitions: true, ast.AlterTableDropPartition: true,
	ast.AlterTableTruncatePartition: true, ast.AlterTablePartition: true, ast.AlterTableRemovePartitioning: true,
	ast.AlterTableWithValidation: true, ast.AlterTableWithoutValidation: true, ast.AlterTableRebuildPartition: true,
	ast.AlterTableReorganizePartition: true, ast.AlterTableCheckPartitions: true, ast.AlterTableExchangePartition: true,
	ast.AlterTableOptimizePartition: true, ast.AlterTableRepairPartition: true, ast.AlterTableImportPartitionTablespace: true,
	ast.AlterTableDiscardPartitionTablespace: true, ast.AlterTableAlterCheck: true, ast.AlterTableDropCheck: true,
	ast.AlterTableImportTablespace: true, ast.AlterTableDiscardTablespace: true, ast.AlterTableOrderByColumns: true,
	ast.AlterTableWriteable: true, ast.AlterTablePartitionAttributes: true, ast.AlterTablePartitionOptions: true,
}

func (h *history) alter(s *ast.AlterTableStmt, defaultDB, at string) error {
	n := h.name(s.Table, defaultDB)
	old := h.tables[n]
	if old == nil {
		if h.tracked(n.db) && h.wants(n.db, n.name) {
			return refuse(n, "the table has no shape in the history")
		}
		return nil
	}
	t := &histTable{cols: append([]column(nil), old.cols...), key: append([]string(nil), old.key...), charset: old.charset}
	changed := false
	for _, sp := range s.Specs {
		if alterNoShape[sp.Tp] {
			continue
		}
		if sp.Tp == ast.AlterTableRenameTable {
			if changed {
				h.set(n, t, at)
				changed = false
			}
			to := h.name(sp.NewTable, n.db)
			if err := h.rename(n, to, at); err != nil {
				return err
			}
			n = to
			if t = h.tables[n]; t == nil {
				return nil
			}
			t = &histTable{cols: append([]column(nil), t.cols...), key: append([]string(nil), t.key...), charset: t.charset}
			continue
		}
		if err := h.alterSpec(n, t, sp); err != nil {
			return h.unknown(n, "%v", err)
		}
		changed = true
	}
	if len(t.cols) == 0 {
		return h.unknown(n, "no column left")
	}
	if changed {
		h.set(n, t, at)
	}
	return nil
}

// alterSpec applies one clause of an ALTER TABLE to t.
func (h *history) alterSpec(n tableName, t *histTable, sp *ast.AlterTableSpec) error {
	switch sp.Tp {
	case ast.AlterTableAddColumns:
		for i, d := range sp.NewColumns {
			c, pk, err := h.columnFromDef(n, d, t.charset)
			if err != nil {
				return err
			}
			if colIndex(t.cols, c.name) >= 0 {
				if sp.IfNotExists {
					continue
				}
				return refuse(n, "ADD COLUMN %s: the history has that column already", c.name)
			}
			var p *ast.ColumnPosition
			if i == 0 && len(sp.NewColumns) == 1 {
				p = sp.Position
			}
			if t.cols, err = insertAt(n, t.cols, c, p); err != nil {
				return err
			}
			if pk {
				t.key = []string{c.name}
			}
		}
	case ast.AlterTableDropColumn:
		i := colIndex(t.cols, sp.OldColumnName.Name.O)
		if i < 0 {
			if sp.IfExists {
				return nil
			}
			return refuse(n, "DROP COLUMN %s: no such column in the history", sp.OldColumnName.Name.O)
		}
		name := t.cols[i].name
		t.cols = append(t.cols[:i:i], t.cols[i+1:]...)
		t.key = without(t.key, name)
	case ast.AlterTableModifyColumn, ast.AlterTableChangeColumn:
		if len(sp.NewColumns) != 1 {
			return refuse(n, "MODIFY/CHANGE with %d columns", len(sp.NewColumns))
		}
		oldName := sp.NewColumns[0].Name.Name.O
		if sp.Tp == ast.AlterTableChangeColumn {
			oldName = sp.OldColumnName.Name.O
		}
		i := colIndex(t.cols, oldName)
		if i < 0 {
			if sp.IfExists {
				return nil
			}
			return refuse(n, "column %s: no such column in the history", oldName)
		}
		c, pk, err := h.columnFromDef(n, sp.NewColumns[0], t.charset)
		if err != nil {
			return err
		}
		if j := colIndex(t.cols, c.name); j >= 0 && j != i {
			return refuse(n, "CHANGE %s to %s: the history has a column %s already", oldName, c.name, c.name)
		}
		was := t.cols[i].name
		t.key = renamed(t.key, was, c.name)
		if contains(t.key, c.name) {
			c.nullable = false
		}
		if sp.Position == nil || sp.Position.Tp == ast.ColumnPositionNone {
			t.cols[i] = c
		} else {
			rest := append(t.cols[:i:i], t.cols[i+1:]...)
			if t.cols, err = insertAt(n, rest, c, sp.Position); err != nil {
				return err
			}
		}
		if pk {
			t.key = []string{c.name}
		}
	case ast.AlterTableRenameColumn:
		i := colIndex(t.cols, sp.OldColumnName.Name.O)
		if i < 0 {
			return refuse(n, "RENAME COLUMN %s: no such column in the history", sp.OldColumnName.Name.O)
		}
		to := sp.NewColumnName.Name.O
		if j := colIndex(t.cols, to); j >= 0 && j != i {
			return refuse(n, "RENAME COLUMN to %s: the history has that column already", to)
		}
		t.key = renamed(t.key, t.cols[i].name, to)
		t.cols[i].name = to
	case ast.AlterTableAlterColumn:
		if len(sp.NewColumns) != 1 {
			return refuse(n, "ALTER COLUMN with %d columns", len(sp.NewColumns))
		}
		d := sp.NewColumns[0]
		i := colIndex(t.cols, d.Name.Name.O)
		if i < 0 {
			return refuse(n, "ALTER COLUMN %s: no such column in the history", d.Name.Name.O)
		}
		// SET DEFAULT v is an option of no type holding v (the TiDB
		// parser's AlterTableAlterColumn), DROP DEFAULT no option.
		c := &t.cols[i]
		c.dfltRaw, c.extra = nil, ""
		for _, o := range d.Options {
			if o.Expr != nil && (o.Tp == ast.ColumnOptionDefaultValue || o.Tp == ast.ColumnOptionNoOption) {
				c.dfltRaw, c.extra = h.defaultRaw(c, o.Expr)
			}
		}
	case ast.AlterTableAddConstraint:
		if sp.Constraint != nil && sp.Constraint.Tp == ast.ConstraintPrimaryKey {
			return setKey(n, t, sp.Constraint.Keys)
		}
	case ast.AlterTableDropPrimaryKey:
		t.key = nil
	case ast.AlterTableOption:
		for _, o := range sp.Options {
			var cs string
			switch o.Tp {
			case ast.TableOptionCharset:
				cs = strings.ToLower(o.StrValue)
			case ast.TableOptionCollate:
				cs = charsetOf(o.StrValue)
			default:
				continue // engine, comment, row format…: no column
			}
			if o.UintValue == ast.TableOptionCharsetWithConvertTo {
				if cs == "binary" {
					return refuse(n, "CONVERT TO CHARACTER SET binary changes the columns' types")
				}
				for i := range t.cols {
					if t.cols[i].charset != "" {
						t.cols[i].charset = cs
					}
				}
			}
			t.charset = cs
		}
	default:
		return refuse(n, "ALTER TABLE clause %d is not one the history follows", sp.Tp)
	}
	return nil
}

// insertAt puts c into cols at p (nil or none: last).
func insertAt(n tableName, cols []column, c column, p *ast.ColumnPosition) ([]column, error) {
	at := len(cols)
	if p != nil {
		switch p.Tp {
		case ast.ColumnPositionFirst:
			at = 0
		case ast.ColumnPositionAfter:
			i := colIndex(cols, p.RelativeColumn.Name.O)
			if i < 0 {
				return nil, refuse(n, "AFTER %s: no such column in the history", p.RelativeColumn.Name.O)
			}
			at = i + 1
		}
	}
	out := make([]column, 0, len(cols)+1)
	out = append(out, cols[:at]...)
	out = append(out, c)
	return append(out, cols[at:]...), nil
}

func without(names []string, name string) []string {
	var out []string
	for _, k := range names {
		if !strings.EqualFold(k, name) {
			out = append(out, k)
		}
	}
	return out
}

func renamed(names []string, from, to string) []string {
	out := append([]string(nil), names...)
	for i := range out {
		if strings.EqualFold(out[i], from) {
			out[i] = to
		}
	}
	return out
}

func contains(names []string, name string) bool {
	for _, k := range names {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}
