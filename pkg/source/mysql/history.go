package mysql

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// The schema history: without binlog_row_metadata = FULL (MySQL 5.7,
// MariaDB < 10.5, an RDS parameter group left at MINIMAL) a rows event
// says only its columns' types, so the names and the rest must come from
// what the table looked like at the row's position. The history keeps,
// for every table of the captured set's databases, its shape at the
// position the stream has reached; each DDL statement in the binlog is
// applied to it (ddl.go) and each row decoded with it. It travels inside
// the checkpoint's position ("shapes"), which is the one record the
// pipeline writes atomically with the position it belongs to: a separate
// record could be written before or after the position and be one DDL off
// after a crash. With FULL metadata the table map itself is authoritative
// and no history is kept.
//
// A history starts from the catalog (information_schema), which is the
// shape at the end of the binlog, not at the checkpoint: it is taken at a
// known end position ("seeded"), DDL logged up to it is already in it and
// is skipped, and the binlog from the checkpoint to it is scanned first
// (checkReplayable) so that no row there predates a DDL of its table.

// histTable is one table's shape in the history.
type histTable struct {
	cols    []column
	key     []string // primary key column names, in key order
	charset string   // the table's default character set, which added columns inherit
	version uint64   // change.Table.Version: one more at every change of shape
	at      string   // the binlog position of the DDL that made the shape, or "catalog"
	t       *table   // built on first use, so that rows of one shape share one change.Table
}

type tableName struct{ db, name string }

func (n tableName) String() string { return n.db + "." + n.name }

// history is the schema history of one source.
type history struct {
	mariadb bool
	lower   bool              // lower_case_table_names ≠ 0: table names are compared in lower case
	scope   string            // the captured set it was kept for (source.tables, the URL's database)
	allDBs  bool              // every non-system database is tracked (no list, no database in the URL)
	dbs     map[string]string // tracked databases → default character set ("" when unknown)
	tables  map[tableName]*histTable
	seedAt  string // "file:pos" of the catalog read; "" once the stream is past it
	seedF   string // seedAt's file and position
	seedP   uint32 //
	wants   func(db, name string) bool
	listed  bool   // source.tables is set: tables without a primary key are captured too
	enc     []byte // the encoding, cached until the next change
	changed func(id, at string, t *table)
}

// tracked tells whether the tables of db are kept.
func (h *history) tracked(db string) bool {
	if h.allDBs {
		return !systemDBs[db]
	}
	_, ok := h.dbs[db]
	return ok
}

func (h *history) norm(n tableName) tableName {
	if h.lower {
		n.db, n.name = strings.ToLower(n.db), strings.ToLower(n.name)
	}
	return n
}

// set records t's new shape.
func (h *history) set(n tableName, t *histTable, at string) {
	if old := h.tables[n]; old != nil {
		t.version = old.version + 1
	}
	t.at, t.t = at, nil
	h.tables[n] = t
	h.enc = nil
	if h.changed != nil {
		h.changed(n.String(), at, t.table(n, h.mariadb))
	}
}

func (h *history) drop(n tableName) {
	if _, ok := h.tables[n]; ok {
		delete(h.tables, n)
		h.enc = nil
	}
}

// table is the decoder's view of the shape.
func (ht *histTable) table(n tableName, mariadb bool) *table {
	if ht.t != nil {
		return ht.t
	}
	t := &table{db: n.db, name: n.name, mariadb: mariadb, cols: ht.cols}
	t.t = &change.Table{ID: change.TableID{DB: n.db, Name: n.name}, Version: ht.version}
	for i := range ht.cols {
		c := &ht.cols[i]
		c.typ = columnType(c)
		d := columnDefault(c, c.dfltRaw, c.extra, mariadb)
		t.dflts = append(t.dflts, d)
		t.t.Columns = append(t.t.Columns, change.Column{Name: c.name, Type: c.typ, Optional: c.nullable, Default: d})
	}
	for _, k := range ht.key {
		if i := colIndex(ht.cols, k); i >= 0 {
			t.key = append(t.key, i)
		}
	}
	t.t.Key = t.key
	ht.t = t
	return t
}

