package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// backend is what a scenario needs from a source database, written once
// and implemented for PostgreSQL and MariaDB (the shape of Estuary's
// sqlcapture test suite): run SQL, read a table's current state, name its
// topic and its source.tables entry, write the pipeline config, and the
// few statements whose dialects differ. Scenarios run on every backend
// through forEachBackend.
type backend interface {
	kind() string // "postgres" or "mariadb": the subtest name
	env() *env
	// exec runs one statement on the scenario's connection.
	exec(sql string) error
	// state reads table's rows: key → (seq, v, vl).
	state(table string) (map[int64]dbRow, error)
	topic(table string) string
	tableID(table string) string // the source.tables entry
	// config writes the pipeline config capturing tables (all tables when
	// nil) with destExtra in the destination section; returns its path.
	config(tables []string, destExtra string) string
	// latin1 tells whether the table has a latin1 column vl besides v.
	latin1() bool
	createTable(table string) []string
	// bulkInsert inserts n rows k = k0+i, seq = seq0+i, v = 'bulk' (i = 1…n).
	bulkInsert(table string, k0, seq0 int64, n int) string
	// shiftColumn adds a column that moves the columns after the key where
	// the dialect can (MariaDB AFTER k); Postgres appends it.
	shiftColumn(table, col string) string
	changeType(table, col string) string
	// createLogin creates a login user with password and every privilege,
	// dropped when the test ends; adminUserinfo is the "user:password"
	// of config's source URL, which a test may replace by it.
	createLogin(t *testing.T, user, password string)
	// textKeyTable creates table (id text PRIMARY KEY, body text NOT NULL)
	// whose deletes carry the whole row, for keys up to 2,000 characters.
	textKeyTable(table string) []string
	adminUserinfo() string
	// shapeTable is the table of a shape feature (scenario_shapes_test.go)
	// with t1…t4's columns; false when the dialect has no such shape.
	shapeTable(feature, table string) (shapeTable, bool)
	// charsetColumns add cs (in charset), en (an ENUM of enum) and st (a
	// SET of set) to table; none where a database has one character set.
	charsetColumns(table, charset string, enum, set []string) []string
	// columnsText reads cols of table's rows as UTF-8 text: key → col → value.
	columnsText(table string, cols []string) (map[int64]map[string]*string, error)
}

// dbRow is a row of a scenario table as the database holds it.
type dbRow struct {
	seq   int64
	v, vl *string
}

// forEachBackend runs scenario as subtests "postgres" and "mariadb", each
// on a database of its own.
func forEachBackend(t *testing.T, label string, scenario func(t *testing.T, b backend)) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) { scenario(t, bk.make(t, label)) })
	}
}

// backends are the constructors by subtest name, in run order.
var backends = []struct {
	name string
	make func(*testing.T, string) backend
}{
	{"postgres", newPGBackend},
	{"mariadb", newMariaBackend},
}

// backendNamed makes a fresh backend of the kind named (a database of
// its own), for a scenario that starts over.
func backendNamed(t *testing.T, kind, label string) backend {
	t.Helper()
	for _, bk := range backends {
		if bk.name == kind {
			return bk.make(t, label)
		}
	}
	t.Fatalf("no backend %q", kind)
	return nil
}

// pgBackend is PostgreSQL through pgx.
type pgBackend struct {
	e  *env
	mu sync.Mutex
}

func newPGBackend(t *testing.T, label string) backend {
	return &pgBackend{e: newEnv(t, label)}
}

func (b *pgBackend) kind() string { return "postgres" }
func (b *pgBackend) env() *env    { return b.e }
func (b *pgBackend) latin1() bool { return false }

func (b *pgBackend) exec(sql string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err := b.e.conn.Exec(context.Background(), sql)
	return err
}

func (b *pgBackend) state(table string) (map[int64]dbRow, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[int64]dbRow{}
	rows, err := b.e.conn.Query(context.Background(), "SELECT k, seq, v FROM "+table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k int64
		var r dbRow
		if err := rows.Scan(&k, &r.seq, &r.v); err != nil {
			return nil, err
		}
		out[k] = r
	}
	return out, rows.Err()
}

func (b *pgBackend) topic(table string) string   { return b.e.prefix + ".public." + table }
func (b *pgBackend) tableID(table string) string { return "public." + table }

func (b *pgBackend) config(tables []string, destExtra string) string {
	return writeScenarioConfig(b.e, "postgres", b.e.pgURL(), b, tables, destExtra)
}

