package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// The tests in this package that need a server use the PostgreSQL of
// `make services-up`; each works in a database of its own.
const testAdminURL = "postgres://postgres:postgres@127.0.0.1:5432/postgres"

// testDB creates a database (with the given CREATE DATABASE options) and
// returns a connection to it and its URL; both go away with the test.
func testDB(t *testing.T, options string) (*pgx.Conn, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the PostgreSQL of `make services-up`")
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, testAdminURL)
	if err != nil {
		t.Skipf("no PostgreSQL on 127.0.0.1:5432 (make services-up): %v", err)
	}
	name := fmt.Sprintf("pgunit_%d_%04d", os.Getpid()%100000, rand.IntN(10000))
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" "+options); err != nil {
		admin.Close(ctx)
		t.Fatal(err)
	}
	url := "postgres://postgres:postgres@127.0.0.1:5432/" + name
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close(context.Background())
		admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close(context.Background())
	})
	return conn, url
}

// snapshotSession is a snapshot worker's session of a source capturing
// every table of conn's database (at url), closed with the test.
func snapshotSession(t *testing.T, conn *pgx.Conn, url string) snapshot.Session {
	t.Helper()
	ctx := context.Background()
	s, err := New(ctx, source.Options{Pipeline: "p", TopicPrefix: "p", Config: config.Source{Type: "postgres", URL: url, Settings: Settings{Slot: "s"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rels, _, err := selectedTables(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.setCaptured(rels)
	sess, err := pgSnapshots{s}.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}