// rowTable is the table a MINIMAL rows event of db.name is decoded with:
// nil when the table is not captured at this position.
func (h *history) rowTable(db, name string, tm *replication.TableMapEvent, flavor, at string) (*table, error) {
	n := h.norm(tableName{db, name})
	ht := h.tables[n]
	if ht == nil || !h.wants(n.db, n.name) || (!h.listed && len(ht.key) == 0) {
		return nil, nil
	}
	t := ht.table(n, h.mariadb)
	logged := loggedColumns(tm, flavor, nil) // compared by type only
	if len(logged) != len(t.cols) || !sameColumns(logged, t.cols, false) {
		return nil, fmt.Errorf("%s at %s: the binlog row has %d columns (%s), the schema history has %d (%s, since %s): a schema change is missing from the binlog (made with sql_log_bin = 0, or on another server), so the row cannot be decoded without guessing; backfill the pipeline again (delete its checkpoint), and set binlog_row_metadata = FULL where the server has it (MySQL ≥ 8.0.1, MariaDB ≥ 10.5; RDS/Aurora: the DB parameter group): %w",
			n, at, len(logged), typeList(logged), len(t.cols), typeList(t.cols), ht.at, source.ErrResnapshotRequired)
	}
	return t, nil
}

// passed clears the seed position once the stream is past it: from then
// on every DDL applies, whatever the binlog file names (a failover).
func (h *history) passed(file string, pos uint32) {
	if h != nil && h.seedAt != "" && binlogBefore(h.seedF, h.seedP, file, pos) {
		h.seedAt, h.seedF, h.seedP, h.enc = "", "", 0, nil
	}
}

// attach adds the history to an encoded position. It splices the cached
// encoding in rather than marshalling it at every commit.
func (h *history) attach(pos change.Position) change.Position {
	if h == nil || len(pos) < 2 {
		return pos
	}
	if h.enc == nil {
		h.enc = h.encode()
	}
	out := make([]byte, 0, len(pos)+len(h.enc)+12)
	out = append(out, pos[:len(pos)-1]...)
	out = append(out, `,"shapes":`...)
	out = append(out, h.enc...)
	return append(out, '}')
}

// The history's JSON form, inside the position.
type historyJSON struct {
	Scope  string            `json:"scope"`
	AllDBs bool              `json:"all_dbs,omitempty"`
	Lower  bool              `json:"lower,omitempty"`
	DBs    map[string]string `json:"dbs,omitempty"`
	Seeded string            `json:"seeded,omitempty"`
	Tables []tableJSON       `json:"tables"`
}

type tableJSON struct {
	DB      string       `json:"db"`
	Name    string       `json:"name"`
	Charset string       `json:"cs,omitempty"`
	Version uint64       `json:"v,omitempty"`
	At      string       `json:"at,omitempty"`
	Key     []string     `json:"key,omitempty"`
	Cols    []columnJSON `json:"cols"`
}

type columnJSON struct {
	Name       string  `json:"n"`
	DataType   string  `json:"d"`
	ColumnType string  `json:"t"`
	Nullable   bool    `json:"null,omitempty"`
	Precision  int     `json:"p"`
	Scale      int     `json:"s"`
	Fsp        int     `json:"f,omitempty"`
	Charset    string  `json:"cs,omitempty"`
	Octets     int     `json:"o"`
	Default    *string `json:"df,omitempty"`
	Extra      string  `json:"x,omitempty"`
}

func (h *history) encode() []byte {
	j := historyJSON{Scope: h.scope, AllDBs: h.allDBs, Lower: h.lower, DBs: h.dbs, Seeded: h.seedAt, Tables: []tableJSON{}}
	for n, t := range h.tables {
		tj := tableJSON{DB: n.db, Name: n.name, Charset: t.charset, Version: t.version, At: t.at, Key: t.key}
		for _, c := range t.cols {
			cj := columnJSON{Name: c.name, DataType: c.dataType, ColumnType: c.columnType, Nullable: c.nullable,
				Precision: c.precision, Scale: c.scale, Fsp: c.fsp, Charset: c.charset, Octets: c.octets, Extra: c.extra}
			if c.dfltRaw != nil {
				s := string(c.dfltRaw)
				cj.Default = &s
			}
			tj.Cols = append(tj.Cols, cj)
		}
		j.Tables = append(j.Tables, tj)
	}
	sort.Slice(j.Tables, func(a, b int) bool {
		return j.Tables[a].DB+"\x00"+j.Tables[a].Name < j.Tables[b].DB+"\x00"+j.Tables[b].Name
	})
	b, _ := json.Marshal(j) // strings, numbers, bools: cannot fail
	return b
}