func (b *pgBackend) createTable(table string) []string {
	return []string{
		`CREATE TABLE ` + table + ` (k bigint PRIMARY KEY, seq bigint NOT NULL, v text, big text)`,
		`ALTER TABLE ` + table + ` REPLICA IDENTITY FULL`, // deletes and key updates carry seq
	}
}

func (b *pgBackend) textKeyTable(table string) []string {
	return []string{
		`CREATE TABLE ` + table + ` (id text PRIMARY KEY, body text NOT NULL)`,
		`ALTER TABLE ` + table + ` REPLICA IDENTITY FULL`,
	}
}

func (b *pgBackend) bulkInsert(table string, k0, seq0 int64, n int) string {
	return fmt.Sprintf(`INSERT INTO %s (k, seq, v) SELECT %d + g, %d + g, 'bulk' FROM generate_series(1, %d) g`, table, k0, seq0, n)
}

func (b *pgBackend) shiftColumn(table, col string) string {
	return fmt.Sprintf(`ALTER TABLE %s ADD COLUMN %s text DEFAULT 'z'`, table, col)
}

func (b *pgBackend) changeType(table, col string) string {
	return fmt.Sprintf(`ALTER TABLE %s ALTER COLUMN %s TYPE bigint`, table, col)
}

func (b *pgBackend) adminUserinfo() string { return "postgres:postgres" }

func (b *pgBackend) shapeTable(feature, table string) (shapeTable, bool) {
	switch feature {
	case "toast": // REPLICA IDENTITY DEFAULT: an update's new image lacks the unchanged TOASTed tv
		return shapeTable{keyOnly: true, create: []string{
			`CREATE TABLE ` + table + ` (k bigint PRIMARY KEY, seq bigint NOT NULL, v text, big text, tv text)`}}, true
	case "keyless":
		return shapeTable{keyless: true, create: []string{
			`CREATE TABLE ` + table + ` (k bigint NOT NULL, seq bigint NOT NULL, v text, big text)`,
			`CREATE INDEX ON ` + table + ` (k)`,
			`ALTER TABLE ` + table + ` REPLICA IDENTITY FULL`}}, true
	case "identity": // keyed by the index (docs/postgresql.md), whose k is all a delete carries
		return shapeTable{keyOnly: true, create: []string{
			`CREATE TABLE ` + table + ` (id bigserial PRIMARY KEY, k bigint NOT NULL, seq bigint NOT NULL, v text, big text)`,
			`CREATE UNIQUE INDEX ` + table + `_k ON ` + table + ` (k)`,
			`ALTER TABLE ` + table + ` REPLICA IDENTITY USING INDEX ` + table + `_k`}}, true
	}
	return shapeTable{}, false
}

func (b *pgBackend) charsetColumns(table, charset string, enum, set []string) []string { return nil }

