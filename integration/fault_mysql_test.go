package integration

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// faultMariaDBAddr is the private MariaDB of integration/services/faults.sh:
// the fault tests restart and kill it, never the shared one.
const faultMariaDBAddr = "127.0.0.1:3316"

// faults runs integration/services/faults.sh with args.
func faults(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("services/faults.sh", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("faults.sh %v: %v\n%s", args, err, out)
	}
}

// faultMyEnv is a myEnv on the private MariaDB.
func faultMyEnv(t *testing.T, label string) *myEnv {
	skipShort(t)
	faults(t, "mariadb", "up")
	return newMyEnvAt(t, label, faultMariaDBAddr)
}

// faultConfig writes the pipeline's config with the given outage window.
func (e *myEnv) faultConfig(window string) string {
	cfg := fmt.Sprintf(`name: %s
source:
  type: mysql
  url: mysql://root:root@%s/%s
  outage_window: %s
destination:
  bootstrap_servers: %s
  topic_prefix: %s
  disable_tls: true
  create_missing_topics: true
checkpoint:
  path: %s
`, e.name, faultMariaDBAddr, e.db, window, kafkaAddr, e.prefix, filepath.Join(e.dir, "checkpoints"))
	path := filepath.Join(e.dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// writeMySQLFor commits random transactions (writer.tx) on addr for
// d, connecting again while the server is coming back. It is never
// running while the server goes away, so no commit is in doubt.
func (w *writer) writeMySQLFor(t *testing.T, addr, db string, d time.Duration) {
	t.Helper()
	var conn *client.Conn
	var err error
	waitFor(t, 60*time.Second, "the writer's connection", func() bool {
		conn, err = client.Connect(addr, "root", "root", db)
		return err == nil
	})
	defer conn.Close()
	rng := rand.New(rand.NewPCG(42, uint64(time.Now().UnixNano())))
	for end := time.Now().Add(d); time.Now().Before(end); {
		if err := w.tx(mysqlExec(conn), rng); err != nil {
			t.Fatalf("writer: %v", err)
		}
		time.Sleep(time.Duration(rng.IntN(4)) * time.Millisecond)
	}
}

// reconnectedLine matches the text and the JSON form of the line (the pipeline logs
// JSON when its output is not a terminal).
var reconnectedLine = regexp.MustCompile(`source reconnected.*?outage"?[=:]"?([^",\s}]+)`)

// awaitReconnect waits for the n-th "source reconnected" log line and
// returns the outage it reports.
func awaitReconnect(t *testing.T, p *proc, n int) string {
	t.Helper()
	var outage string
	waitFor(t, 90*time.Second, fmt.Sprintf("reconnect %d", n), func() bool {
		if p.exited() {
			t.Fatalf("tributary exited instead of reconnecting: %v\n%s", p.err, p.out)
		}
		m := reconnectedLine.FindAllStringSubmatch(p.out.String(), -1)
		if len(m) >= n {
			outage = m[n-1][1]
			return true
		}
		return false
	})
	return strings.Trim(outage, `"`)
}

// TestMySQLSourceFaults: while a writer commits changes, the binlog
// connection is KILLed and then MariaDB is restarted; the publisher,
// never restarted by hand, reconnects by itself both times (the old code
// exited with "binlog stream: … connection was bad"), reports it on
// /metrics, and the topic holds every committed change. Then an outage
// longer than source.outage_window ends it with exit 1 and the reason,
// and a restart after the server is back resumes with no gap.
func TestMySQLSourceFaults(t *testing.T) {
	e := faultMyEnv(t, "myfault")
	e.exec(`CREATE TABLE ledger (k INT PRIMARY KEY, seq BIGINT NOT NULL, pad VARCHAR(200))`)
	e.exec(`INSERT INTO ledger SELECT seq, seq, REPEAT('x', 100) FROM seq_1_to_200`)
	topic := e.prefix + "." + e.db + ".ledger"
	cfg := e.faultConfig("60s")
	addr := freeAddr(t)
	p := e.start("run", "--config", cfg, "--metrics-addr", addr)
	waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= 200 })
	w := newWriter(200)
	var report []string

	// 1. The binlog dump thread killed (KILL <id>), the writer going on.
	w.writeMySQLFor(t, faultMariaDBAddr, e.db, 2*time.Second)
	r, err := e.my.Execute(`SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'`)
	if err != nil || r.RowNumber() != 1 {
		t.Fatalf("find the binlog dump thread: %v (%d rows)", err, r.RowNumber())
	}
	id, _ := r.GetInt(0, 0)
	e.exec(fmt.Sprintf("KILL %d", id))
	w.writeMySQLFor(t, faultMariaDBAddr, e.db, 2*time.Second)
	report = append(report, "binlog connection killed: recovered in "+awaitReconnect(t, p, 1))

	// 2. MariaDB restarted (clean shutdown, as a maintenance window does);
	// the writer commits while the publisher is reconnecting.
	e.my.Close()
	faults(t, "mariadb", "restart")
	w.writeMySQLFor(t, faultMariaDBAddr, e.db, 3*time.Second)
	report = append(report, "MariaDB restarted: recovered in "+awaitReconnect(t, p, 2))
	if e.my, err = client.Connect(faultMariaDBAddr, "root", "root", e.db); err != nil {
		t.Fatal(err)
	}
	awaitCatchUp(t, topic, int64(200+len(w.committed())))
	body := scrape(t, addr)
	for _, want := range []string{
		fmt.Sprintf(`tributary_source_connected{pipeline=%q} 1`, e.name),
		fmt.Sprintf(`tributary_source_reconnects_total{pipeline=%q} `, e.name),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, fmt.Sprintf(`tributary_source_reconnects_total{pipeline=%q} 0`, e.name)) {
		t.Errorf("/metrics counts no reconnect")
	}
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	if !strings.Contains(p.out.String(), `"class":"retriable"`) && !strings.Contains(p.out.String(), "class=retriable") {
		t.Errorf("the log does not say the error was retriable:\n%s", p.out)
	}

	// 3. An outage longer than the window: exit 1 naming the setting, then
	// a restart once the server is back resumes with no gap.
	cfg = e.faultConfig("3s")
	p = e.start("run", "--config", cfg)
	waitFor(t, 30*time.Second, "streaming", func() bool { return strings.Contains(p.out.String(), "streaming binlog") })
	e.my.Close()
	faults(t, "mariadb", "stop")
	report = append(report, outageExit(t, p, time.Now()))
	faults(t, "mariadb", "up")
	w.writeMySQLFor(t, faultMariaDBAddr, e.db, 2*time.Second)
	p = e.start("run", "--config", cfg)
	if e.my, err = client.Connect(faultMariaDBAddr, "root", "root", e.db); err != nil {
		t.Fatal(err)
	}
	verifyFaultRun(t, p, topic, w, "mysql", report)
}

