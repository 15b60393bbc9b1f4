package itest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Published returns the tables publication pub lists, as schema.table.
func (e *Env) Published(pub string) (all bool, tables []string) {
	e.T.Helper()
	ctx := context.Background()
	if err := e.Conn.QueryRow(ctx, `SELECT puballtables FROM pg_publication WHERE pubname = $1`, pub).Scan(&all); err != nil {
		e.T.Fatalf("publication %s: %v", pub, err)
	}
	rows, err := e.Conn.Query(ctx, `SELECT schemaname || '.' || tablename FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1`, pub)
	if err != nil {
		e.T.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		rows.Scan(&s)
		tables = append(tables, s)
	}
	return all, tables
}

// DBState reads table (k int, v text) from the database.
func (e *Env) DBState(table string) map[int]string {
	e.T.Helper()
	rows, err := e.Conn.Query(context.Background(), `SELECT k, v FROM `+table)
	if err != nil {
		e.T.Fatal(err)
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var k int
		var v string
		rows.Scan(&k, &v)
		out[k] = v
	}
	return out
}

// PGCount counts what a catalog query finds.
func (e *Env) PGCount(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := e.Conn.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// OneRowAndSentinel makes table t (k int PRIMARY KEY, v text) with row
// (0, 'zero') and the sentinel table, and returns the config capturing
// both and t's topic.
func (e *Env) OneRowAndSentinel() (cfg, topic string) {
	e.Exec(`CREATE TABLE t (k int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO t VALUES (0, 'zero')`)
	e.Exec(SentinelTable)
	return e.WriteTablesConfig("public.t", "public.sentinel"), e.Prefix + ".public.t"
}

// UnknownTypesTable has columns of types Tributary cannot encode: tsquery
// (Debezium drops it too) and box (one Debezium maps to a Geometry that
// Tributary does not build yet).
const UnknownTypesTable = `CREATE TABLE odd (id integer PRIMARY KEY, q tsquery, b box, note text)`

// ReplicationRole creates user, a login role with REPLICATION and the
// password 'pw' and nothing else, dropped with what it owns in e's
// database when the test ends (after the cleanups registered later, such
// as a pipeline's).
func (e *Env) ReplicationRole(t *testing.T, user string) {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, PGAdminURL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE ROLE "+user+" LOGIN REPLICATION PASSWORD 'pw'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := pgx.Connect(ctx, e.PGURL()); err == nil {
			c.Exec(ctx, "DROP OWNED BY "+user)
			c.Close(ctx)
		}
		if a, err := pgx.Connect(ctx, PGAdminURL); err == nil {
			for range 20 {
				if _, err := a.Exec(ctx, "DROP ROLE IF EXISTS "+user); err == nil {
					break
				}
				time.Sleep(500 * time.Millisecond)
			}
			a.Close(ctx)
		}
	})
}
