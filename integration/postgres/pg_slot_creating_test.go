package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGStartAfterKillDuringSlotCreation: a start killed while it created
// its slot leaves the slot listed, with no confirmed position, until the
// server notices the creator's connection is gone and drops it. The next
// start, looking at the slot meanwhile, must create its slot afresh and
// backfill, not stream from a slot that no longer exists (clean-clone CI,
// TestJDBCSinkMatchesSource after a SIGKILL: "no checkpoint, but the
// replication slot exists … lsn 0/0", then "replication slot … does not
// exist", exit 1).
func TestPGStartAfterKillDuringSlotCreation(t *testing.T) {
	ctx := t.Context()
	e := itest.NewEnv(t, "pgslotmaking")
	e.Exec(`CREATE TABLE t (k int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 20) g`)
	e.Exec(itest.SentinelTable)
	slot := "tributary_" + e.Name

	// An open transaction with an xid keeps the slot's creation waiting
	// for its consistent point.
	open, err := pgx.Connect(ctx, e.PGURL())
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close(context.Background())
	tx, err := open.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `INSERT INTO t VALUES (1000, 'never committed')`); err != nil {
		t.Fatal(err)
	}

	// The "killed" start: its replication connection asks for the slot
	// and is cut while the server still builds it.
	creator, err := pgconn.Connect(ctx, e.PGURL()+"?replication=database")
	if err != nil {
		t.Fatal(err)
	}
	go creator.Exec(context.Background(), "CREATE_REPLICATION_SLOT "+slot+" LOGICAL pgoutput NOEXPORT_SNAPSHOT").ReadAll()
	itest.WaitFor(t, 30*time.Second, "the slot listed while it is created", func() bool {
		return e.PGCount(t, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1 AND confirmed_flush_lsn IS NULL`, slot) == 1
	})

	p := e.Start("run", "--config", e.WriteConfig(""))
	// The start has looked the slot up once it asks who holds it.
	p.WaitFor(t, 60*time.Second, "the start looking at the slot's holder", func() bool {
		return e.PGCount(t, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND query LIKE '%pg_stat_replication r ON r.pid%'`, e.DB) > 0
	})
	creator.Conn().Close() // as a SIGKILL leaves it
	itest.WaitFor(t, 30*time.Second, "the server dropping the unfinished slot", func() bool {
		return e.PGCount(t, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, slot) == 0
	})
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	e.PGCaughtUp(p, 1)
	e.WaitBackfilled(t, p, 60*time.Second, "the backfill")
	e.Exec(`INSERT INTO t VALUES (21, 'streamed')`)
	e.PGCaughtUp(p, 2)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	if out := p.Out.String(); strings.Contains(out, "no checkpoint, but the replication slot exists") {
		t.Errorf("the start took the unfinished slot for one to stream from; output:\n%s", out)
	}
	if d := sameState(itest.FinalState(t, e.Prefix+".public.t"), e.DBState("t")); d != "" {
		t.Errorf("t: topic differs from the database: %s", d)
	}
}