// decodeHistory reads a history from a checkpoint (outside bytes: every
// field is checked before it is used).
func decodeHistory(raw []byte, mariadb bool) (*history, error) {
	var j historyJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("mysql position: schema history: %w", err)
	}
	h := &history{mariadb: mariadb, scope: j.Scope, allDBs: j.AllDBs, lower: j.Lower, dbs: j.DBs, tables: map[tableName]*histTable{}}
	if h.dbs == nil {
		h.dbs = map[string]string{}
	}
	if j.Seeded != "" {
		i := strings.LastIndexByte(j.Seeded, ':')
		var p uint32
		if _, err := fmt.Sscan(j.Seeded[i+1:], &p); i <= 0 || err != nil {
			return nil, fmt.Errorf("mysql position: schema history: bad seeded position %q", trunc([]byte(j.Seeded)))
		}
		h.seedAt, h.seedF, h.seedP = j.Seeded, j.Seeded[:i], p
	}
	for _, tj := range j.Tables {
		n := tableName{tj.DB, tj.Name}
		if tj.Name == "" || len(tj.Cols) == 0 {
			return nil, fmt.Errorf("mysql position: schema history: table %q has no name or no columns", n.String())
		}
		if h.tables[n] != nil {
			return nil, fmt.Errorf("mysql position: schema history: table %s twice", n)
		}
		t := &histTable{charset: tj.Charset, version: tj.Version, at: tj.At, key: tj.Key}
		for _, cj := range tj.Cols {
			if cj.Name == "" {
				return nil, fmt.Errorf("mysql position: schema history: %s has a column without a name", n)
			}
			if colIndex(t.cols, cj.Name) >= 0 {
				return nil, fmt.Errorf("mysql position: schema history: %s: column %q twice", n, cj.Name)
			}
			c := column{name: cj.Name, dataType: cj.DataType, columnType: cj.ColumnType, nullable: cj.Nullable,
				precision: cj.Precision, scale: cj.Scale, fsp: cj.Fsp, charset: cj.Charset, octets: cj.Octets, extra: cj.Extra}
			if cj.Default != nil {
				c.dfltRaw = []byte(*cj.Default)
			}
			t.cols = append(t.cols, c)
		}
		for _, k := range t.key {
			if colIndex(t.cols, k) < 0 {
				return nil, fmt.Errorf("mysql position: schema history: %s: key column %q is not a column", n, k)
			}
		}
		h.tables[n] = t
	}
	h.enc = nil
	return h, nil
}

func colIndex(cols []column, name string) int {
	for i := range cols {
		if strings.EqualFold(cols[i].name, name) { // column names are case-insensitive
			return i
		}
	}
	return -1
}

// historyScope says which captured set a history was kept for: a history
// of other databases than the configuration's now is not used.
func (s *Source) historyScope() string {
	tables := append([]string(nil), s.opts.Config.Tables...)
	sort.Strings(tables)
	scope := "db=" + s.conn.Database + ";tables=" + strings.Join(tables, ",")
	if ex := s.opts.Config.ExcludeTables; len(ex) > 0 {
		ex = slices.Clone(ex)
		sort.Strings(ex)
		scope += ";exclude=" + strings.Join(ex, ",")
	}
	return scope
}

// startHistory sets s.hist for a stream from pos: a history without FULL
// metadata, and after a switch to FULL while the checkpoint carries one
// (it still decodes the rows logged before, which carry no names).
func (s *Source) startHistory(ctx context.Context, srv server, pos position, st source.Stream) error {
	s.hist = nil
	if srv.fullMetadata && len(pos.Shapes) == 0 {
		return nil
	}
	if !srv.fullMetadata {
		s.log.Warn("binlog_row_metadata is not FULL: binlog rows are decoded with a schema history kept in the checkpoint and derived from the DDL in the binlog; set binlog_row_metadata = FULL where the server has it (MySQL ≥ 8.0.1, MariaDB ≥ 10.5; RDS/Aurora: the DB parameter group)")
	}
	h, err := s.openHistory(ctx, pos, srv.fullMetadata)
	if err != nil || h == nil {
		return err
	}
	s.hist = h
	if h.seedAt != "" {
		// A history read from the catalog is checkpointed at once: a
		// restart before the next commit would read the catalog again,
		// later, and need the binlog up to it to be replayable.
		return st.Heartbeat(ctx, s.encode(pos))
	}
	return nil
}

// openHistory returns the history at pos: the checkpoint's, when it was
// kept for the same captured set, or else one read from the catalog.
func (s *Source) openHistory(ctx context.Context, pos position, full bool) (*history, error) {
	if len(pos.Shapes) > 0 {
		h, err := decodeHistory(pos.Shapes, s.flavor == flavorMariaDB)
		if err != nil {
			return nil, err
		}
		if h.scope == s.historyScope() {
			s.hookHistory(h)
			s.log.Info("schema history from the checkpoint (binlog_row_metadata is not FULL)", "tables", len(h.tables))
			return h, nil
		}
		if full {
			return nil, nil // the server logs names now: no history to read again
		}
		s.log.Warn("the checkpoint's schema history was kept for another set of tables (source.url or source.tables changed): reading it again from the catalog")
	}
	return s.seedHistory(ctx, pos)
}

