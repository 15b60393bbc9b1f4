package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// faultPgAdmin is the private PostgreSQL of integration/services/faults.sh:
// the fault tests restart it and end its backends, never the shared one's.
const faultPgAdmin = "postgres://postgres:postgres@127.0.0.1:5442/postgres"

// faultPgEnv is an env on the private PostgreSQL.
func faultPgEnv(t *testing.T, label string) *env {
	skipShort(t)
	faults(t, "postgres", "up")
	id := fmt.Sprintf("%s_%d_%04d", label, os.Getpid()%100000, rand.IntN(10000))
	e := &env{t: t, name: id, db: "it_" + id, prefix: "it-" + strings.ReplaceAll(id, "_", "-"), dir: t.TempDir()}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, faultPgAdmin)
	if err != nil {
		t.Fatalf("connect to the fault PostgreSQL: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+e.db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin, err := pgx.Connect(context.Background(), faultPgAdmin)
		if err != nil {
			return
		}
		defer admin.Close(context.Background())
		for i := 0; i < 40; i++ {
			if _, err = admin.Exec(context.Background(), `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, e.db); err == nil {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+e.db+" WITH (FORCE)")
	})
	return e
}

func (e *env) faultPgURL() string { return "postgres://postgres:postgres@127.0.0.1:5442/" + e.db }

// faultPgSQL runs sql on the fault server's database, connecting anew (the
// server may just have restarted).
func (e *env) faultPgSQL(sql string) {
	e.t.Helper()
	var conn *pgx.Conn
	var err error
	waitFor(e.t, 60*time.Second, "a connection to the fault PostgreSQL", func() bool {
		conn, err = pgx.Connect(context.Background(), e.faultPgURL())
		return err == nil
	})
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
}

func (e *env) faultPgConfig(window string) string {
	cfg := fmt.Sprintf(`name: %s
source:
  type: postgres
  url: %s
  outage_window: %s
destination:
  bootstrap_servers: %s
  topic_prefix: %s
  disable_tls: true
  create_missing_topics: true
checkpoint:
  path: %s
`, e.name, e.faultPgURL(), window, kafkaAddr, e.prefix, filepath.Join(e.dir, "checkpoints"))
	path := filepath.Join(e.dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// writePgFor commits random transactions (writer.tx) for d. It is never
// running while the server goes away, so no commit is in doubt.
func (w *writer) writePgFor(t *testing.T, url string, d time.Duration) {
	t.Helper()
	w.run(context.Background(), t, url, d)
	if w.err != nil {
		t.Fatal(w.err)
	}
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
	e.faultPgSQL(`CREATE TABLE ledger (k int PRIMARY KEY, seq bigint NOT NULL, pad text);
ALTER TABLE ledger REPLICA IDENTITY FULL;
INSERT INTO ledger SELECT g, g, repeat('x', 100) FROM generate_series(1, 200) g`)
	topic := e.prefix + ".public.ledger"
	cfg := e.faultPgConfig("60s")
	addr := freeAddr(t)
	p := e.start("run", "--config", cfg, "--metrics-addr", addr)
	waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= 200 })
	w := newWriter(200)
	url := e.faultPgURL()
	var report []string

	// 1. The walsender ended (pg_terminate_backend, Debezium's own test).
	w.writePgFor(t, url, 2*time.Second)
	e.faultPgSQL(fmt.Sprintf(`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'tributary_%s'`, e.name))
	w.writePgFor(t, url, 2*time.Second)
	report = append(report, "walsender terminated: recovered in "+awaitReconnect(t, p, 1))

	// 2. Restarted fast (a maintenance window), then immediate (a crash).
	for i, mode := range []string{"restart-fast", "restart-immediate"} {
		w.writePgFor(t, url, time.Second)
		faults(t, "postgres", mode)
		w.writePgFor(t, url, 2*time.Second)
		report = append(report, "PostgreSQL "+mode+": recovered in "+awaitReconnect(t, p, 2+i))
	}
	awaitCatchUp(t, topic, int64(200+len(w.committed())))
	body := scrape(t, addr)
	if want := fmt.Sprintf(`tributary_source_connected{pipeline=%q} 1`, e.name); !strings.Contains(body, want) {
		t.Errorf("/metrics lacks %q:\n%s", want, body)
	}
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}

	// 3. An outage longer than the window: exit 1, then a restart resumes.
	cfg = e.faultPgConfig("3s")
	p = e.start("run", "--config", cfg)
	waitFor(t, 30*time.Second, "streaming", func() bool { return strings.Contains(p.out.String(), "resuming from checkpoint") })
	time.Sleep(time.Second)
	faults(t, "postgres", "stop")
	report = append(report, outageExit(t, p, time.Now()))
	faults(t, "postgres", "up")
	w.writePgFor(t, url, 2*time.Second)
	p = e.start("run", "--config", cfg)
	verifyFaultRun(t, p, topic, w, "postgres", report)
}

// TestPostgresBackfillFault restarts PostgreSQL (immediate: a crash) in
// the middle of a backfill: the publisher reconnects by itself, resumes
// the backfill and publishes every row (duplicates allowed, no gaps).
func TestPostgresBackfillFault(t *testing.T) {
	e := faultPgEnv(t, "pgbffault")
	const rows = 150000
	e.faultPgSQL(fmt.Sprintf(`CREATE TABLE bulk (k int PRIMARY KEY, pad text);
INSERT INTO bulk SELECT g, repeat('y', 100) FROM generate_series(1, %d) g`, rows))
	topic := e.prefix + ".public.bulk"
	p := e.start("run", "--config", e.faultPgConfig("60s"))
	waitFor(t, 60*time.Second, "the backfill to start", func() bool { return topicEnd(topic) > 0 })
	at := topicEnd(topic)
	faults(t, "postgres", "restart-immediate")
	outage := awaitReconnectOrStream(t, p)
	verifyBackfillFault(t, p, topic, rows, fmt.Sprintf("postgres restarted mid-backfill (after %d of %d rows): %s", at, rows, outage))
}

// verifyBackfillFault ends a backfill fault test: it waits for the
// engine to finish the table (the topic's end offset alone can reach the
// row count early, since a resumed chunk is published twice), stops the
// publisher gracefully and requires every key in the topic.
func verifyBackfillFault(t *testing.T, p *proc, topic string, rows int, what string) {
	t.Helper()
	waitFor(t, 180*time.Second, "the whole backfill", func() bool {
		if p.exited() {
			t.Fatalf("tributary exited: %v\n%s", p.err, p.out)
		}
		return strings.Contains(p.out.String(), "snapshot: table done")
	})
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	keys := map[int64]bool{}
	msgs := readTopic(t, topic)
	for _, m := range msgs {
		keys[int64(m.Key["payload"].(map[string]any)["k"].(float64))] = true
	}
	t.Logf("%s; %d messages, %d distinct keys, %d duplicates", what, len(msgs), len(keys), len(msgs)-len(keys))
	if len(keys) != rows {
		t.Fatalf("%d of %d rows published: %d gaps", len(keys), rows, rows-len(keys))
	}
}

// awaitReconnectOrStream waits for the first "source reconnected" line
// (or, when the fault struck before anything was read, the stream) and
// says which.
func awaitReconnectOrStream(t *testing.T, p *proc) string {
	t.Helper()
	var what string
	waitFor(t, 90*time.Second, "the reconnect", func() bool {
		if p.exited() {
			t.Fatalf("tributary exited instead of reconnecting: %v\n%s", p.err, p.out)
		}
		if m := reconnectedLine.FindStringSubmatch(p.out.String()); m != nil {
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
func outageExit(t *testing.T, p *proc, stopped time.Time) string {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("still running 60 s into an outage with a 3 s window:\n%s", p.out)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(p.out.String(), "outage_window") {
		t.Fatalf("exit %d after the outage window, want 1 and a message naming source.outage_window:\n%s", code, p.out)
	}
	return fmt.Sprintf("outage over the 3 s window: exit 1 after %s", time.Since(stopped).Round(100*time.Millisecond))
}
