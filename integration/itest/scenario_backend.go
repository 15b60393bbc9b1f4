package itest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Backend is what a scenario needs from a source database, written once
// and implemented for PostgreSQL and MariaDB (the shape of Estuary's
// sqlcapture test suite): run SQL, read a table's current state, name its
// topic and its source.tables entry, write the pipeline config, and the
// few statements whose dialects differ. Scenarios run on every backend
// through forEachBackend.
type Backend interface {
	Kind() string // "postgres" or "mariadb": the subtest name
	Env() *Env
	// Exec runs one statement on the scenario's connection.
	Exec(sql string) error
	// State reads table's rows: key → (seq, v, vl).
	State(table string) (map[int64]DBRow, error)
	Topic(table string) string
	TableID(table string) string // the source.tables entry
	// Config writes the pipeline config capturing tables (all tables when
	// nil) with destExtra in the destination section; returns its path.
	Config(tables []string, destExtra string) string
	// Latin1 tells whether the table has a latin1 column vl besides v.
	Latin1() bool
	CreateTable(table string) []string
	// BulkInsert inserts n rows k = k0+i, seq = seq0+i, v = 'bulk' (i = 1…n).
	BulkInsert(table string, k0, seq0 int64, n int) string
	// ShiftColumn adds a column that moves the columns after the key where
	// the dialect can (MariaDB AFTER k); Postgres appends it.
	ShiftColumn(table, col string) string
	ChangeType(table, col string) string
	// CreateLogin creates a login user with password and every privilege,
	// dropped when the test ends; adminUserinfo is the "user:password"
	// of config's source URL, which a test may replace by it.
	CreateLogin(t *testing.T, user, password string)
	// TextKeyTable creates table (id text PRIMARY KEY, body text NOT NULL)
	// whose deletes carry the whole row, for keys up to 2,000 characters.
	TextKeyTable(table string) []string
	AdminUserinfo() string
	// ShapeTable is the table of a shape feature (scenario_shapes_test.go)
	// with t1…t4's columns; false when the dialect has no such shape.
	ShapeTable(feature, table string) (ShapeTable, bool)
	// CharsetColumns add cs (in charset), en (an ENUM of enum) and st (a
	// SET of set) to table; none where a database has one character set.
	CharsetColumns(table, charset string, enum, set []string) []string
	// ColumnsText reads cols of table's rows as UTF-8 text: key → col → value.
	ColumnsText(table string, cols []string) (map[int64]map[string]*string, error)
}

// DBRow is a row of a scenario table as the database holds it.
type DBRow struct {
	Seq   int64
	v, vl *string
}

// ForEachBackend runs scenario as subtests "postgres" and "mariadb", each
// on a database of its own.
func ForEachBackend(t *testing.T, label string, scenario func(t *testing.T, b Backend)) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) { scenario(t, bk.make(t, label)) })
	}
}

// backends are the constructors by subtest name, in run order.
var backends = []struct {
	name string
	make func(*testing.T, string) Backend
}{
	{"postgres", NewPGBackend},
	{"mariadb", newMariaBackend},
}

// BackendNamed makes a fresh backend of the kind named (a database of
// its own), for a scenario that starts over.
func BackendNamed(t *testing.T, kind, label string) Backend {
	t.Helper()
	for _, bk := range backends {
		if bk.name == kind {
			return bk.make(t, label)
		}
	}
	t.Fatalf("no backend %q", kind)
	return nil
}

// PGBackend is PostgreSQL through pgx.
type PGBackend struct {
	E  *Env
	Mu sync.Mutex
}

func NewPGBackend(t *testing.T, label string) Backend {
	return &PGBackend{E: NewEnv(t, label)}
}

func (b *PGBackend) Kind() string { return "postgres" }
func (b *PGBackend) Env() *Env    { return b.E }
func (b *PGBackend) Latin1() bool { return false }

func (b *PGBackend) Exec(sql string) error {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	_, err := b.E.Conn.Exec(context.Background(), sql)
	return err
}

func (b *PGBackend) State(table string) (map[int64]DBRow, error) {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	out := map[int64]DBRow{}
	rows, err := b.E.Conn.Query(context.Background(), "SELECT k, seq, v FROM "+table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k int64
		var r DBRow
		if err := rows.Scan(&k, &r.Seq, &r.v); err != nil {
			return nil, err
		}
		out[k] = r
	}
	return out, rows.Err()
}

func (b *PGBackend) Topic(table string) string   { return b.E.Prefix + ".public." + table }
func (b *PGBackend) TableID(table string) string { return "public." + table }

func (b *PGBackend) Config(tables []string, destExtra string) string {
	return writeScenarioConfig(b.E, "postgres", b.E.PGURL(), b, tables, destExtra)
}

func (b *PGBackend) CreateTable(table string) []string {
	return []string{
		`CREATE TABLE ` + table + ` (k bigint PRIMARY KEY, seq bigint NOT NULL, v text, big text)`,
		`ALTER TABLE ` + table + ` REPLICA IDENTITY FULL`, // deletes and key updates carry seq
	}
}

