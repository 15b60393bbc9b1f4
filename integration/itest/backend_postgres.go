package itest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// PGBackend is PostgreSQL through pgx.
type PGBackend struct {
	E  *Env
	Mu sync.Mutex
}

func NewPGBackend(t *testing.T, label string) Backend {
	return &PGBackend{E: NewEnv(t, label)}
}

func (b *PGBackend) Kind() string { return "postgres" }

func (b *PGBackend) Env() *Env { return b.E }

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

func (b *PGBackend) Topic(table string) string { return b.E.Prefix + ".public." + table }

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