func (b *pgBackend) columnsText(table string, cols []string) (map[int64]map[string]*string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rows, err := b.e.conn.Query(context.Background(), "SELECT k, "+strings.Join(cols, "::text, ")+"::text FROM "+table)
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

func (b *pgBackend) createLogin(t *testing.T, user, password string) {
	t.Helper()
	if err := b.exec("CREATE ROLE " + user + " LOGIN SUPERUSER PASSWORD '" + password + "'"); err != nil {
		t.Fatal(err)
	}
	// Runs before the database is dropped (cleanups run last first): the
	// publication the role created goes with DROP OWNED.
	t.Cleanup(func() {
		if b.exec("DROP OWNED BY "+user) == nil {
			b.exec("DROP ROLE " + user)
		}
	})
}

// mariaBackend is MariaDB through go-mysql's client.
type mariaBackend struct {
	e  *myEnv
	mu sync.Mutex
}

func newMariaBackend(t *testing.T, label string) backend {
	return &mariaBackend{e: newMyEnv(t, label)}
}

func (b *mariaBackend) kind() string { return "mariadb" }
func (b *mariaBackend) env() *env    { return b.e.env }
func (b *mariaBackend) latin1() bool { return true }

func (b *mariaBackend) exec(sql string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err := b.e.my.Execute(sql)
	return err
}

func (b *mariaBackend) state(table string) (map[int64]dbRow, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, err := b.e.my.Execute("SELECT k, seq, v, vl FROM " + table)
	if err != nil {
		return nil, err
	}
	out := map[int64]dbRow{}
	for i := 0; i < r.RowNumber(); i++ {
		k, _ := r.GetInt(i, 0)
		seq, _ := r.GetInt(i, 1)
		row := dbRow{seq: seq}
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

func (b *mariaBackend) topic(table string) string   { return b.e.prefix + "." + b.e.db + "." + table }
func (b *mariaBackend) tableID(table string) string { return b.e.db + "." + table }

func (b *mariaBackend) config(tables []string, destExtra string) string {
	return writeScenarioConfig(b.e.env, "mysql", b.e.url(), b, tables, destExtra)
}

func (b *mariaBackend) createTable(table string) []string {
	return []string{`CREATE TABLE ` + table + ` (k BIGINT PRIMARY KEY, seq BIGINT NOT NULL,
		v VARCHAR(200) CHARACTER SET utf8mb4, vl VARCHAR(200) CHARACTER SET latin1, big MEDIUMTEXT)`}
}

// textKeyTable: latin1, so that 2,000 characters fit InnoDB's 3,072-byte
// key; the binlog's full row image carries the whole row of a delete.
func (b *mariaBackend) textKeyTable(table string) []string {
	return []string{`CREATE TABLE ` + table + ` (id VARCHAR(2000) CHARACTER SET latin1 PRIMARY KEY, body MEDIUMTEXT NOT NULL)`}
}

func (b *mariaBackend) bulkInsert(table string, k0, seq0 int64, n int) string {
	return fmt.Sprintf(`INSERT INTO %s (k, seq, v, vl) SELECT %d + seq, %d + seq, 'bulk', 'bulk' FROM seq_1_to_%d`, table, k0, seq0, n)
}

func (b *mariaBackend) shiftColumn(table, col string) string {
	return fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s VARCHAR(10) DEFAULT 'z' AFTER k", table, col)
}

func (b *mariaBackend) changeType(table, col string) string {
	return fmt.Sprintf(`ALTER TABLE %s MODIFY COLUMN %s BIGINT`, table, col)
}

func (b *mariaBackend) adminUserinfo() string { return "root:root" }

func (b *mariaBackend) shapeTable(feature, table string) (shapeTable, bool) {
	cols := `k BIGINT NOT NULL, seq BIGINT NOT NULL, v VARCHAR(200) CHARACTER SET utf8mb4,
		vl VARCHAR(200) CHARACTER SET latin1, big MEDIUMTEXT`
	switch feature {
	case "toast": // the full row image carries tv: the analogue of PostgreSQL's TOAST
		return shapeTable{create: []string{`CREATE TABLE ` + table + ` (` + cols + `, tv MEDIUMTEXT, PRIMARY KEY (k))`}}, true
	case "keyless":
		return shapeTable{keyless: true, create: []string{`CREATE TABLE ` + table + ` (` + cols + `, KEY (k))`}}, true
	}
	return shapeTable{}, false
}

func (b *mariaBackend) charsetColumns(table, charset string, enum, set []string) []string {
	members := func(ms []string) string {
		var q []string
		for _, m := range ms {
			q = append(q, sqlText(&m))
		}
		return strings.Join(q, ", ")
	}
	return []string{fmt.Sprintf(`ALTER TABLE %s ADD COLUMN cs VARCHAR(100) CHARACTER SET %s,
		ADD COLUMN en ENUM(%s) CHARACTER SET utf8mb4, ADD COLUMN st SET(%s) CHARACTER SET utf8mb4`,
		table, charset, members(enum), members(set))}
}

func (b *mariaBackend) columnsText(table string, cols []string) (map[int64]map[string]*string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	sel := "k"
	for _, c := range cols {
		sel += ", CONVERT(" + c + " USING utf8mb4)"
	}
	r, err := b.e.my.Execute("SELECT " + sel + " FROM " + table)
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

func (b *mariaBackend) createLogin(t *testing.T, user, password string) {
	t.Helper()
	for _, q := range []string{"CREATE USER '" + user + "'@'%' IDENTIFIED BY '" + password + "'", "GRANT ALL PRIVILEGES ON *.* TO '" + user + "'@'%'"} {
		if err := b.exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { b.exec("DROP USER IF EXISTS '" + user + "'@'%'") })
}

// writeScenarioConfig writes a pipeline config for either source; tables
// nil captures every table.
func writeScenarioConfig(e *env, typ, url string, b backend, tables []string, destExtra string) string {
	var src strings.Builder
	if tables != nil {
		src.WriteString("  tables:\n")
		for _, t := range tables {
			src.WriteString("    - " + b.tableID(t) + "\n")
		}
	}
	return e.writePipeline(pipelineConfig{typ: typ, url: url, source: src.String(), destination: destExtra})
}