func (b *PGBackend) TextKeyTable(table string) []string {
	return []string{
		`CREATE TABLE ` + table + ` (id text PRIMARY KEY, body text NOT NULL)`,
		`ALTER TABLE ` + table + ` REPLICA IDENTITY FULL`,
	}
}

func (b *PGBackend) BulkInsert(table string, k0, seq0 int64, n int) string {
	return fmt.Sprintf(`INSERT INTO %s (k, seq, v) SELECT %d + g, %d + g, 'bulk' FROM generate_series(1, %d) g`, table, k0, seq0, n)
}

func (b *PGBackend) ShiftColumn(table, col string) string {
	return fmt.Sprintf(`ALTER TABLE %s ADD COLUMN %s text DEFAULT 'z'`, table, col)
}

func (b *PGBackend) ChangeType(table, col string) string {
	return fmt.Sprintf(`ALTER TABLE %s ALTER COLUMN %s TYPE bigint`, table, col)
}

func (b *PGBackend) AdminUserinfo() string { return "postgres:postgres" }

func (b *PGBackend) ShapeTable(feature, table string) (ShapeTable, bool) {
	switch feature {
	case "toast": // REPLICA IDENTITY DEFAULT: an update's new image lacks the unchanged TOASTed tv
		return ShapeTable{KeyOnly: true, Create: []string{
			`CREATE TABLE ` + table + ` (k bigint PRIMARY KEY, seq bigint NOT NULL, v text, big text, tv text)`}}, true
	case "keyless":
		return ShapeTable{Keyless: true, Create: []string{
			`CREATE TABLE ` + table + ` (k bigint NOT NULL, seq bigint NOT NULL, v text, big text)`,
			`CREATE INDEX ON ` + table + ` (k)`,
			`ALTER TABLE ` + table + ` REPLICA IDENTITY FULL`}}, true
	case "identity": // keyed by the index (docs/postgresql.md), whose k is all a delete carries
		return ShapeTable{KeyOnly: true, Create: []string{
			`CREATE TABLE ` + table + ` (id bigserial PRIMARY KEY, k bigint NOT NULL, seq bigint NOT NULL, v text, big text)`,
			`CREATE UNIQUE INDEX ` + table + `_k ON ` + table + ` (k)`,
			`ALTER TABLE ` + table + ` REPLICA IDENTITY USING INDEX ` + table + `_k`}}, true
	}
	return ShapeTable{}, false
}

func (b *PGBackend) CharsetColumns(table, charset string, enum, set []string) []string { return nil }