// verifyFaultRun ends a fault test: the publisher catches up and stops
// gracefully, the report is logged, and the topic must hold every
// committed change of w (duplicates allowed).
func verifyFaultRun(t *testing.T, p *proc, topic string, w *writer, label string, report []string) {
	t.Helper()
	awaitCatchUp(t, topic, int64(200+len(w.committed())))
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	res := verifyOracle(t, topic, w)
	for _, l := range report {
		t.Log(l)
	}
	t.Logf("%s faults: %d committed changes, %s", label, len(w.committed()), res)
	if res.gaps > 0 {
		t.Fatalf("%d gaps", res.gaps)
	}
}

// TestMySQLBackfillFault restarts MariaDB in the middle of a backfill: the
// publisher reconnects by itself, resumes the backfill and publishes
// every row (duplicates allowed, no gaps).
func TestMySQLBackfillFault(t *testing.T) {
	e := faultMyEnv(t, "mybffault")
	const rows = 150000
	e.exec(`CREATE TABLE bulk (k INT PRIMARY KEY, pad VARCHAR(200))`)
	e.exec(fmt.Sprintf(`INSERT INTO bulk SELECT seq, REPEAT('y', 100) FROM seq_1_to_%d`, rows))
	e.my.Close()
	topic := e.prefix + "." + e.db + ".bulk"
	p := e.start("run", "--config", e.faultConfig("60s"))
	waitFor(t, 60*time.Second, "the backfill to start", func() bool { return topicEnd(topic) > 0 })
	at := topicEnd(topic)
	faults(t, "mariadb", "restart")
	outage := awaitReconnectOrStream(t, p)
	verifyBackfillFault(t, p, topic, rows, fmt.Sprintf("MariaDB restarted mid-backfill (after %d of %d rows): %s", at, rows, outage))
}

// mysqlExec runs the writer's statements on a MySQL connection.
func mysqlExec(conn *client.Conn) func(string) error {
	return func(q string) error { _, err := conn.Execute(q); return err }
}
