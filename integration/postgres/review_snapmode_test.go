package postgres_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jackc/pgx/v5"
	"github.com/tributary-cdc/tributary/integration/awstest"
)

// Adversarial review of source.snapshot_mode and of the fail-fast first
// start (docs/snapshots.md "Snapshot modes", docs/operations.md "A source
// never reached"), on the real services.

// A first start that reached its database, and lost it before streaming
// began, is an outage, not "never reached": docs/operations.md says a
// first start fails fast only when no connection could be opened. Here
// the start connects and waits in CREATE_REPLICATION_SLOT (PostgreSQL
// waits for the transactions running when a logical slot is made: an
// open transaction holds it there, as a long report or a stuck
// transaction does in production), then the port closes for 4 s (a
// maintenance reboot): the reconnect's first dial is refused. The old
// code exited 1 with "the source was never reached"; the pipeline must
// ride it out and stream once the database answers again.
func TestReviewPGReachedThenDownAtFirstStart(t *testing.T) {
	e := itest.NewEnv(t, "pgreachdown")
	e.Exec(itest.SentinelTable)
	proxy := itest.NewCutProxy(t, "127.0.0.1:5432")
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "postgres", URL: "postgres://postgres:postgres@" + proxy.Addr + "/" + e.DB,
		Source: "  outage_window: 1m\n"})

	// A transaction with an xid, open while the slot is being made.
	ctx := context.Background()
	hold, err := pgx.Connect(ctx, e.PGURL())
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close(ctx)
	watch, err := pgx.Connect(ctx, e.PGURL()) // outside the transaction, whose view of pg_stat_activity is fixed
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	tx, err := hold.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO sentinel VALUES (100)`); err != nil {
		t.Fatal(err)
	}

	p := e.Start("run", "--config", cfg)
	deadline := time.Now().Add(30 * time.Second)
	for slotWait := func() bool {
		var n int
		watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'CREATE_REPLICATION_SLOT%' AND datname = $1`, e.DB).Scan(&n)
		return n > 0
	}; !slotWait(); time.Sleep(200 * time.Millisecond) {
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("the start is not waiting in CREATE_REPLICATION_SLOT; output:\n%s", p.Out)
		}
	}
	time.Sleep(500 * time.Millisecond)
	proxy.Cut() // the server reboots: every connection ends, the port refuses
	time.Sleep(4 * time.Second)
	if p.Exited() {
		t.Fatalf("a first start that had reached its database gave up when it went down for 4 s (exit %d); output:\n%s",
			p.Cmd.ProcessState.ExitCode(), p.Out)
	}
	proxy.Mend()
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	e.Exec(`INSERT INTO sentinel VALUES (1)`)
	itest.AwaitKey(t, p, e.Prefix+".public.sentinel", "id", 1)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	if !strings.Contains(p.Out.String(), "reconnecting") {
		t.Errorf("no reconnect was logged:\n%s", p.Out)
	}
}