func (b *PGBackend) ColumnsText(table string, cols []string) (map[int64]map[string]*string, error) {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	rows, err := b.E.Conn.Query(context.Background(), "SELECT k, "+strings.Join(cols, "::text, ")+"::text FROM "+table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]map[string]*string{}
	for rows.Next() {
		var k int64
		vals := make([]*string, len(cols))
		dst := []any{&k}
		for i := range vals {
			dst = append(dst, &vals[i])
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		out[k] = map[string]*string{}
		for i, c := range cols {
			out[k][c] = vals[i]
		}
	}
	return out, rows.Err()
}

func (b *PGBackend) CreateLogin(t *testing.T, user, password string) {
	t.Helper()
	if err := b.Exec("CREATE ROLE " + user + " LOGIN SUPERUSER PASSWORD '" + password + "'"); err != nil {
		t.Fatal(err)
	}
	// Runs before the database is dropped (cleanups run last first): the
	// publication the role created goes with DROP OWNED.
	t.Cleanup(func() {
		if b.Exec("DROP OWNED BY "+user) == nil {
			b.Exec("DROP ROLE " + user)
		}
	})
}

// MariaBackend is MariaDB through go-mysql's client.
type MariaBackend struct {
	E  *MyEnv
	Mu sync.Mutex
}

func newMariaBackend(t *testing.T, label string) Backend {
	return &MariaBackend{E: NewMyEnv(t, label)}
}

func (b *MariaBackend) Kind() string { return "mariadb" }
func (b *MariaBackend) Env() *Env    { return b.E.Env }
func (b *MariaBackend) Latin1() bool { return true }

func (b *MariaBackend) Exec(sql string) error {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	_, err := b.E.My.Execute(sql)
	return err
}

func (b *MariaBackend) State(table string) (map[int64]DBRow, error) {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	r, err := b.E.My.Execute("SELECT k, seq, v, vl FROM " + table)
	if err != nil {
		return nil, err
	}
	out := map[int64]DBRow{}
	for i := 0; i < r.RowNumber(); i++ {
		k, _ := r.GetInt(i, 0)
		seq, _ := r.GetInt(i, 1)
		row := DBRow{Seq: seq}
		for c, dst := range []**string{&row.v, &row.vl} {
			if null, _ := r.IsNull(i, c+2); !null {
				s, _ := r.GetString(i, c+2)
				*dst = &s
			}
		}
		out[k] = row
	}
	return out, nil
}

func (b *MariaBackend) Topic(table string) string   { return b.E.Prefix + "." + b.E.DB + "." + table }
func (b *MariaBackend) TableID(table string) string { return b.E.DB + "." + table }

func (b *MariaBackend) Config(tables []string, destExtra string) string {
	return writeScenarioConfig(b.E.Env, "mysql", b.E.URL(), b, tables, destExtra)
}

func (b *MariaBackend) CreateTable(table string) []string {
	return []string{`CREATE TABLE ` + table + ` (k BIGINT PRIMARY KEY, seq BIGINT NOT NULL,
		v VARCHAR(200) CHARACTER SET utf8mb4, vl VARCHAR(200) CHARACTER SET latin1, big MEDIUMTEXT)`}
}

// TextKeyTable: latin1, so that 2,000 characters fit InnoDB's 3,072-byte
// key; the binlog's full row image carries the whole row of a delete.
func (b *MariaBackend) TextKeyTable(table string) []string {
	return []string{`CREATE TABLE ` + table + ` (id VARCHAR(2000) CHARACTER SET latin1 PRIMARY KEY, body MEDIUMTEXT NOT NULL)`}
}

func (b *MariaBackend) BulkInsert(table string, k0, seq0 int64, n int) string {
	return fmt.Sprintf(`INSERT INTO %s (k, seq, v, vl) SELECT %d + seq, %d + seq, 'bulk', 'bulk' FROM seq_1_to_%d`, table, k0, seq0, n)
}

func (b *MariaBackend) ShiftColumn(table, col string) string {
	return fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s VARCHAR(10) DEFAULT 'z' AFTER k", table, col)
}

func (b *MariaBackend) ChangeType(table, col string) string {
	return fmt.Sprintf(`ALTER TABLE %s MODIFY COLUMN %s BIGINT`, table, col)
}

func (b *MariaBackend) AdminUserinfo() string { return "root:root" }

func (b *MariaBackend) ShapeTable(feature, table string) (ShapeTable, bool) {
	cols := `k BIGINT NOT NULL, seq BIGINT NOT NULL, v VARCHAR(200) CHARACTER SET utf8mb4,
		vl VARCHAR(200) CHARACTER SET latin1, big MEDIUMTEXT`
	switch feature {
	case "toast": // the full row image carries tv: the analogue of PostgreSQL's TOAST
		return ShapeTable{Create: []string{`CREATE TABLE ` + table + ` (` + cols + `, tv MEDIUMTEXT, PRIMARY KEY (k))`}}, true
	case "keyless":
		return ShapeTable{Keyless: true, Create: []string{`CREATE TABLE ` + table + ` (` + cols + `, KEY (k))`}}, true
	}
	return ShapeTable{}, false
}

func (b *MariaBackend) CharsetColumns(table, charset string, enum, set []string) []string {
	members := func(ms []string) string {
		var q []string
		for _, m := range ms {
			q = append(q, SQLText(&m))
		}
		return strings.Join(q, ", ")
	}
	return []string{fmt.Sprintf(`ALTER TABLE %s ADD COLUMN cs VARCHAR(100) CHARACTER SET %s,
		ADD COLUMN en ENUM(%s) CHARACTER SET utf8mb4, ADD COLUMN st SET(%s) CHARACTER SET utf8mb4`,
		table, charset, members(enum), members(set))}
}

func (b *MariaBackend) ColumnsText(table string, cols []string) (map[int64]map[string]*string, error) {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	sel := "k"
	for _, c := range cols {
		sel += ", CONVERT(" + c + " USING utf8mb4)"
	}
	r, err := b.E.My.Execute("SELECT " + sel + " FROM " + table)
	if err != nil {
		return nil, err
	}
	out := map[int64]map[string]*string{}
	for i := 0; i < r.RowNumber(); i++ {
		k, _ := r.GetInt(i, 0)
		out[k] = map[string]*string{}
		for c, col := range cols {
			if null, _ := r.IsNull(i, c+1); !null {
				s, _ := r.GetString(i, c+1)
				out[k][col] = &s
			}
		}
	}
	return out, nil
}

func (b *MariaBackend) CreateLogin(t *testing.T, user, password string) {
	t.Helper()
	for _, q := range []string{"CREATE USER '" + user + "'@'%' IDENTIFIED BY '" + password + "'", "GRANT ALL PRIVILEGES ON *.* TO '" + user + "'@'%'"} {
		if err := b.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { b.Exec("DROP USER IF EXISTS '" + user + "'@'%'") })
}

// writeScenarioConfig writes a pipeline config for either source; tables
// nil captures every table.
func writeScenarioConfig(e *Env, typ, url string, b Backend, tables []string, destExtra string) string {
	var src strings.Builder
	if tables != nil {
		src.WriteString("  tables:\n")
		for _, t := range tables {
			src.WriteString("    - " + b.TableID(t) + "\n")
		}
	}
	return e.WritePipeline(PipelineConfig{Typ: typ, URL: url, Source: src.String(), Destination: destExtra})
}