// seedHistory reads the history from the catalog at a known end of the
// binlog, and checks that the binlog between pos and that end can be
// decoded with it.
func (s *Source) seedHistory(ctx context.Context, pos position) (*history, error) {
	h := &history{mariadb: s.flavor == flavorMariaDB, scope: s.historyScope(), dbs: map[string]string{}}
	if len(s.sel.Patterns()) > 0 {
		h.allDBs = true // a regular expression may match a table of any database
	} else if s.sel.Listed() {
		for _, id := range s.sel.PlainNames() {
			if i := strings.IndexByte(id, '.'); i > 0 {
				h.dbs[id[:i]] = ""
			}
		}
	} else if s.conn.Database != "" {
		h.dbs[s.conn.Database] = ""
	} else {
		h.allDBs = true
	}
	r, err := s.db.Execute("SELECT @@lower_case_table_names")
	if err != nil {
		return nil, fmt.Errorf("read lower_case_table_names: %w", err)
	}
	if v, _ := r.GetInt(0, 0); v != 0 {
		h.lower = true
	}
	var endF string
	var endP uint32
	for try := 0; ; try++ {
		f1, p1, err := binlogEnd(s.db)
		if err != nil {
			return nil, err
		}
		h.tables = map[tableName]*histTable{}
		if err := s.readCatalog(s.db, h); err != nil {
			return nil, err
		}
		f2, p2, err := binlogEnd(s.db)
		if err != nil {
			return nil, err
		}
		if f1 == f2 && p1 == p2 {
			endF, endP = f2, p2
			break
		}
		if try == 5 {
			return nil, fmt.Errorf("read the schema history from the catalog: the binlog kept moving (DDL and writes while reading); retry when the server is quieter")
		}
	}
	if binlogBefore(pos.File, pos.Pos, endF, endP) {
		// Rows between pos and the catalog's position are decoded with the
		// catalog's shape: refused if a DDL of their table follows them.
		if err := s.checkReplayable(ctx, pos.File, pos.Pos, s.scanServerID()); err != nil {
			return nil, err
		}
	}
	h.seedAt, h.seedF, h.seedP = fmt.Sprintf("%s:%d", endF, endP), endF, endP
	s.hookHistory(h)
	s.log.Info("schema history read from the catalog (binlog_row_metadata is not FULL): DDL in the binlog is applied to it from here on",
		"tables", len(h.tables), "at", h.seedAt)
	return h, nil
}

func (s *Source) hookHistory(h *history) {
	h.wants, h.listed = s.wants, s.sel.Listed()
	h.changed = func(id, at string, t *table) {
		s.log.Info("schema history: table shape changed by DDL", "table", id, "at", at, "columns", typeList(t.cols))
	}
}

// readCatalog reads every base table of the tracked databases.
func (s *Source) readCatalog(conn *client.Conn, h *history) error {
	r, err := conn.Execute(`SELECT s.SCHEMA_NAME, LOWER(s.DEFAULT_CHARACTER_SET_NAME), IFNULL(t.TABLE_NAME, ''), IFNULL(LOWER(t.TABLE_COLLATION), '')
FROM information_schema.SCHEMATA s LEFT JOIN information_schema.TABLES t
  ON t.TABLE_SCHEMA = s.SCHEMA_NAME AND t.TABLE_TYPE = 'BASE TABLE'`)
	if err != nil {
		return fmt.Errorf("schema history: list tables: %w", err)
	}
	type entry struct {
		n       tableName
		charset string
	}
	var list []entry
	for i := range r.Values {
		str := func(j int) string { v, _ := r.GetString(i, j); return strings.Clone(v) }
		db := str(0)
		if !h.tracked(db) {
			continue
		}
		h.dbs[db] = str(1)
		if name := str(2); name != "" {
			list = append(list, entry{tableName{db, name}, charsetOf(str(3))})
		}
	}
	ts := make([]*table, len(list))
	for i, e := range list {
		ts[i] = &table{db: e.n.db, name: e.n.name, mariadb: h.mariadb}
	}
	gone, err := describeAll(conn, ts, nil)
	if err != nil {
		return err
	}
	for i, e := range list {
		t := ts[i]
		if slices.Contains(gone, t) {
			continue // dropped meanwhile: the end position moves, and the read is repeated
		}
		ht := &histTable{cols: t.cols, charset: e.charset, at: "catalog"}
		for _, k := range t.key {
			ht.key = append(ht.key, t.cols[k].name)
		}
		h.tables[h.norm(e.n)] = ht
	}
	return nil
}

// charsetOf is the character set a collation belongs to: its name's first
// part (latin1_swedish_ci → latin1, utf8mb4_0900_ai_ci → utf8mb4).
func charsetOf(collation string) string {
	collation = strings.ToLower(collation)
	if i := strings.IndexByte(collation, '_'); i > 0 {
		return collation[:i]
	}
	return collation
}
