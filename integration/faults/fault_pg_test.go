package faults_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/jackc/pgx/v5"
)

// faultPgAdmin is the private PostgreSQL of integration/services/faults.sh:
// the fault tests restart it and end its backends, never the shared one's.
const faultPgAdmin = "postgres://postgres:postgres@127.0.0.1:5442/postgres"

// faultPgEnv is an env on the private PostgreSQL.
func faultPgEnv(t *testing.T, label string) *itest.Env {
	itest.SkipShort(t)
	itest.Faults(t, "postgres", "up")
	e := itest.BareEnv(t, label)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, faultPgAdmin)
	if err != nil {
		t.Fatalf("connect to the fault PostgreSQL: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+e.DB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin, err := pgx.Connect(context.Background(), faultPgAdmin)
		if err != nil {
			return
		}
		defer admin.Close(context.Background())
		for i := 0; i < 40; i++ {
			if _, err = admin.Exec(context.Background(), `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, e.DB); err == nil {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+e.DB+" WITH (FORCE)")
	})
	return e
}

// TestPostgresSourceFaults: while a writer commits changes, the pipeline's
// walsender is ended with pg_terminate_backend, then PostgreSQL is
// restarted fast and then immediate (a crash); the publisher, never
// restarted by hand, reconnects by itself each time (the old code exited
// with "FATAL: terminating connection due to administrator command" or
// "receive message failed: unexpected EOF"), and the topic holds every
// committed change. Then an outage longer than source.outage_window ends
// it with exit 1, and a restart once the server is back has no gap.
func TestPostgresSourceFaults(t *testing.T) {
	e := faultPgEnv(t, "pgfault")
	e.FaultPgSQL(`CREATE TABLE ledger (k int PRIMARY KEY, seq bigint NOT NULL, pad text);
ALTER TABLE ledger REPLICA IDENTITY FULL;
INSERT INTO ledger SELECT g, g, repeat('x', 100) FROM generate_series(1, 200) g`)
	topic := e.Prefix + ".public.ledger"
	cfg := e.FaultPgConfig("60s")
	addr := itest.FreeAddr(t)
	p := e.Start("run", "--config", cfg, "--metrics-addr", addr)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 200 })
	w := itest.NewLedgerWriter(200)
	url := e.FaultPgURL()
	var report []string

	// 1. The walsender ended (pg_terminate_backend, Debezium's own test).
	w.WritePgFor(t, url, 2*time.Second)
	e.FaultPgSQL(fmt.Sprintf(`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'tributary_%s'`, e.Name))
	w.WritePgFor(t, url, 2*time.Second)
	report = append(report, "walsender terminated: recovered in "+itest.AwaitReconnect(t, p, 1))

	// 2. Restarted fast (a maintenance window), then immediate (a crash).
	for i, mode := range []string{"restart-fast", "restart-immediate"} {
		w.WritePgFor(t, url, time.Second)
		itest.Faults(t, "postgres", mode)
		w.WritePgFor(t, url, 2*time.Second)
		report = append(report, "PostgreSQL "+mode+": recovered in "+itest.AwaitReconnect(t, p, 2+i))
	}
	itest.AwaitCatchUp(t, topic, int64(200+len(w.Committed())))
	body := itest.Scrape(t, addr)
	if want := fmt.Sprintf(`tributary_source_connected{pipeline=%q} 1`, e.Name); !strings.Contains(body, want) {
		t.Errorf("/metrics lacks %q:\n%s", want, body)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}

	// 3. An outage longer than the window: exit 1, then a restart resumes.
	cfg = e.FaultPgConfig("3s")
	p = e.Start("run", "--config", cfg)
	itest.WaitFor(t, 30*time.Second, "streaming", func() bool { return strings.Contains(p.Out.String(), "resuming from checkpoint") })
	time.Sleep(time.Second)
	itest.Faults(t, "postgres", "stop")
	report = append(report, outageExit(t, p, time.Now()))
	itest.Faults(t, "postgres", "up")
	w.WritePgFor(t, url, 2*time.Second)
	p = e.Start("run", "--config", cfg)
	verifyFaultRun(t, p, topic, w, "postgres", report)
}

// TestPostgresBackfillFault restarts PostgreSQL (immediate: a crash) in
// the middle of a backfill: the publisher reconnects by itself, resumes
// the backfill and publishes every row (duplicates allowed, no gaps).
func TestPostgresBackfillFault(t *testing.T) {
	e := faultPgEnv(t, "pgbffault")
	const rows = 150000
	e.FaultPgSQL(fmt.Sprintf(`CREATE TABLE bulk (k int PRIMARY KEY, pad text);
INSERT INTO bulk SELECT g, repeat('y', 100) FROM generate_series(1, %d) g`, rows))
	topic := e.Prefix + ".public.bulk"
	p := e.Start("run", "--config", e.FaultPgConfig("60s"))
	itest.WaitFor(t, 60*time.Second, "the backfill to start", func() bool { return itest.TopicEnd(topic) > 0 })
	at := itest.TopicEnd(topic)
	itest.Faults(t, "postgres", "restart-immediate")
	outage := awaitReconnectOrStream(t, p)
	verifyBackfillFault(t, p, topic, rows, fmt.Sprintf("postgres restarted mid-backfill (after %d of %d rows): %s", at, rows, outage))
}

// verifyBackfillFault ends a backfill fault test: it waits for the
// engine to finish the table (the topic's end offset alone can reach the
// row count early, since a resumed chunk is published twice), stops the
// publisher gracefully and requires every key in the topic.
func verifyBackfillFault(t *testing.T, p *itest.Proc, topic string, rows int, what string) {
	t.Helper()
	itest.WaitFor(t, 180*time.Second, "the whole backfill", func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
		}
		return strings.Contains(p.Out.String(), "snapshot: table done")
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	// Some 150,000 messages or more: read with room for a loaded machine
	// (ReadTopic's minute ran out there), counting keys only.
	keys := map[int64]bool{}
	n := 0
	itest.EachMessageWithin(t, topic, 5*time.Minute, func(m itest.Message) {
		keys[int64(m.Key["payload"].(map[string]any)["k"].(float64))] = true
		n++
	})
	t.Logf("%s; %d messages, %d distinct keys, %d duplicates", what, n, len(keys), n-len(keys))
	if len(keys) != rows {
		t.Fatalf("%d of %d rows published: %d gaps", len(keys), rows, rows-len(keys))
	}
}

// awaitReconnectOrStream waits for the first "source reconnected" line
// (or, when the fault struck before anything was read, the stream) and
// says which.
func awaitReconnectOrStream(t *testing.T, p *itest.Proc) string {
	t.Helper()
	var what string
	itest.WaitFor(t, 90*time.Second, "the reconnect", func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited instead of reconnecting: %v\n%s", p.Err, p.Out)
		}
		if m := itest.ReconnectedLine.FindStringSubmatch(p.Out.String()); m != nil {
			what = "recovered in " + strings.Trim(m[1], `"`)
			return true
		}
		return false
	})
	return what
}

// outageExit waits for p, which lost its source at stopped, to exit on an
// outage longer than its 3 s window (exit 1, the message naming the
// setting), and says after how long, for the report.
func outageExit(t *testing.T, p *itest.Proc, stopped time.Time) string {
	t.Helper()
	select {
	case <-p.Done:
	case <-time.After(60 * time.Second):
		t.Fatalf("still running 60 s into an outage with a 3 s window:\n%s", p.Out)
	}
	if code := p.Cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(p.Out.String(), "outage_window") {
		t.Fatalf("exit %d after the outage window, want 1 and a message naming source.outage_window:\n%s", code, p.Out)
	}
	return fmt.Sprintf("outage over the 3 s window: exit 1 after %s", time.Since(stopped).Round(100*time.Millisecond))
}
