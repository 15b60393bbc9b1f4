package faults_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/status"
)

// blockedHost is the address the blocked-port tests' pipelines reach the
// private servers of faults.sh by. The servers listen on 127.0.0.1 too:
// the test's writer commits through that address while the pipeline's
// packets are dropped.
const blockedHost = "127.0.0.2"

// portBlock drops the packets between the pipeline and one private server
// port (to blockedHost:port and back from it), established connections
// included, with integration/services/portblock.sh (tc filters on lo; the
// Kafka cluster's `cut` uses it too, each block with filters of its own).
type portBlock struct{ port int }

func newPortBlock(t *testing.T, port int) *portBlock {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("blocking a port with tc needs root")
	}
	if _, err := exec.LookPath("tc"); err != nil {
		t.Skip("blocking a port needs tc (iproute2)")
	}
	b := &portBlock{port: port}
	b.restore(t) // a leftover of an interrupted run
	t.Cleanup(func() { b.restore(t) })
	return b
}

// Drop starts dropping the packets, without RST or FIN: to the peers the
// connections look open and silent.
func (b *portBlock) Drop(t *testing.T) {
	t.Helper()
	portBlockScript(t, "drop", blockedHost, fmt.Sprint(b.port))
}

// restore lets the packets through again (only this block's).
func (b *portBlock) restore(t *testing.T) {
	t.Helper()
	portBlockScript(t, "restore", fmt.Sprint(b.port))
}

func portBlockScript(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("services/portblock.sh", args...).CombinedOutput(); err != nil {
		t.Fatalf("portblock.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// retarget rewrites the pipeline config at path to reach the server at
// the address to instead of from.
func retarget(t *testing.T, path, from, to string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), from) {
		t.Fatalf("%s does not name %s", path, from)
	}
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(b), from, to)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// blockedSource is what the scenario needs of one source type.
type blockedSource struct {
	label  string
	port   int
	topic  string
	config func(window string) string // a pipeline config reaching the server by blockedHost
	// write commits random transactions (through 127.0.0.1) until ctx
	// ends, and returns the writer's error.
	write func(ctx context.Context, w *itest.LedgerWriter) error
}

// background runs s.write until the returned stop is called.
func (s blockedSource) background(t *testing.T, w *itest.LedgerWriter) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.write(ctx, w) }()
	return func() {
		t.Helper()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
}

// lostLine is the reconnect loop's log line for a lost connection.
const lostLine = "source connection lost; reconnecting"

// blockedPortScenario: with a writer committing all along, the packets
// between the pipeline and its source are dropped for 20 s (no RST, no
// FIN: the connection just goes silent), then let through again. The
// publisher, never restarted by hand, notices the dead connection by
// itself, says why in the log (retriable), shows "reconnecting" in
// status, reconnects once the packets flow and shows "streaming". Then
// packets are dropped for longer than a short outage window: exit 1
// naming source.outage_window, and a restart publishes every committed
// change (the oracle finds no gap); that part, about a minute per source,
// runs with TRIBUTARY_FAULTS_LONG set (`make faults`).
func blockedPortScenario(t *testing.T, e *itest.Env, s blockedSource) {
	b := newPortBlock(t, s.port)
	w := itest.NewLedgerWriter(200)
	var report []string

	cfg := s.config("60s")
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(s.topic) >= 200 })
	stopWriter := s.background(t, w)
	time.Sleep(2 * time.Second)

	// 1. Dropped for 20 s: detected, reported, ridden out.
	b.Drop(t)
	blocked := time.Now()
	itest.WaitFor(t, 60*time.Second, "the dead connection to be noticed", func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited during a 20 s block:\n%s", p.Out)
		}
		return strings.Contains(p.Out.String(), lostLine)
	})
	detected := time.Since(blocked)
	// The live record is refreshed every status.Interval (2 s), and the
	// pipeline may first drain what it had received before the drop: the
	// packets stay dropped until status has said so (and 20 s at least).
	var raw string
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		var r status.Report
		r, raw = itest.StatusJSON(t, e, cfg)
		if r.Live != nil && r.Live.Source != nil && r.Live.Source.State == source.ConnReconnecting &&
			r.Live.Source.LastErrorClass == "retriable" && r.Live.Source.LastError != "" && r.Live.Source.Attempts > 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("status --json did not say reconnecting with the retriable error within 60 s of a lost connection:\n%s\noutput:\n%s", raw, p.Out)
		}
	}
	t.Logf("status --json while blocked, source: %s", raw[strings.Index(raw, `"source"`):])
	if txt := itest.StatusText(t, e, cfg); !strings.Contains(txt, "RECONNECTING since") || !strings.Contains(txt, "(retriable)") {
		t.Errorf("status while the port is blocked:\n%s", txt)
	}
	time.Sleep(time.Until(blocked.Add(20 * time.Second)))
	b.restore(t)
	restored := time.Now()
	outage := itest.AwaitReconnect(t, p, 1)
	recovered := time.Since(restored)
	itest.WaitFor(t, 30*time.Second, "status to say streaming", func() bool {
		r, _ := itest.StatusJSON(t, e, cfg)
		return r.Live != nil && r.Live.Source != nil && r.Live.Source.State == source.ConnStreaming
	})
	why := firstLineWith(p.Out.String(), lostLine)
	for _, l := range strings.Split(p.Out.String(), "\n") {
		if strings.Contains(l, `"msg":"source `) || strings.Contains(l, "streaming binlog") {
			t.Log(l)
		}
	}
	if !strings.Contains(why, "retriable") {
		t.Errorf("the log does not say the lost connection was retriable: %s", why)
	}
	report = append(report, fmt.Sprintf("packets dropped %s: noticed after %s, reconnected %s after the packets flowed again (outage %s); first log line: %s",
		restored.Sub(blocked).Round(100*time.Millisecond), detected.Round(100*time.Millisecond), recovered.Round(100*time.Millisecond), outage, why))
	stopWriter()
	if os.Getenv("TRIBUTARY_FAULTS_LONG") == "" {
		// `make test` stops here (the exit past the window is also
		// covered by the server-stopped faults); `make faults` goes on.
		verifyFaultRun(t, p, s.topic, w, s.label+" blocked port", report)
		return
	}
	itest.AwaitCatchUp(t, s.topic, int64(200+len(w.Committed())))
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}

	// 2. Dropped for longer than a 5 s window: exit 1, then a restart
	// once the packets flow resumes with no gap (TRIBUTARY_FAULTS_LONG).
	cfg = s.config("5s")
	p = e.Start("run", "--config", cfg)
	itest.WaitFor(t, 30*time.Second, "a reconnected start", func() bool { return strings.Contains(p.Out.String(), "resuming from checkpoint") })
	stopWriter = s.background(t, w)
	time.Sleep(2 * time.Second)
	b.Drop(t)
	blocked = time.Now()
	select {
	case <-p.Done:
	case <-time.After(120 * time.Second):
		t.Fatalf("still running 120 s into a blocked port with a 5 s window:\n%s", p.Out)
	}
	if code := p.Cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(p.Out.String(), "outage_window") {
		t.Fatalf("exit %d with the port blocked past the window, want 1 and a message naming source.outage_window:\n%s", code, p.Out)
	}
	report = append(report, fmt.Sprintf("packets dropped past the 5 s window: exit 1 after %s: %s",
		time.Since(blocked).Round(100*time.Millisecond), itest.LineWith(p.Out.String(), "outage_window")))
	b.restore(t)
	time.Sleep(2 * time.Second)
	stopWriter()
	p = e.Start("run", "--config", s.config("60s"))
	verifyFaultRun(t, p, s.topic, w, s.label+" blocked port", report)
}