// initial_only with delivery exactly_once, on a table of several chunks
// written to while it is read: the run exits 0, a read_committed consumer
// sees every row once (op r, or the stream's change of it), and the slot
// is dropped (TestPGInitialOnlyDropsItsSlot).
func TestReviewPGInitialOnlyExactlyOnce(t *testing.T) {
	d := itest.PGModeDB(t, "pgionlyeos")
	d.Exec(`CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	d.Exec(`INSERT INTO t SELECT g FROM generate_series(1, 3000) g`)
	eos := func(mode string) string {
		return d.E.WritePipeline(itest.PipelineConfig{Source: "  snapshot_mode: " + mode + "\n",
			Checkpoint: "  path: " + d.E.Dir + "/checkpoints\ndelivery: exactly_once\n"})
	}
	t.Setenv("TRIBUTARY_SNAPSHOT_CHUNK_ROWS", "500")
	p := d.E.Start("run", "--config", eos("initial_only"))
	if code := itest.ExitWithin(t, p, 120*time.Second, "initial_only exactly_once"); code != 0 {
		t.Fatalf("exit %d, want 0; output:\n%s", code, p.Out)
	}
	got := committedOps(t, d)
	if want := itest.RowsRead(1, 3000); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("initial_only exactly_once: %d records, want the 3000 rows once each with op r", len(got))
	}
	if n := d.E.PGCount(t, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, "tributary_"+d.E.Name); n != 0 {
		t.Errorf("after initial_only exactly_once: the slot is left")
	}
}

// no_data publishes no existing row, but `tributary backfill --table`
// still re-publishes one on request (docs/snapshots.md).
func TestReviewPGNoDataBackfillRequest(t *testing.T) {
	d := itest.PGModeDB(t, "pgnodatabf")
	d.Exec(`CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	d.Insert(1, 5)
	cfg := d.Cfg("  snapshot_mode: no_data\n")
	p := d.E.Start("run", "--config", cfg)
	d.AwaitStarted(t, p)
	if code, out := itest.BackfillCLI(t, d.E, "--config", cfg, "--table", "public.t"); code != 0 {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	p.WaitFor(t, 90*time.Second, "the requested backfill", func() bool {
		return itest.Count(d.Ops(t), func(o string) bool { return strings.HasPrefix(o, "r") }) == 5
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	if got := d.Ops(t); strings.Join(got, ",") != strings.Join(itest.RowsRead(1, 5), ",") {
		t.Errorf("no_data with a backfill request published %v, want r1..r5 once", got)
	}
}

// A first start whose checkpoint store is DynamoDB (the emulator) reads
// "no checkpoint" right: an unreachable source fails at once, as with the
// file store, and the exit message names the address, never the password.
func TestReviewDynamoFirstStartNeverReached(t *testing.T) {
	e := itest.NewEnv(t, "dynunreach")
	awstest.Env(t)
	addr := itest.FreeAddr(t)
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "postgres", URL: "postgres://postgres:s3cret-pw@" + addr + "/" + e.DB,
		Checkpoint: itest.DynamoCheckpoint(itest.TestTableName("dynunreach"))})
	p := e.Start("run", "--config", cfg)
	code := itest.ExitWithin(t, p, 60*time.Second, "a source never reached, DynamoDB store")
	out := p.Out.String()
	if code != 1 || !strings.Contains(itest.LineWith(out, "never reached"), addr) {
		t.Fatalf("exit %d, want 1 naming %s; output:\n%s", code, addr, out)
	}
	if strings.Contains(out, "s3cret-pw") {
		t.Error("the password appears in the output")
	}
}

// when_needed on PostgreSQL with the slot dropped while the pipeline
// runs (its walsender ended, the slot dropped before the reconnect takes
// it again): the running process backfills every table again from a new
// slot and streams on, the row committed after the loss is in the new
// backfill, one slot is left, and a restart resumes from the new
// position (no third backfill: the checkpoint holds no stale state).
func TestReviewPGWhenNeededSlotDroppedWhileRunning(t *testing.T) {
	d := itest.PGModeDB(t, "pgneededlive")
	d.Exec(`CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	d.Insert(1, 10)
	cfg := d.Cfg("  snapshot_mode: when_needed\n")
	p := d.E.Start("run", "--config", cfg)
	p.WaitFor(t, 90*time.Second, "the backfill", func() bool { return len(d.Ops(t)) == 10 })
	d.Insert(11, 11)
	p.WaitFor(t, 60*time.Second, "row 11 streamed", func() bool {
		return itest.Count(d.Ops(t), func(o string) bool { return o == "c11" }) == 1
	})
	slot := "tributary_" + d.E.Name
	ctx := context.Background()
	itest.WaitFor(t, 30*time.Second, "the slot dropped", func() bool {
		d.E.Conn.Exec(ctx, `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NOT NULL`, slot)
		_, err := d.E.Conn.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, slot)
		return err == nil
	})
	d.Insert(12, 12) // after the loss, before the new slot: in the new backfill
	p.WaitFor(t, 90*time.Second, "the second backfill", func() bool {
		return itest.Count(d.Ops(t), func(o string) bool { return strings.HasPrefix(o, "r") }) >= 22
	})
	d.Insert(13, 13)
	p.WaitFor(t, 60*time.Second, "row 13 streamed", func() bool {
		return itest.Count(d.Ops(t), func(o string) bool { return o == "c13" }) == 1
	})
	time.Sleep(1500 * time.Millisecond) // a checkpoint past the second backfill
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	if itest.LineWith(p.Out.String(), "the source position is lost") == "" {
		t.Errorf("no when_needed warning:\n%s", p.Out)
	}
	got := d.Ops(t)
	if n := itest.Count(got, func(o string) bool { return o == "r12" }); n != 1 {
		t.Errorf("row 12, committed after the slot was lost, read %d times by the new backfill, want 1: %v", n, got)
	}
	var slots int
	if err := d.E.Conn.QueryRow(ctx, `SELECT count(*) FROM pg_replication_slots WHERE database = current_database()`).Scan(&slots); err != nil {
		t.Fatal(err)
	}
	if slots != 1 {
		t.Errorf("%d replication slots for the pipeline's database, want 1", slots)
	}

	p = d.E.Start("run", "--config", cfg)
	d.Insert(14, 14)
	p.WaitFor(t, 90*time.Second, "row 14 streamed after a restart", func() bool {
		return itest.Count(d.Ops(t), func(o string) bool { return o == "c14" }) == 1
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	if n := itest.Count(d.Ops(t), func(o string) bool { return strings.HasPrefix(o, "r") }); n != 22 {
		t.Errorf("a restart after the re-backfill published %d rows read, want 22 (no third backfill)", n)
	}
}

// when_needed with source.slot renamed: the checkpoint's slot is another
// one (docs/snapshots.md lists it as a lost position), so the pipeline
// backfills again from the new slot. The old slot, which only this
// pipeline's checkpoint named, is dropped: left behind, it pinned WAL for
// good with nothing ever reading it (the old code kept it).
func TestReviewPGWhenNeededRenamedSlotDropped(t *testing.T) {
	d := itest.PGModeDB(t, "pgneededslot")
	d.Exec(`CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	d.Insert(1, 5)
	p := d.E.Start("run", "--config", d.Cfg("  snapshot_mode: when_needed\n"))
	p.WaitFor(t, 90*time.Second, "the backfill", func() bool { return len(d.Ops(t)) == 5 })
	time.Sleep(1500 * time.Millisecond)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	renamed := "tributary_" + d.E.Name + "_b"
	p = d.E.Start("run", "--config", d.Cfg("  snapshot_mode: when_needed\n  slot: "+renamed+"\n"))
	p.WaitFor(t, 90*time.Second, "the second backfill", func() bool { return len(d.Ops(t)) == 10 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	var slots []string
	rows, err := d.E.Conn.Query(context.Background(), `SELECT slot_name FROM pg_replication_slots WHERE database = current_database() ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		slots = append(slots, s)
	}
	rows.Close()
	if len(slots) != 1 || slots[0] != renamed {
		t.Errorf("replication slots after when_needed moved to %s: %v, want only the new one (the old one pins WAL forever)", renamed, slots)
	}
}

// committedOps is d.Ops read with read_committed: what an exactly_once
// consumer sees.
func committedOps(t *testing.T, d itest.ModeDB) []string {
	t.Helper()
	var out []string
	if itest.TopicEnd(d.Topic) == 0 {
		return out
	}
	itest.EachRecordWithin(t, d.Topic, 60*time.Second, []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()}, func(_ *kgo.Record, m itest.Message) {
		pl := m.Payload()
		row, _ := pl["after"].(map[string]any)
		if row == nil {
			row, _ = pl["before"].(map[string]any)
		}
		out = append(out, fmt.Sprintf("%v%v", pl["op"], row["id"]))
	})
	sort.Strings(out)
	return out
}