// firstLineWith returns the first line of out that contains s.
func firstLineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestPostgresBlockedPort runs blockedPortScenario on PostgreSQL: the
// replication stream's silence limit (wal_sender_timeout, 10 s on the
// private server) finds the dead connection. The old code waited on it
// for as long as the kernel kept the socket (hours without keepalive).
func TestPostgresBlockedPort(t *testing.T) {
	e := faultPgEnv(t, "pgblock")
	e.FaultPgSQL(`CREATE TABLE ledger (k int PRIMARY KEY, seq bigint NOT NULL, pad text);
ALTER TABLE ledger REPLICA IDENTITY FULL;
INSERT INTO ledger SELECT g, g, repeat('x', 100) FROM generate_series(1, 200) g`)
	blockedPortScenario(t, e, blockedSource{
		label: "postgres",
		port:  5442,
		topic: e.Prefix + ".public.ledger",
		config: func(window string) string {
			return retarget(t, e.FaultPgConfig(window), "127.0.0.1:5442", blockedHost+":5442")
		},
		write: func(ctx context.Context, w *itest.LedgerWriter) error {
			conn, err := pgx.Connect(context.Background(), e.FaultPgURL())
			if err != nil {
				return err
			}
			defer conn.Close(context.Background())
			rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
			for ctx.Err() == nil { // a transaction is never cut short: its outcome is known
				if err := w.Tx(itest.PGExec(context.Background(), conn), rng); err != nil {
					return err
				}
				time.Sleep(time.Duration(rng.IntN(4)) * time.Millisecond)
			}
			return nil
		},
	})
}

// TestMySQLBlockedPort runs blockedPortScenario on MariaDB: the binlog
// read timeout (three missed server heartbeats) finds the dead
// connection. The old code waited 60 s.
func TestMySQLBlockedPort(t *testing.T) {
	e := itest.FaultMyEnv(t, "myblock")
	e.Exec(`CREATE TABLE ledger (k INT PRIMARY KEY, seq BIGINT NOT NULL, pad VARCHAR(200))`)
	e.Exec(`INSERT INTO ledger SELECT seq, seq, REPEAT('x', 100) FROM seq_1_to_200`)
	blockedPortScenario(t, e.Env, blockedSource{
		label: "mysql",
		port:  3316,
		topic: e.Prefix + "." + e.DB + ".ledger",
		config: func(window string) string {
			return retarget(t, e.FaultConfig(window), itest.FaultMariaDBAddr, blockedHost+":3316")
		},
		write: func(ctx context.Context, w *itest.LedgerWriter) error {
			conn, err := client.Connect(itest.FaultMariaDBAddr, "root", "root", e.DB)
			if err != nil {
				return err
			}
			defer conn.Close()
			rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
			for ctx.Err() == nil {
				if err := w.Tx(itest.MysqlExec(conn), rng); err != nil {
					return err
				}
				time.Sleep(time.Duration(rng.IntN(4)) * time.Millisecond)
			}
			return nil
		},
	})
}
